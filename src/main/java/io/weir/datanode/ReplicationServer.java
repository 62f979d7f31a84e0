package io.weir.datanode;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A node's replication listener: accepts the connections of primaries ({@link ReplicaLink}),
 * one thread each (one per peer node, not per volume), reads their requests and hands each to
 * {@link Replication#receive}, which answers it once it has been applied. Replies are written by
 * whichever thread completes the request, one at a time per connection.
 *
 * <p>A primary opens a new connection only once its last one failed, and it has then answered
 * every request sent on it {@link ReplicationWire#LINK_DOWN} and marked their regions to be copied
 * again. So a node's new connection <em>supersedes</em> its older ones here: they admit nothing
 * more and are closed, what they admitted and is not yet being applied is dropped, and the new one
 * reads nothing until every request they admitted is answered (so it waits for those being
 * applied, not for a queue). Otherwise such a request, held up in this node's scheduler, could land
 * after the resync that the new connection starts had copied newer data to the same place. The
 * sending node is the one its hello names ({@link ReplicationWire#hello}); over TLS that must be
 * the node of its certificate, in clear (a node without one, the config-file mode) it is taken
 * at its word, as everything in clear is. A connection that ends admits and applies nothing more
 * either: its primary has given up on what it sent.
 *
 * <p>A connection's reader takes each request, with a WRITE's payload, into the node's
 * {@link ReceiveBudget} before it reads the payload, and waits while it does not fit: its primary
 * then waits on TCP's window rather than this node's heap filling with writes its store cannot
 * take yet, or the volume's queue refusing them. The request is given back once it is applied or
 * refused, before its reply.
 *
 * <p>A connection holds a thread of its own, so one whose greeting (the TLS handshake and the
 * hello) is not done within {@link #GREETING_TIMEOUT} is closed ({@link #expire}, called by the
 * replication watchdog): a peer that connects and says nothing would hold it for ever; and past
 * {@link #MAX_GREETING} connections not yet greeted, a new one is closed at once: a flood of
 * them would take a thread each.
 */
final class ReplicationServer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ReplicationServer.class.getName());

    /** Writes one reply on the connection a request came from. */
    interface Replier {
        void reply(int status, long handle, long epoch);

        /**
         * Whether the connection ended, or was superseded by a newer one of its node: its primary
         * answered its requests {@link ReplicationWire#LINK_DOWN}, and one not yet applied is not
         * applied.
         */
        default boolean superseded() {
            return false;
        }
    }

    /** Bytes a connection's reader takes from the socket at most per read. */
    static final int READ_BUFFER_BYTES = 256 << 10;
    /**
     * Longest a new connection waits for the requests of the connections it superseded; past it,
     * it is closed (the primary tries again). Above the primary's request timeout, so that a copy
     * only slow to apply is waited for.
     */
    static final long SUPERSEDE_WAIT_NANOS = ReplicaLink.REQUEST_TIMEOUT.toNanos() + 10_000_000_000L;
    /**
     * Longest a connection may take from its accept to the end of its hello: five times what a
     * primary allows its own TCP and TLS handshake ({@link ReplicaLink#CONNECT_TIMEOUT_MILLIS})
     * before it gives up, after which it sends the hello at once.
     */
    static final java.time.Duration GREETING_TIMEOUT = java.time.Duration.ofSeconds(10);
    /**
     * Most connections that have not greeted yet; one more is closed at once. A node's primaries
     * open one connection each, and again only once it failed: 64 leaves room for a cluster's
     * worth reconnecting at once.
     */
    static final int MAX_GREETING = 64;

    private final ServerSocketChannel listener;
    private final Replication replication;
    private final ReplicationTls tls;
    /** The requests read and not yet answered, and their WRITE payloads, on every connection. */
    private final ReceiveBudget received;
    private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
    /**
     * Each sending node's connections, oldest superseded by the newest; a connection leaves its
     * set once it has ended and every request it admitted is answered (by the thread that answers
     * the last, if that comes after the end), and a node is forgotten with its last connection. A
     * set is added to and removed under the map's lock for its node, so a new connection never
     * joins a set already dropped.
     */
    private final java.util.Map<UUID, Set<Replies>> byPeer = new ConcurrentHashMap<>();
    /** New connections waiting for the requests of those they superseded (tests). */
    private final java.util.concurrent.atomic.AtomicInteger waitingForOlder = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean closed;
    private final java.util.concurrent.atomic.AtomicLong ended = new java.util.concurrent.atomic.AtomicLong();
    /** Writes of replies begun, on every connection (tests). */
    private final java.util.concurrent.atomic.AtomicLong replyWrites = new java.util.concurrent.atomic.AtomicLong();
    /** Accepted connections whose greeting is not done yet, and when each was accepted (System.nanoTime). */
    private final java.util.Map<SocketChannel, Long> greeting = new ConcurrentHashMap<>();
    /** {@link #GREETING_TIMEOUT}, shorter in tests. */
    private volatile long greetingTimeoutNanos = GREETING_TIMEOUT.toNanos();

    ReplicationServer(InetSocketAddress listen, Replication replication, ReplicationTls tls, ReceiveBudget received)
            throws IOException {
        this.replication = replication;
        this.tls = tls;
        this.received = received;
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
                if (greeting.size() >= MAX_GREETING) {
                    LOG.log(Level.DEBUG, "replication: {0} connections have not greeted yet; closing a new one", MAX_GREETING);
                    c.close();
                    continue;
                }
                c.socket().setTcpNoDelay(true);
                c.socket().setKeepAlive(true);
                open.add(c);
                greeting.put(c, System.nanoTime());
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

    /**
     * The replication watchdog: closes the connections whose greeting is not done
     * {@link #GREETING_TIMEOUT} after their accept; their threads then end.
     */
    void expire(long now) {
        greeting.forEach((c, since) -> {
            if (now - since > greetingTimeoutNanos && greeting.remove(c, since)) {
                LOG.log(Level.DEBUG, "replication: closing a connection that did not greet within {0} ms",
                        greetingTimeoutNanos / 1_000_000);
                close(c);
            }
        });
    }

    /** Accepted connections that have not greeted yet. */
    int greeting() {
        return greeting.size();
    }

    /** Tests: how long a connection may take to greet. */
    void greetingTimeout(java.time.Duration timeout) {
        greetingTimeoutNanos = timeout.toNanos();
    }

    /** Tests: writes of replies begun. */
    long replyWrites() {
        return replyWrites.get();
    }

    /** Tests: sending nodes whose connections are kept. */
    int sendingNodes() {
        return byPeer.size();
    }

    /** Tests: connections that ended, and admit nothing more. */
    long connectionsEnded() {
        return ended.get();
    }

    /** Tests: whether a new connection waits for the requests of the connections it superseded. */
    boolean waitingForOlder() {
        return waitingForOlder.get() > 0;
    }

    private void serve(SocketChannel raw) {
        UUID sender = null;
        Set<Replies> same = null;
        Replies replier = null;
        ReplicationWire.Request holding = null; // the request being read, which holds its part of the receive budget
        try {
            ReplicationTls.Accepted a = tls.server(raw);
            ByteChannel c = a.channel();
            ByteBuffer in = ByteBuffer.allocate(READ_BUFFER_BYTES).flip(); // as many requests per read as have arrived
            fill(c, in, ReplicationWire.HELLO_BYTES);
            UUID peer = ReplicationWire.decodeHello(in);
            greeting.remove(raw);
            if (a.peer() != null && !a.peer().equals(peer)) {
                LOG.log(Level.WARNING, "replication: node {0}''s connection names itself node {1}; closing it", a.peer(), peer);
                return;
            }
            Replies r = replier = new Replies(c, () -> close(raw), replyWrites);
            java.util.List<Replies> older = new java.util.ArrayList<>();
            sender = peer;
            // under the map's lock for the node, as the removal of its set once empty is
            same = byPeer.compute(peer, (p, known) -> {
                Set<Replies> set = known == null ? ConcurrentHashMap.newKeySet() : known;
                older.addAll(set);
                set.add(r);
                return set;
            });
            if (!supersede(same, older)) {
                LOG.log(Level.WARNING, "replication: node {0}''s earlier connection still has requests being applied"
                        + " after {1} s; closing its new one", peer, SUPERSEDE_WAIT_NANOS / 1_000_000_000L);
                return;
            }
            while (true) {
                if (in.remaining() < ReplicationWire.REQUEST_BYTES) {
                    fill(c, in, ReplicationWire.REQUEST_BYTES);
                }
                ReplicationWire.Request q = ReplicationWire.Request.decode(in);
                // reads nothing more until the request, and its payload, fit the copy's budget: its primary waits meanwhile
                if (!received.take(q.volume(), q.payload(), () -> closed || r.superseded())) {
                    return;
                }
                holding = q;
                ByteBuffer data = null;
                if (q.type() == ReplicationWire.WRITE) {
                    data = ByteBuffer.allocate((int) q.length()); // at most MAX_LENGTH (decode checks)
                    int buffered = (int) Math.min(in.remaining(), q.length());
                    data.put(in.slice(in.position(), buffered));
                    in.position(in.position() + buffered);
                    ReplicationWire.readFully(c, data); // the rest of a large payload, straight from the socket
                    data.flip();
                }
                if (!replier.enter()) {
                    return; // superseded by a newer connection of its node
                }
                holding = null; // given back by receive, once applied or refused
                replication.receive(sender, q, data, replier);
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                LOG.log(Level.DEBUG, "replication connection ended: " + e);
            }
        } finally {
            if (holding != null) { // a request read (or being read) that was never handed on
                received.give(holding.volume(), holding.payload());
            }
            if (replier != null) {
                // its primary answered what it sent LINK_DOWN, and resyncs it: what is not yet
                // applied (a request queued, the pieces left of one) is dropped
                replier.supersede();
            }
            if (same != null) { // meanwhile the node's next connection waits for what is being applied
                Replies r = replier;
                UUID node = sender;
                r.onceAnswered(() -> byPeer.computeIfPresent(node, (p, set) -> {
                    set.remove(r);
                    return set.isEmpty() ? null : set; // a node with no connection left is forgotten
                }));
            }
            greeting.remove(raw);
            close(raw);
            ended.incrementAndGet();
        }
    }

    /**
     * A new connection's thread: the node's older connections admit nothing more and are closed;
     * returns once every request they admitted is answered, or false past {@link #SUPERSEDE_WAIT_NANOS}.
     */
    private boolean supersede(Set<Replies> same, java.util.List<Replies> older) {
        waitingForOlder.incrementAndGet();
        try {
            long deadline = System.nanoTime() + SUPERSEDE_WAIT_NANOS;
            for (Replies o : older) {
                o.supersede();
            }
            for (Replies o : older) {
                if (!o.awaitAnswered(deadline)) {
                    return false;
                }
            }
            same.removeAll(older);
            return true;
        } finally {
            waitingForOlder.decrementAndGet();
        }
    }

    /**
     * A connection's replies: queued by the threads that complete requests, written by whichever
     * of them takes the lock, as many as are queued in one write (under load, many replies per
     * system call, and no thread of its own). A worker running a batch holds the replies of its
     * requests instead ({@link ReplyBatch}), and writes them together after the batch, as it does
     * a client's; a request counts as answered once its reply is written or queued for the thread
     * writing (or the connection failed).
     */
    private static final class Replies implements Replier, ReplyBatch.Sink {
        /** In {@link #admitted}: the connection was superseded and admits nothing more. */
        private static final int SUPERSEDED = 1 << 30;
        private final ByteChannel channel;
        private final Runnable onFailure;
        /** Requests admitted and not yet answered, plus {@link #SUPERSEDED} once superseded. */
        private final java.util.concurrent.atomic.AtomicInteger admitted = new java.util.concurrent.atomic.AtomicInteger();
        /** Encoded replies (one, or a batch's) waiting for the lock's holder to write them. */
        private final java.util.Queue<ByteBuffer> queue = new java.util.concurrent.ConcurrentLinkedQueue<>();
        private final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
        private final ByteBuffer out = ByteBuffer.allocate(256 * ReplicationWire.REPLY_BYTES);
        private final java.util.concurrent.atomic.AtomicLong writes;
        /** What to run once every request is answered after the connection ended ({@link #onceAnswered}). */
        private final java.util.concurrent.atomic.AtomicReference<Runnable> whenAnswered =
                new java.util.concurrent.atomic.AtomicReference<>();

        Replies(ByteChannel channel, Runnable onFailure, java.util.concurrent.atomic.AtomicLong writes) {
            this.channel = channel;
            this.onFailure = onFailure;
            this.writes = writes;
        }

        /** Counts a request to be answered; false once superseded. */
        boolean enter() {
            while (true) {
                int s = admitted.get();
                if ((s & SUPERSEDED) != 0) {
                    return false;
                }
                if (admitted.compareAndSet(s, s + 1)) {
                    return true;
                }
            }
        }

        /** Admits nothing more, and closes the connection (its primary gave up on it). */
        void supersede() {
            admitted.getAndUpdate(s -> s | SUPERSEDED);
            onFailure.run();
        }

        @Override
        public boolean superseded() {
            return (admitted.get() & SUPERSEDED) != 0;
        }

        /** Whether every request admitted is answered. */
        boolean answeredAll() {
            return (admitted.get() & ~SUPERSEDED) == 0;
        }

        /**
         * Runs {@code then} once every request admitted is answered: now if they are, else on the
         * thread that answers the last. Once superseded only: no request is admitted after.
         */
        void onceAnswered(Runnable then) {
            whenAnswered.set(then);
            if (answeredAll()) {
                runWhenAnswered();
            }
        }

        /** Runs what {@link #onceAnswered} left, once, whichever thread gets to it first. */
        private void runWhenAnswered() {
            Runnable then = whenAnswered.getAndSet(null);
            if (then != null) {
                then.run();
            }
        }

        /** Waits until every request admitted is answered, or the deadline (System.nanoTime) passes. */
        synchronized boolean awaitAnswered(long deadline) {
            while ((admitted.get() & ~SUPERSEDED) != 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }

        @Override
        public void reply(int status, long handle, long epoch) {
            ByteBuffer b = ByteBuffer.allocate(ReplicationWire.REPLY_BYTES);
            ReplicationWire.encodeReply(b, status, handle, epoch);
            ReplyBatch.Held held = ReplyBatch.current();
            if (held != null) {
                held.hold(this, b); // a worker running a batch: written with the batch's other replies
                held.holdDone(this, 0);
                return;
            }
            try {
                queue.add(b);
                drain();
            } finally {
                answered();
            }
        }

        @Override
        public void sendNow(ByteBuffer[] replies, int n) {
            ByteBuffer all = ByteBuffer.allocate(n * ReplicationWire.REPLY_BYTES); // n <= ReplyBatch.CAPACITY: fits out
            for (int i = 0; i < n; i++) {
                all.put(replies[i]);
            }
            queue.add(all.flip());
            drain();
        }

        @Override
        public void requestDone(long bytes) {
            answered();
        }

        private void answered() {
            if (admitted.decrementAndGet() == SUPERSEDED) {
                synchronized (this) {
                    notifyAll();
                }
                runWhenAnswered();
            }
        }

        /** Writes the queued replies unless another thread is writing: whoever holds the lock last looks again. */
        private void drain() {
            while (!queue.isEmpty() && lock.tryLock()) {
                try {
                    out.clear();
                    ByteBuffer r;
                    // only the lock's holder takes from the queue: what it peeks is what it polls
                    while ((r = queue.peek()) != null && out.remaining() >= r.remaining()) {
                        out.put(queue.poll());
                    }
                    out.flip();
                    writes.incrementAndGet(); // before: a test may read the replies as soon as they are written
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
