package io.weir.datanode;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on 127.0.0.1 in front of a node's replication listener that can hold back what
 * the node answers: while {@linkplain #hold() holding}, bytes from the node are read and kept
 * (counted in {@link #heldBytes}) and reach the primary only once {@linkplain #release()
 * released}. What the primary sends goes through at once. A test gives the proxy's address as
 * the copy's, so that the copy has taken a request and its answer is on the way, for as long as
 * the test needs.
 */
final class HoldingProxy implements AutoCloseable {

    private final ServerSocketChannel server;
    private final InetSocketAddress target;
    private final List<SocketChannel> open = new CopyOnWriteArrayList<>();
    private final AtomicLong heldBytes = new AtomicLong();
    private boolean holding;

    /** A proxy to {@code target} ("host:port", as a node gives its replication address). */
    HoldingProxy(String target) throws IOException {
        this.target = HostPort.parse(target);
        server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        daemon("holding-proxy-accept", this::acceptLoop);
    }

    /** The address to give as the copy's. */
    String address() throws IOException {
        InetSocketAddress a = (InetSocketAddress) server.getLocalAddress();
        return "127.0.0.1:" + a.getPort();
    }

    /** From now on, what the node answers is kept here. */
    synchronized void hold() {
        holding = true;
    }

    /** What was kept, and anything after it, goes on to the primary. */
    synchronized void release() {
        holding = false;
        notifyAll();
    }

    /** Bytes from the node kept back while holding (they count until released). */
    long heldBytes() {
        return heldBytes.get();
    }

    private static void daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    private void acceptLoop() {
        try {
            while (true) {
                SocketChannel primary = server.accept();
                SocketChannel node = SocketChannel.open(target);
                open.add(primary);
                open.add(node);
                daemon("holding-proxy-up", () -> pump(primary, node, false));
                daemon("holding-proxy-down", () -> pump(node, primary, true));
            }
        } catch (IOException e) {
            // closed
        }
    }

    private void pump(SocketChannel from, SocketChannel to, boolean holdable) {
        ByteBuffer b = ByteBuffer.allocate(64 << 10);
        try {
            while (from.read(b) >= 0) {
                b.flip();
                if (holdable) {
                    waitWhileHolding(b.remaining());
                }
                while (b.hasRemaining()) {
                    to.write(b);
                }
                b.clear();
            }
        } catch (IOException | InterruptedException e) {
            // one side closed: close both below
        }
        try {
            from.close();
            to.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    private synchronized void waitWhileHolding(int bytes) throws InterruptedException {
        if (!holding) {
            return;
        }
        heldBytes.addAndGet(bytes);
        while (holding) {
            wait();
        }
        heldBytes.addAndGet(-bytes);
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (SocketChannel c : open) {
            c.close();
        }
    }
}
