package io.weir.datanode;

import java.net.InetSocketAddress;

/**
 * The node's one reading of a {@code host:port} address: the {@code --listen} and
 * {@code --replication-listen} options ({@link DataNodeCommand}) and a copy's replication address
 * from the config ({@link ReplicaLink}). The port follows the last colon; an IPv6 host may be
 * written in brackets ({@code [::1]:10810}), which are stripped.
 */
final class HostPort {

    private HostPort() {
    }

    /**
     * The address {@code hostPort} names, its host resolved.
     *
     * @throws IllegalArgumentException if it has no colon, or its port is not a number from 0 to
     *     65535; the message quotes it
     */
    static InetSocketAddress parse(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("not host:port (no colon): " + hostPort);
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not host:port (the port is not a number): " + hostPort);
        }
        if (port < 0 || port > 0xFFFF) {
            throw new IllegalArgumentException("not host:port (the port is out of range): " + hostPort);
        }
        return new InetSocketAddress(host, port);
    }
}
