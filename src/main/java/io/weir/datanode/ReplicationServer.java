package io.weir.datanode;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A node's replication listener: accepts the connections of primaries ({@link ReplicaLink}),
 * one thread each (one per peer node, not per volume), reads their requests and hands each to
 * {@link Replication#receive}, which answers it once it has been applied. Replies are written by
 * whichever thread completes the request, one at a time per connection.
 */
final class ReplicationServer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ReplicationServer.class.getName());

    /** Writes one reply on the connection a request came from. */
    interface Replier {
        void reply(int status, long handle, long epoch);
    }

    /** Bytes a connection's reader takes from the socket at most per read. */
    static final int READ_BUFFER_BYTES = 256 << 10;

    private final ServerSocketChannel listener;
    private final Replication replication;
    private final ReplicationTls tls;
    private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    ReplicationServer(InetSocketAddress listen, Replication replication, ReplicationTls tls) throws IOException {
        this.replication = replication;
        this.tls = tls;
        this.listener = ServerSocketChannel.open();
        listener.bind(listen);
        Thread t = new Thread(this::accept, "weir-replication-accept");
        t.setDaemon(true);
        t.start();
    }

    InetSocketAddress address() {
        try {
            return (InetSocketAddress) listener.getLocalAddress();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private void accept() {
        while (!closed) {
            try {
                SocketChannel c = listener.accept();
                c.socket().setTcpNoDelay(true);
                c.socket().setKeepAlive(true);
                open.add(c);
                Thread t = new Thread(() -> serve(c), "weir-replication-" + c.getRemoteAddress());
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                if (!closed) {
                    LOG.log(Level.WARNING, "replication listener: " + e);
                }
            }
        }
    }

    private void serve(SocketChannel raw) {
        try {
            ReplicationTls.Accepted a = tls.server(raw);
            ByteChannel c = a.channel();
            Replies replier = new Replies(c, () -> close(raw));
            ByteBuffer in = ByteBuffer.allocate(READ_BUFFER_BYTES).flip(); // as many requests per read as have arrived
            while (true) {
                if (in.remaining() < ReplicationWire.REQUEST_BYTES) {
                    fill(c, in, ReplicationWire.REQUEST_BYTES);
                }
                ReplicationWire.Request q = ReplicationWire.Request.decode(in);
                ByteBuffer data = null;
                if (q.type() == ReplicationWire.WRITE) {
                    data = ByteBuffer.allocate((int) q.length()); // at most MAX_LENGTH (decode checks)
                    int buffered = (int) Math.min(in.remaining(), q.length());
                    data.put(in.slice(in.position(), buffered));
                    in.position(in.position() + buffered);
                    ReplicationWire.readFully(c, data); // the rest of a large payload, straight from the socket
                    data.flip();
                }
                replication.receive(q, data, a.peer(), replier);
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                LOG.log(Level.DEBUG, "replication connection ended: " + e);
            }
        } finally {
            close(raw);
        }
    }

    /**
     * A connection's replies: queued by the threads that complete requests, written by whichever
     * of them takes the lock, as many as are queued in one write (under load, many replies per
     * system call, and no thread of its own).
     */
    private static final class Replies implements Replier {
        private final ByteChannel channel;
        private final Runnable onFailure;
        private final java.util.Queue<long[]> queue = new java.util.concurrent.ConcurrentLinkedQueue<>();
        private final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
        private final ByteBuffer out = ByteBuffer.allocate(256 * ReplicationWire.REPLY_BYTES);

        Replies(ByteChannel channel, Runnable onFailure) {
            this.channel = channel;
            this.onFailure = onFailure;
        }

        @Override
        public void reply(int status, long handle, long epoch) {
            queue.add(new long[] {status, handle, epoch});
            // whoever holds the lock last looks again, so no reply is left queued
            while (!queue.isEmpty() && lock.tryLock()) {
                try {
                    long[] r;
                    out.clear();
                    while (out.remaining() >= ReplicationWire.REPLY_BYTES && (r = queue.poll()) != null) {
                        out.putInt(ReplicationWire.REPLY_MAGIC).putInt((int) r[0]).putLong(r[1]).putLong(r[2]);
                    }
                    out.flip();
                    ReplicationWire.writeFully(channel, out);
                } catch (IOException e) {
                    queue.clear();
                    onFailure.run(); // the primary sees its link fail and answers for the copy
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    /** Reads into {@code in} (in read mode) until it holds at least {@code need} bytes. */
    private static void fill(ByteChannel c, ByteBuffer in, int need) throws IOException {
        in.compact();
        while (in.position() < need) {
            if (c.read(in) < 0) {
                throw new java.io.EOFException("the primary closed the replication connection");
            }
        }
        in.flip();
    }

    private void close(SocketChannel c) {
        open.remove(c);
        try {
            c.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing
        }
        for (SocketChannel c : open) {
            close(c);
        }
    }

}
