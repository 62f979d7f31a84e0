package io.weir.datanode;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A primary's connection to one peer node's {@link ReplicationServer}, shared by every volume
 * the two have in common.
 *
 * <h2>Sending</h2>
 * The thread that forwards a request (a scheduler worker) queues it and, if no other thread is
 * writing, writes everything queued in one gathering write, then looks again: under load many
 * requests go out per system call, and no thread of the link's own is woken per request. A
 * worker running a batch only queues, and writes when it writes the batch's held replies
 * ({@link ReplyBatch}); one that finds the link down writes what it holds before it connects. A
 * request's data is read only while it is written, before its callback can run. A reader thread
 * takes the replies, as many per read as have arrived, in any order, and runs each request's
 * callback once.
 *
 * <h2>Failure</h2>
 * A link is down until {@link #connect} succeeds, and goes down on any failure: every request not
 * yet answered is then answered {@link ReplicationWire#LINK_DOWN}, and so is every request sent
 * while it is down. Requests queued when it failed are dropped with it, never written on a later
 * connection. {@link Replication}'s driver connects it again; so does a forwarding thread that
 * finds it down (at most every {@link #RETRY_NANOS}).
 *
 * <p>A copy that hangs (its node stalled, its socket open) must not stall the primary's writes,
 * nor a restarted primary's confirmation: a watchdog thread of {@link Replication} calls
 * {@link #expire} every {@value Replication#WATCHDOG_MILLIS} ms, and a link whose oldest request
 * has gone unanswered, with no reply at all, for longer than its timeout
 * ({@link #REQUEST_TIMEOUT}) is taken down, as is a connection attempt whose TLS handshake takes
 * longer than {@link #CONNECT_TIMEOUT_MILLIS}; a thread that finds another connecting waits for
 * it at most twice that. The socket is closed under any thread blocked writing to it (a copy that
 * stops reading fills the socket's buffer), which then fails too.
 */
final class ReplicaLink implements AutoCloseable, ReplyBatch.Outbox {

    private static final System.Logger LOG = System.getLogger(ReplicaLink.class.getName());

    /** Longest a connection attempt (TCP and TLS handshake) may take. */
    static final int CONNECT_TIMEOUT_MILLIS = 2000;
    /** Bytes the reader takes from the socket at most per read: many replies per system call. */
    static final int READ_BUFFER_BYTES = 64 << 10;
    /** Most requests one gathering write sends. */
    static final int MAX_BATCH = 64;
    /** Least time between two connection attempts. */
    static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /**
     * Longest a request may go unanswered, with no reply at all meanwhile, before the link is
     * taken down: far above what a copy under load takes (a busy copy still answers other
     * requests, which counts), short enough that writes go on without a hung copy.
     */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);

    /** Answers one request: a {@link ReplicationWire} status and the epoch the copy has seen. */
    interface Callback {
        void done(int status, long epoch);

        /**
         * Whether an OK answer is handled in a moment: a client request's, whose handling answers
         * the client. The reader holds client replies only across such answers; the others (a
         * PING's, a FLUSH's, a resync step's, any error) may write the in-sync set to disk.
         */
        default boolean quick() {
            return false;
        }
    }

    /** A queued request, for the connection that was up when it was sent (never written on another). */
    private record Frame(ReplicationWire.Request request, ByteBuffer data, ByteChannel on) {
    }

    /** The node this link sends from, which its hello names. */
    private final UUID self;
    final UUID peer;
    final String address;
    private final ReplicationTls tls;
    private final long timeoutNanos;
    private final Map<Long, Callback> outstanding = new ConcurrentHashMap<>();
    private final AtomicLong handles = new AtomicLong();
    private final Queue<Frame> queue = new ConcurrentLinkedQueue<>();
    /** Held while writing, and to change {@link #channel}. */
    private final ReentrantLock writeLock = new ReentrantLock();
    /** Changed under writeLock; null while down. */
    private volatile ByteChannel channel;
    /** The socket under {@link #channel}, closed by {@link #expire} without the write lock. */
    private volatile SocketChannel socket;
    /** The oldest request outstanding at the last {@link #expire}, and since when it was; its caller's only. */
    private long oldest;
    private long oldestSince;
    private volatile boolean up;
    /** Ids of connections, unique in the process (a link that replaces another starts no count again). */
    private static final java.util.concurrent.atomic.AtomicLong CONNECTION_IDS = new java.util.concurrent.atomic.AtomicLong();
    /** The id of this link's current connection, 0 before the first: a copy may have restarted since the last. */
    private volatile long connection;
    private volatile boolean closed;
    /** When a connection was last attempted (System.nanoTime); guarded by connectLock. */
    private long lastAttempt;
    private boolean attempted;
    /** Held while connecting; a thread that finds it held waits a bounded time (a handshake with a hung copy never ends). */
    private final ReentrantLock connectLock = new ReentrantLock();
    /** The socket of a connection attempt under way, and since when; {@link #expire} closes it past the timeout. */
    private volatile SocketChannel connecting;
    private volatile long connectingSince;
    /** Writes of queued requests made; changed under writeLock. */
    private volatile long writes;
    /** When the reader last took a reply (System.nanoTime). */
    private volatile long lastReply;
    /** Tests: runs while a new connection is set up, under the write lock. */
    volatile Runnable whileOpening;

    ReplicaLink(UUID self, UUID peer, String address, ReplicationTls tls) {
        this(self, peer, address, tls, REQUEST_TIMEOUT);
    }

    ReplicaLink(UUID self, UUID peer, String address, ReplicationTls tls, Duration requestTimeout) {
        this.self = java.util.Objects.requireNonNull(self, "this node's id");
        this.peer = peer;
        this.address = address;
        this.tls = tls;
        this.timeoutNanos = requestTimeout.toNanos();
    }

    boolean isUp() {
        return up;
    }

    /** The id of the link's current (or last) connection, unique among all links' connections; 0 before the first. */
    long connection() {
        return connection;
    }

    /** Tests: whether a connection attempt is under way. */
    boolean connectingNow() {
        return connecting != null;
    }

    /**
     * Connects if down and no attempt was made in the last {@link #RETRY_NANOS}: TCP, then TLS
     * with the node's certificate when the node has one, checking that the peer's certificate
     * names {@link #peer}, then the hello that names {@link #self}.
     */
    void connect() {
        try {
            // another thread's attempt ends within twice the connect timeout (TCP, then the handshake
            // that expire gives up): wait for it, not for ever
            if (!connectLock.tryLock(2L * CONNECT_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        try {
            long now = System.nanoTime();
            if (up || closed || attempted && now - lastAttempt < RETRY_NANOS) {
                return;
            }
            attempted = true;
            lastAttempt = now;
            open();
        } finally {
            connectLock.unlock();
        }
    }

    private void open() {
        SocketChannel raw = null;
        try {
            InetSocketAddress to = HostPort.parse(address);
            raw = SocketChannel.open();
            connectingSince = System.nanoTime();
            connecting = raw;
            raw.socket().connect(to, CONNECT_TIMEOUT_MILLIS);
            raw.socket().setTcpNoDelay(true);
            raw.socket().setKeepAlive(true);
            ByteChannel c = tls.client(raw, peer, to);
            ReplicationWire.writeFully(c, ReplicationWire.hello(self));
            writeLock.lock();
            try {
                if (closed) {
                    throw new IOException("closed while connecting");
                }
                queue.clear(); // nothing queued while down may go out now: its callbacks have run
                channel = c;
                socket = raw;
                connection = CONNECTION_IDS.incrementAndGet();
                up = true;
                Runnable probe = whileOpening;
                if (probe != null) {
                    probe.run();
                }
            } finally {
                writeLock.unlock();
            }
            Thread reader = new Thread(() -> read(c), "weir-replica-link-" + peer);
            reader.setDaemon(true);
            reader.start();
            flush(); // a request queued for this connection while this thread held the lock: its sender found it held

            LOG.log(Level.INFO, "replication link to node {0} at {1} is up{2}", peer, address, tls.enabled() ? " (TLS)" : "");
        } catch (IOException | RuntimeException e) {
            if (raw != null) {
                try {
                    raw.close();
                } catch (IOException ignored) {
                    // already failing
                }
            }
            LOG.log(Level.DEBUG, "replication link to node {0} at {1}: {2}", peer, address, e.toString());
        } finally {
            connecting = null;
        }
    }

    /**
     * Sends one request; {@code cb} runs exactly once: with {@link ReplicationWire#LINK_DOWN} if
     * the link is down or fails first, else on the reader thread when the reply comes.
     * {@code data} (WRITE only) is read from its position to its limit, and not after {@code cb}
     * has run. A thread that holds replies ({@link ReplyBatch#current}) holds the request too:
     * it is written with the others that thread sends on this link when it writes what it held.
     */
    void send(byte type, byte flags, UUID volume, long epoch, long offset, long length, ByteBuffer data, Callback cb) {
        if (!up) {
            ReplyBatch.writeHeld(); // connecting may take seconds: nothing held waits for it
            connect();
        }
        long handle = handles.incrementAndGet();
        outstanding.put(handle, cb);
        ByteChannel on = channel;
        if (on == null) {
            ReplyBatch.writeHeld(); // the answer may write the in-sync set to disk
            answer(handle, ReplicationWire.LINK_DOWN, 0);
            return;
        }
        queue.add(new Frame(new ReplicationWire.Request(type, flags, handle, volume, epoch, offset, length), data, on));
        ReplyBatch.Held held = ReplyBatch.current();
        if (held != null) {
            held.holdWrites(this); // a worker running a batch: written with the batch's other requests to this copy
        } else {
            flush();
        }
    }

    @Override
    public void writeQueued() {
        flush();
    }

    /** Tests: writes of queued requests made, each of one or more requests. */
    long writes() {
        return writes;
    }

    /** Writes what is queued unless another thread is at it; whoever writes last looks again. */
    private void flush() {
        List<Frame> batch = new ArrayList<>(MAX_BATCH);
        List<Frame> dropped = new ArrayList<>();
        while (!queue.isEmpty() && writeLock.tryLock()) {
            IOException failure = null;
            ByteChannel c = channel;
            try {
                Frame f;
                while (batch.size() < MAX_BATCH && (f = queue.poll()) != null) {
                    batch.add(f);
                }
                batch.removeIf(b -> b.on() != c && dropped.add(b)); // its connection failed: it was answered then
                if (c != null && !batch.isEmpty()) {
                    ByteBuffer[] parts = new ByteBuffer[batch.size() * 2];
                    int n = 0;
                    for (Frame b : batch) {
                        ByteBuffer h = ByteBuffer.allocate(ReplicationWire.REQUEST_BYTES);
                        b.request().encode(h);
                        parts[n++] = h;
                        if (b.data() != null) {
                            parts[n++] = b.data();
                        }
                    }
                    writes++; // counted as it begins, before the copy can read what it sends
                    write(c, parts, n);
                    batch.clear();
                }
            } catch (IOException | RuntimeException e) {
                failure = e instanceof IOException io ? io : new IOException(e);
            } finally {
                writeLock.unlock();
            }
            if (failure != null) {
                fail(c, failure);
            }
            batch.addAll(dropped);
            for (Frame d : batch) { // written on no connection: the link went down meanwhile
                answer(d.request().handle(), ReplicationWire.LINK_DOWN, 0);
            }
            batch.clear();
            dropped.clear();
        }
    }

    private static void write(ByteChannel c, ByteBuffer[] parts, int n) throws IOException {
        if (c instanceof GatheringByteChannel g) {
            int at = 0;
            while (at < n) {
                g.write(parts, at, n - at);
                while (at < n && !parts[at].hasRemaining()) {
                    at++;
                }
            }
        } else {
            for (int i = 0; i < n; i++) {
                ReplicationWire.writeFully(c, parts[i]);
            }
        }
    }

    /**
     * The reader thread: takes replies as they come, as many per read as have arrived, and holds
     * the client replies their answers complete until it has taken them all
     * ({@link ReplyBatch#startHolding}): one write per client connection for them, not one each.
     * Only across {@linkplain Callback#quick quick} answers: what it holds goes out before any
     * other is handled.
     */
    private void read(ByteChannel c) {
        ByteBuffer in = ByteBuffer.allocate(READ_BUFFER_BYTES);
        try {
            while (true) {
                if (c.read(in) < 0) {
                    throw new java.io.EOFException("the copy closed the replication connection");
                }
                in.flip();
                if (in.remaining() >= ReplicationWire.REPLY_BYTES) {
                    lastReply = System.nanoTime(); // once per read, not per reply
                }
                // the client replies these answers complete go out per connection in one write
                ReplyBatch.startHolding();
                try {
                    while (in.remaining() >= ReplicationWire.REPLY_BYTES) {
                        if (in.getInt() != ReplicationWire.REPLY_MAGIC) {
                            throw new IOException("not a replication reply (bad magic)");
                        }
                        int status = in.getInt();
                        long handle = in.getLong();
                        long epoch = in.getLong();
                        Callback cb = outstanding.remove(handle);
                        if (cb == null) {
                            continue;
                        }
                        if (status == ReplicationWire.OK && cb.quick()) {
                            cb.done(status, epoch);
                        } else { // what is held goes out first: this answer's handling may wait for the disk
                            ReplyBatch.endHolding();
                            try {
                                cb.done(status, epoch);
                            } finally {
                                ReplyBatch.startHolding();
                            }
                        }
                    }
                } finally {
                    ReplyBatch.endHolding();
                }
                in.compact();
            }
        } catch (IOException | RuntimeException e) {
            fail(c, e instanceof IOException io ? io : new IOException(e));
        }
    }

    private void answer(long handle, int status, long epoch) {
        Callback cb = outstanding.remove(handle);
        if (cb != null) {
            cb.done(status, epoch);
        }
    }

    /**
     * Takes the link down if {@code on} is still its connection ({@code null}: whichever it is),
     * after any write in progress: drops what is queued, and answers every request outstanding
     * then {@link ReplicationWire#LINK_DOWN} (a request sent later finds the link down, or goes on
     * the next connection). A late report from a connection already taken down, such as its
     * reader waking after the link is up again on a new one, changes nothing.
     */
    void fail(ByteChannel on, IOException why) {
        List<Long> down;
        writeLock.lock();
        try {
            if (on != null && channel != on) {
                return; // taken down already, its requests answered then
            }
            queue.clear();
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException ignored) {
                    // going down anyway
                }
                channel = null;
                socket = null;
                if (up && !closed) {
                    LOG.log(Level.WARNING, "replication link to node {0} at {1} failed: {2}", peer, address, why.toString());
                }
                up = false;
            }
            down = new ArrayList<>(outstanding.keySet());
        } finally {
            writeLock.unlock();
        }
        for (Long h : down) {
            answer(h, ReplicationWire.LINK_DOWN, 0);
        }
    }

    /** The connection requests go on now, or null while the link is down (tests). */
    ByteChannel channelNow() {
        return channel;
    }

    /**
     * Takes the link down if its oldest outstanding request has gone unanswered, and no reply at
     * all has come, for longer than the timeout, as seen by the calls so far ({@code now}:
     * System.nanoTime); and closes a connection attempt (a TLS handshake with a hung copy) under
     * way for longer than {@link #CONNECT_TIMEOUT_MILLIS}. One thread calls it, periodically.
     * Closing the socket wakes the reader (and a writer blocked on a full socket buffer), which
     * takes the link down and answers every request {@link ReplicationWire#LINK_DOWN}.
     */
    void expire(long now) {
        SocketChannel attempt = connecting;
        if (attempt != null && now - connectingSince > TimeUnit.MILLISECONDS.toNanos(CONNECT_TIMEOUT_MILLIS)) {
            LOG.log(Level.WARNING, "the copy on node {0} at {1} did not complete a connection in {2} ms; giving it up",
                    peer, address, CONNECT_TIMEOUT_MILLIS);
            closeQuietly(attempt);
        }
        long first = Long.MAX_VALUE;
        for (Long h : outstanding.keySet()) {
            first = Math.min(first, h);
        }
        if (first != oldest) {
            oldest = first;
            oldestSince = now;
            return;
        }
        SocketChannel s = socket;
        long silent = now - Math.max(oldestSince, lastReply);
        if (first == Long.MAX_VALUE || s == null || silent <= timeoutNanos) {
            return;
        }
        LOG.log(Level.WARNING, "the copy on node {0} at {1} has answered nothing for {2} ms; taking the link down",
                peer, address, TimeUnit.NANOSECONDS.toMillis(silent));
        oldestSince = now; // once per request
        closeQuietly(s);
    }

    private static void closeQuietly(SocketChannel s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // the reader, woken, takes the link down
        }
    }

    /** Takes the link down for good; its socket first, so that a writer blocked on a copy that stopped reading lets go. */
    @Override
    public void close() {
        closed = true;
        for (SocketChannel s : new SocketChannel[] {connecting, socket}) {
            if (s != null) {
                closeQuietly(s);
            }
        }
        fail(null, new IOException("closed"));
    }
}
