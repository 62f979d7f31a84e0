package io.weir.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay on 127.0.0.1 in front of a server (a control plane for agents, a copy's replication
 * listener for a primary), which a test can freeze (bytes are held, connections stay open: a
 * half-open link, or a message caught in flight), hold one way and later release (the server's
 * answers are kept back, then sent on), cut (every connection reset), point at another upstream
 * port, or stop listening (the server's address is down). Clients connect to {@link #port()},
 * which stays the same throughout.
 */
public final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Relay> downstreams = new CopyOnWriteArrayList<>();
    private volatile int upstreamPort;
    private volatile boolean frozen;
    private volatile boolean downstreamHeld;
    private volatile boolean refusing;

    /** A relay to {@code upstreamPort} on the loopback address. */
    /** Bytes relayed from the clients to the server. */
    private final java.util.concurrent.atomic.AtomicLong upstreamBytes = new java.util.concurrent.atomic.AtomicLong();

    /** How many bytes the clients sent the server through the proxy (relayed, not held or lost). */
    public long upstreamBytes() {
        return upstreamBytes.get();
    }

    public TcpProxy(int upstreamPort) {
        this.upstreamPort = upstreamPort;
        try {
            server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::accept, "tcp-proxy-accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The port clients connect to. */
    public int port() {
        return server.getLocalPort();
    }

    /** The proxy's address as "host:port". */
    public String address() {
        return server.getInetAddress().getHostAddress() + ":" + port();
    }

    /** Relays new connections to {@code port} from now on. */
    public void retarget(int port) {
        this.upstreamPort = port;
    }

    /** Holds every byte in both directions; connections stay open. What the clients sent is lost. */
    public synchronized void freeze() {
        frozen = true;
    }

    /**
     * Holds every byte from the server to the clients, while the clients' bytes still reach the
     * server: what the server answers is kept here (an answer caught in flight) until
     * {@link #releaseDownstream()} or {@link #cut()}.
     */
    public synchronized void holdDownstream() {
        downstreamHeld = true;
    }

    /**
     * Sends what was held from the server on to each client, in order, and relays its bytes again
     * (not after {@link #freeze()}, whose bytes from the clients are lost).
     */
    public synchronized void releaseDownstream() {
        for (Relay r : downstreams) {
            r.release();
        }
        downstreamHeld = false;
    }

    /** What the server sent the clients while held, as text (for assertions). */
    public synchronized String heldFromUpstream() {
        StringBuilder all = new StringBuilder();
        for (Relay r : downstreams) {
            all.append(r.held.toString(StandardCharsets.ISO_8859_1));
        }
        return all.toString();
    }

    /** How many bytes the server sent the clients while held, not yet released. */
    public synchronized long heldDownstreamBytes() {
        return downstreams.stream().mapToLong(r -> r.held.size()).sum();
    }

    /** New connections are accepted and closed at once (nothing listens behind the address). */
    public void refuse(boolean refuse) {
        this.refusing = refuse;
    }

    /** Resets every relayed connection and forgets what was held; then relays normally again. */
    public synchronized void cut() {
        for (Socket s : sockets) {
            try {
                s.setSoLinger(true, 0);
                s.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
        sockets.clear();
        downstreams.clear();
        frozen = false;
        downstreamHeld = false;
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return;
            }
            if (refusing) {
                closeQuietly(client);
                continue;
            }
            try {
                Socket upstream = new Socket();
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), upstreamPort), 5000);
                sockets.add(client);
                sockets.add(upstream);
                new Relay(client, upstream, false).start();
                Relay down = new Relay(upstream, client, true);
                downstreams.add(down);
                down.start();
            } catch (IOException e) {
                closeQuietly(client);
            }
        }
    }

    /** One direction of one connection. */
    private final class Relay {
        private final Socket from;
        private final Socket to;
        private final boolean downstream;
        /** Bytes from the server held back (guarded by the proxy). */
        private final ByteArrayOutputStream held = new ByteArrayOutputStream();

        Relay(Socket from, Socket to, boolean downstream) {
            this.from = from;
            this.to = to;
            this.downstream = downstream;
        }

        void start() {
            Thread t = new Thread(this::run, downstream ? "tcp-proxy-down" : "tcp-proxy-up");
            t.setDaemon(true);
            t.start();
        }

        private void run() {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    synchronized (TcpProxy.this) {
                        if (frozen || (downstream && downstreamHeld)) {
                            if (downstream) {
                                held.write(buf, 0, n);
                            }
                            continue;
                        }
                    }
                    // Released bytes were written under the proxy's lock before the flag fell,
                    // so these follow them.
                    out.write(buf, 0, n);
                    out.flush();
                    if (!downstream) {
                        upstreamBytes.addAndGet(n);
                    }
                }
            } catch (SocketException e) {
                // reset or closed by cut()
            } catch (IOException e) {
                // the other side went away
            } finally {
                if (!frozen) {
                    closeQuietly(from);
                    closeQuietly(to);
                }
            }
        }

        /** Proxy's lock held: sends the held bytes on. */
        void release() {
            if (held.size() == 0) {
                return;
            }
            try {
                OutputStream out = to.getOutputStream();
                held.writeTo(out);
                out.flush();
            } catch (IOException e) {
                closeQuietly(from);
                closeQuietly(to);
            }
            held.reset();
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // nothing to do
        }
        cut();
    }
}
