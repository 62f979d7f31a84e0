package io.weir.datanode;

import java.nio.ByteBuffer;
import java.security.cert.X509Certificate;
import java.util.UUID;
import javax.net.ssl.SSLContext;

/**
 * A connection's client as TLS knows it: the switch to TLS at NBD_OPT_STARTTLS, with the checks
 * that keep bytes sent in clear out of the session (CVE-2021-3716); the tenant its certificate
 * names, admitted under the per-tenant cap ({@link NbdServer#admitTenant}); and its
 * disconnection when a new config revokes the certificate.
 *
 * <p>Implementation notes: selector thread only, as the connection's handshake; one per
 * {@link NbdConnection}, whose receive buffer, output and transport it looks at.
 */
final class NbdTlsPeer {

    private final NbdConnection conn;
    private final NbdServer server;
    private final NbdTransport transport;
    private final NbdReplies replies;
    /** The connection's receive buffer, in read mode while an option is decoded. */
    private final ByteBuffer in;
    /** The tenant whose exports the client sees (from its certificate), once known. */
    private UUID tenant;
    /** The end of the certificate it was admitted with, when the connection ends; null before. */
    private java.time.Instant notAfter;

    NbdTlsPeer(NbdConnection conn, NbdServer server, NbdTransport transport, NbdReplies replies, ByteBuffer in) {
        this.conn = conn;
        this.server = server;
        this.transport = transport;
        this.replies = replies;
        this.in = in;
    }

    /**
     * NBD_OPT_STARTTLS was acknowledged (while decoding it): from the next byte on, the
     * connection speaks TLS. The acknowledgement must have reached the socket in clear, and the
     * client must not have sent anything after the option: bytes it sent before the TLS handshake
     * would otherwise be read as if they came through it (CVE-2021-3716), so they close the
     * connection. Answers whether TLS was started.
     */
    boolean start(SSLContext context) {
        if (!replies.isEmpty()) {
            conn.abort("the STARTTLS acknowledgement could not be sent in clear");
            return false;
        }
        if (in.hasRemaining()) {
            conn.abort("the client sent data after NBD_OPT_STARTTLS before the TLS handshake");
            return false;
        }
        transport.startTls(context, server.pool);
        return true;
    }

    /** Whether the connection speaks TLS. */
    boolean isTls() {
        return transport.isTls();
    }

    /**
     * The id of the tenant whose exports this client sees, from its certificate once the TLS
     * handshake is done (admitted under the per-tenant cap then, or the connection is closed);
     * null while unknown, or when the certificate belongs to no tenant here.
     */
    UUID tenant() {
        if (tenant == null && !replies.isClosed()) {
            X509Certificate peer = transport.peerCertificate();
            UUID named = peer == null ? null : server.tls.tenantOf(peer);
            if (named != null) {
                if (!server.admitTenant(named)) {
                    conn.abort("tenant " + named + " has " + server.limits.maxConnectionsPerSource()
                            + " connections open, the maximum for one tenant");
                    return null;
                }
                tenant = named;
                notAfter = peer.getNotAfter().toInstant();
            }
        }
        return tenant;
    }

    /**
     * Selector thread, each tick ({@link NbdConnection#checkStalled}): a client admitted with a
     * certificate that has passed its end, by the node's clock, is disconnected; a config change
     * ({@link #revalidate}) is not needed for that.
     */
    void checkExpiry() {
        if (notAfter != null && server.tls.past(notAfter)) {
            conn.abort("its client certificate ended at " + notAfter);
            notAfter = null;
        }
    }

    /** The tenant this connection is counted under ({@link NbdServer#admitTenant}), or null. */
    UUID admitted() {
        return tenant;
    }

    /**
     * After a config changed whom the node lets in: a client whose certificate was revoked (or no
     * longer belongs to a tenant here, or now to another one) is disconnected at once, also in
     * transmission.
     */
    void revalidate() {
        X509Certificate peer = transport.peerCertificate();
        if (peer == null || replies.isClosed()) {
            return;
        }
        UUID named = server.tls.tenantOf(peer);
        if (named == null || tenant != null && !named.equals(tenant)) {
            conn.abort("its client certificate was revoked or is no longer valid here");
        }
    }
}
