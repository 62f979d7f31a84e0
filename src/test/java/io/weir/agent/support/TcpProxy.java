package io.weir.agent.support;

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
 * A TCP relay on 127.0.0.1 between agents and a control plane, which a test can freeze (bytes are
 * held, connections stay open: a half-open link, or a push caught in flight), hold one way (the
 * control plane's answers are lost), cut (every
 * connection reset), point at another upstream port, or stop listening (the control plane's
 * address is down). Agents connect to {@link #port()}, which stays the same throughout.
 */
public final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final ByteArrayOutputStream heldDownstream = new ByteArrayOutputStream();
    private volatile int upstreamPort;
    private volatile boolean frozen;
    private volatile boolean downstreamHeld;
    private volatile boolean refusing;

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

    /** The port agents connect to. */
    public int port() {
        return server.getLocalPort();
    }

    /** Relays new connections to {@code port} from now on. */
    public void retarget(int port) {
        this.upstreamPort = port;
    }

    /** Holds every byte in both directions; connections stay open. */
    public synchronized void freeze() {
        frozen = true;
    }

    /**
     * Holds every byte from the control plane to the agents, while the agents' bytes still reach
     * the control plane: what the control plane answers is lost (an ack caught in flight).
     */
    public synchronized void holdDownstream() {
        downstreamHeld = true;
    }

    /** Whether the control plane sent anything to an agent while frozen, as text (for assertions). */
    public synchronized String heldFromUpstream() {
        return heldDownstream.toString(StandardCharsets.ISO_8859_1);
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
        heldDownstream.reset();
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
                pipe(client, upstream, false);
                pipe(upstream, client, true);
            } catch (IOException e) {
                closeQuietly(client);
            }
        }
    }

    private void pipe(Socket from, Socket to, boolean downstream) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    synchronized (this) {
                        if (frozen || (downstream && downstreamHeld)) {
                            if (downstream) {
                                heldDownstream.write(buf, 0, n);
                            }
                            continue;
                        }
                    }
                    out.write(buf, 0, n);
                    out.flush();
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
        }, "tcp-proxy-pipe");
        t.setDaemon(true);
        t.start();
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
