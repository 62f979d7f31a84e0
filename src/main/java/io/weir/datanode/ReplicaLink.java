package io.weir.datanode;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A primary's connection to one peer node's {@link ReplicationServer}, shared by every volume
 * the two have in common. Requests are written by the thread that forwards them (a scheduler
 * worker), one at a time under the link's lock, header and data in one gathering write; a reader
 * thread takes the replies, in any order, and runs each request's callback once.
 *
 * <p>A link is down until {@link #connect} succeeds, and goes down on any failure: every request
 * not yet answered is then answered {@link ReplicationWire#LINK_DOWN}, and so is every request sent
 * while it is down. {@link Replication}'s driver connects it again.
 */
final class ReplicaLink implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ReplicaLink.class.getName());

    /** Longest a connection attempt (TCP and TLS handshake) may take. */
    static final int CONNECT_TIMEOUT_MILLIS = 2000;
    /** Least time between two connection attempts. */
    static final long RETRY_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(500);

    /** Answers one request: a {@link ReplicationWire} status and the epoch the copy has seen. */
    interface Callback {
        void done(int status, long epoch);
    }

    final UUID peer;
    final String address;
    private final ReplicationTls tls;
    private final Object writeLock = new Object();
    private final ByteBuffer header = ByteBuffer.allocateDirect(ReplicationWire.REQUEST_BYTES);
    private final Map<Long, Callback> outstanding = new ConcurrentHashMap<>();
    private final AtomicLong handles = new AtomicLong();
    /** Guarded by writeLock; null while down. */
    private ByteChannel channel;
    private volatile boolean up;
    private volatile boolean closed;
    /** When the link last went down or failed to connect (System.nanoTime). */
    volatile long downSince = System.nanoTime();
    /** When a connection was last attempted (System.nanoTime); guarded by connectLock. */
    private long lastAttempt;
    private boolean attempted;
    private final Object connectLock = new Object();

    ReplicaLink(UUID peer, String address, ReplicationTls tls) {
        this.peer = peer;
        this.address = address;
        this.tls = tls;
    }

    boolean isUp() {
        return up;
    }

    /**
     * Connects if down and no attempt was made in the last {@link #RETRY_NANOS}: TCP, then TLS
     * with the node's certificate when the node has one, checking that the peer's certificate
     * names {@link #peer}. Called by the driver, and by a forwarding thread that finds the link
     * down (the first write after a primary starts must not fail its copies for want of a link).
     */
    void connect() {
        synchronized (connectLock) {
            long now = System.nanoTime();
            if (up || closed || attempted && now - lastAttempt < RETRY_NANOS) {
                return;
            }
            attempted = true;
            lastAttempt = now;
            open();
        }
    }

    private void open() {
        SocketChannel raw = null;
        try {
            int colon = address.lastIndexOf(':');
            InetSocketAddress to = new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
            raw = SocketChannel.open();
            raw.socket().connect(to, CONNECT_TIMEOUT_MILLIS);
            raw.socket().setTcpNoDelay(true);
            raw.socket().setKeepAlive(true);
            ByteChannel c = tls.client(raw, peer, to);
            synchronized (writeLock) {
                channel = c;
                up = true;
            }
            Thread reader = new Thread(() -> read(c), "weir-replica-link-" + peer);
            reader.setDaemon(true);
            reader.start();
            LOG.log(Level.INFO, "replication link to node {0} at {1} is up{2}", peer, address, tls.enabled() ? " (TLS)" : "");
        } catch (IOException | RuntimeException e) {
            downSince = System.nanoTime();
            if (raw != null) {
                try {
                    raw.close();
                } catch (IOException ignored) {
                    // already failing
                }
            }
            LOG.log(Level.DEBUG, "replication link to node {0} at {1}: {2}", peer, address, e.toString());
        }
    }

    /**
     * Sends one request; {@code cb} runs exactly once, on this thread if the link is down or the
     * write fails, else on the reader thread when the reply comes. {@code data} (WRITE only) is
     * read from its position to its limit and not kept after this returns.
     */
    void send(byte type, byte flags, UUID volume, long epoch, long offset, int length, ByteBuffer data, Callback cb) {
        if (!up) {
            connect();
        }
        long handle = handles.incrementAndGet();
        outstanding.put(handle, cb);
        IOException failure = null;
        boolean sent = false;
        synchronized (writeLock) {
            ByteChannel c = channel;
            if (c != null) {
                sent = true;
                try {
                    new ReplicationWire.Request(type, flags, handle, volume, epoch, offset, length).encode(header);
                    ReplicationWire.writeFully(c, header);
                    if (data != null) {
                        ReplicationWire.writeFully(c, data);
                    }
                } catch (IOException | RuntimeException e) {
                    failure = e instanceof IOException io ? io : new IOException(e);
                }
            }
        }
        if (failure != null) {
            fail(failure);
        } else if (!sent) {
            answer(handle, ReplicationWire.LINK_DOWN, 0);
        }
    }

    private void read(ByteChannel c) {
        ByteBuffer reply = ByteBuffer.allocate(ReplicationWire.REPLY_BYTES);
        try {
            while (true) {
                reply.clear();
                ReplicationWire.readFully(c, reply);
                reply.flip();
                if (reply.getInt() != ReplicationWire.REPLY_MAGIC) {
                    throw new IOException("not a replication reply (bad magic)");
                }
                int status = reply.getInt();
                long handle = reply.getLong();
                answer(handle, status, reply.getLong());
            }
        } catch (IOException | RuntimeException e) {
            fail(e instanceof IOException io ? io : new IOException(e));
        }
    }

    private void answer(long handle, int status, long epoch) {
        Callback cb = outstanding.remove(handle);
        if (cb != null) {
            cb.done(status, epoch);
        }
    }

    /** Takes the link down and answers every outstanding request {@link ReplicationWire#LINK_DOWN}. */
    private void fail(IOException why) {
        synchronized (writeLock) {
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException ignored) {
                    // going down anyway
                }
                channel = null;
                if (up && !closed) {
                    LOG.log(Level.WARNING, "replication link to node {0} at {1} failed: {2}", peer, address, why.toString());
                }
                up = false;
                downSince = System.nanoTime();
            }
        }
        for (Long h : outstanding.keySet()) {
            answer(h, ReplicationWire.LINK_DOWN, 0);
        }
    }

    @Override
    public void close() {
        closed = true;
        fail(new IOException("closed"));
    }
}
