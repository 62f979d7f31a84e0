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
            Object writeLock = new Object();
            ByteBuffer reply = ByteBuffer.allocate(ReplicationWire.REPLY_BYTES);
            Replier replier = (status, handle, epoch) -> {
                synchronized (writeLock) {
                    try {
                        ReplicationWire.encodeReply(reply, status, handle, epoch);
                        ReplicationWire.writeFully(c, reply);
                    } catch (IOException e) {
                        close(raw); // the primary sees its link fail and answers for the copy
                    }
                }
            };
            ByteBuffer header = ByteBuffer.allocate(ReplicationWire.REQUEST_BYTES);
            while (true) {
                header.clear();
                ReplicationWire.readFully(c, header);
                header.flip();
                ReplicationWire.Request q = ReplicationWire.Request.decode(header);
                ByteBuffer data = null;
                if (q.type() == ReplicationWire.WRITE) {
                    data = ByteBuffer.allocate(q.length());
                    ReplicationWire.readFully(c, data);
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
