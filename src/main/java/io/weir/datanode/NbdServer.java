package io.weir.datanode;

import io.weir.scheduler.QosExecutor;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The NBD server: one selector thread that accepts connections, reads and decodes everything
 * clients send and writes what replies could not be written at once; the data work runs on the
 * {@link QosExecutor}'s workers, which also write replies straight to the (non-blocking) sockets.
 *
 * <h2>Thread safety</h2>
 * Connections' decoding state is confined to the selector thread. Other threads hand work to it
 * with {@link #execute}, which queues a task for one connection and wakes the selector. {@link #close}
 * may be called from any thread; it closes the listening socket and every connection and joins the
 * selector thread.
 *
 * <h2>Failures</h2>
 * Everything the selector thread does is done for one connection (a queued task, a selected
 * key, a stall check, a retry after buffers were released) or for the listener (accepting).
 * Anything thrown while working for a connection, an {@link OutOfMemoryError} for direct memory
 * included, is logged and closes that connection only; the loop goes on serving the others. An
 * {@code OutOfMemoryError} of the heap (any but direct memory's) goes to
 * {@link OutOfMemory#heapExhausted} first, which in the {@code datanode} command ends the process. Only a failing
 * {@code select} itself stops the server; if the loop ever ends that way, the failure is logged
 * at ERROR and the listening socket is closed, so that new clients are refused instead of waiting
 * for a greeting that never comes.
 *
 * <h2>Connection caps</h2>
 * A new connection beyond {@link Limits#maxConnectionsPerSource} from its source address, or
 * beyond {@link Limits#maxConnections} in all, is closed before the greeting, unless a connection
 * idle for {@link Limits#idleEvictNanos} can be closed to make room: the one idle longest of the
 * newcomer's source at the source cap, of the source holding the most connections at the node's
 * cap. Idle connections are closed for nothing else (real clients keep them open for long).
 *
 * <h2>Direct memory</h2>
 * Write payloads and read reply buffers take buffers from the pool within its node-wide budget
 * ({@link BufferPool#tryAcquire}). A connection whose next request does not fit stops reading
 * (its request header stays in its receive buffer) and waits here; when buffers are released the
 * pool wakes the selector, which lets the waiting connections try again in the order they came.
 * Other connections go on being served meanwhile, and a request is let through whatever its size
 * when no buffer is held, so a payload larger than the budget cannot wait forever.
 */
final class NbdServer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(NbdServer.class.getName());

    /** How often the selector wakes, at the least, to look for stalled connections. */
    static final long TICK_MILLIS = 250;
    /**
     * Most bytes of queued replies the selector thread writes in one round of its loop, over all
     * connections: as much as a worker reads in one piece of a request ({@link NbdRequest#PIECE_BYTES},
     * 1 MiB), so that clients of large reads take turns, in a rotating order, and the round's reads,
     * done first, wait for no longer than a worker's piece. A smaller round costs more than it
     * saves: at 128 KiB the selector spent a fifth more CPU per GiB of 1 MiB reads, in epoll and
     * write calls, and that CPU was taken from every client (docs/benchmarks.md, sections 5 and 8).
     */
    static final int ROUND_WRITE_BYTES = NbdRequest.PIECE_BYTES;
    /** Threads that open volume files (blocking file system calls) for the selector thread. */
    static final int OPENER_THREADS = 2;

    /** What the server serves: looked up on every option, so changes apply to new connections. */
    interface Exports {
        /** The volume exported under {@code name}, or null. */
        VolumeStore lookup(String name);

        /** All exports, for NBD_OPT_LIST. */
        Collection<VolumeStore> all();
    }

    /**
     * Tunables of the IO path: per connection, the requests in flight and bytes buffered before
     * the server stops reading from it, how long its replies may stay unread, how long its
     * handshake may take and how long a request it has begun to send may take to arrive; the open
     * connections beyond which new ones are refused, in all and from one source address; and how
     * long a connection must have been idle to be closed for a newcomer when a cap is reached.
     */
    record Limits(int maxInFlight, long maxBufferedBytes, long writeStallNanos, long handshakeNanos, int maxConnections,
            int maxConnectionsPerSource, long requestNanos, long idleEvictNanos) {

        // The defaults: their one home; the data node's builder, its --help and its Javadoc cite them.

        /** Requests unanswered per connection before the node stops reading from it. */
        static final int DEFAULT_MAX_IN_FLIGHT = 128;
        /** MiB of payloads and unsent replies per connection before the node stops reading from it. */
        static final int DEFAULT_MAX_BUFFERED_MIB = 64;
        /** Seconds a client may leave its replies unread before it is dropped. */
        static final int DEFAULT_WRITE_STALL_SECONDS = 30;
        /** Seconds a client may take from connecting to entering transmission. */
        static final int DEFAULT_HANDSHAKE_SECONDS = 30;
        /** Open connections beyond which new ones are refused. */
        static final int DEFAULT_MAX_CONNECTIONS = 1024;
        /** Open connections from one source address beyond which new ones from it are refused. */
        static final int DEFAULT_MAX_CONNECTIONS_PER_SOURCE = 256;
        /** Seconds a request may take to arrive once it has begun. */
        static final int DEFAULT_REQUEST_SECONDS = 10;
        /** Seconds a connection must have been idle to be closed for a newcomer at a cap. */
        static final int DEFAULT_IDLE_EVICT_SECONDS = 10;

        /** The defaults above. */
        static Limits defaults() {
            return new Limits(DEFAULT_MAX_IN_FLIGHT, (long) DEFAULT_MAX_BUFFERED_MIB << 20,
                    TimeUnit.SECONDS.toNanos(DEFAULT_WRITE_STALL_SECONDS), TimeUnit.SECONDS.toNanos(DEFAULT_HANDSHAKE_SECONDS),
                    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_SOURCE, TimeUnit.SECONDS.toNanos(DEFAULT_REQUEST_SECONDS),
                    TimeUnit.SECONDS.toNanos(DEFAULT_IDLE_EVICT_SECONDS));
        }
    }

    final Exports exports;
    final QosExecutor executor;
    /** Non-null only with QoS off (benchmarks): requests bypass the scheduler and run here. */
    final java.util.concurrent.Executor bypass;
    final BufferPool pool;
    /** The server's TLS: its identity and whom it lets in (NBD_OPT_STARTTLS). */
    final NbdTls tls;
    final Limits limits;
    private final Selector selector;
    private final ServerSocketChannel listener;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Task> tasks = new ConcurrentLinkedQueue<>();
    private final Set<NbdConnection> connections = ConcurrentHashMap.newKeySet();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean running = true;
    /** Tests: runs on the selector thread when a connection is about to stop reading, before it does. */
    volatile java.util.function.Consumer<NbdConnection> beforePause;
    /** The most replies one connection has had queued unwritten (diagnostics and tests). */
    private final java.util.concurrent.atomic.AtomicInteger peakQueuedReplies = new java.util.concurrent.atomic.AtomicInteger();
    /** Replies written together with others of their batch (diagnostics and tests). */
    private final java.util.concurrent.atomic.LongAdder gatheredReplies = new java.util.concurrent.atomic.LongAdder();
    /** Times the selector thread returned from {@code select} (written by that thread only). */
    private volatile long wakeups;
    /** Opens volume files for connections entering transmission, off the selector thread. */
    private final java.util.concurrent.ThreadPoolExecutor opener;
    /** Set while new connections are refused for {@link Limits#maxConnections} (selector thread). */
    private boolean atCapacity;
    /** Open connections by source address (selector thread). */
    private final java.util.Map<java.net.InetAddress, java.util.List<NbdConnection>> bySource = new java.util.HashMap<>();
    /** Open TLS connections by their certificate's tenant (selector thread). */
    private final java.util.Map<java.util.UUID, Integer> byTenant = new java.util.HashMap<>();
    /** When a refusal for a source's cap was last logged (selector thread): one line per 10 s at most. */
    private long sourceCapLoggedAt = System.nanoTime() - TimeUnit.SECONDS.toNanos(10);
    /**
     * Connections that stopped reading because the pool's budget had no room for a write
     * payload, in the order they asked (selector thread).
     */
    private final ArrayDeque<NbdConnection> memoryWaiters = new ArrayDeque<>();
    /** Set by the pool (any thread) when buffers were released while a connection waited for room. */
    private volatile boolean memoryFreed;

    NbdServer(InetSocketAddress listen, Exports exports, QosExecutor executor, java.util.concurrent.Executor bypass,
            BufferPool pool, Limits limits, NbdTls tls) throws IOException {
        this.exports = exports;
        this.tls = tls;
        this.executor = executor;
        this.bypass = bypass;
        this.pool = pool;
        this.limits = limits;
        java.util.concurrent.atomic.AtomicInteger openers = new java.util.concurrent.atomic.AtomicInteger();
        this.opener = new java.util.concurrent.ThreadPoolExecutor(OPENER_THREADS, OPENER_THREADS, 30, TimeUnit.SECONDS,
                new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "weir-nbd-open-" + openers.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        opener.allowCoreThreadTimeOut(true);
        this.selector = Selector.open();
        this.listener = ServerSocketChannel.open();
        try {
            listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            listener.bind(listen, 256);
            listener.configureBlocking(false);
            listener.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException e) {
            listener.close();
            selector.close();
            throw e;
        }
        pool.onRoom(() -> {
            memoryFreed = true;
            selector.wakeup();
        });
        this.thread = new Thread(this::loop, "weir-nbd-selector");
        thread.setDaemon(true);
        thread.start();
    }

    /** The bound address (the port is the real one when 0 was asked for). */
    InetSocketAddress localAddress() {
        try {
            return (InetSocketAddress) listener.getLocalAddress();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Open connections, in handshake or transmission. */
    int connectionCount() {
        return connections.size();
    }

    /** A task for the selector thread, done on behalf of one connection. */
    private record Task(NbdConnection connection, Runnable work) {
    }

    /**
     * Runs {@code task} for {@code connection} on the selector thread soon; if it throws, that
     * connection is closed (see "Failures").
     */
    void execute(NbdConnection connection, Runnable task) {
        tasks.add(new Task(connection, task));
        selector.wakeup();
    }

    /** Selector thread: {@code c} reads on in the next round ({@link #readOn}), once however often asked. */
    void readOnNextRound(NbdConnection c) {
        if (!c.readOnQueued) {
            c.readOnQueued = true;
            readOn.add(c);
        }
    }

    /** Any thread: every TLS connection checks its client certificate again ({@link NbdTlsPeer#revalidate}). */
    void revalidateTls() {
        for (NbdConnection c : connections) {
            execute(c, c.tls::revalidate);
        }
    }

    /** Any thread: {@code n} replies held by a {@link ReplyBatch} went to one connection together. */
    void noteGatheredReplies(int n) {
        gatheredReplies.add(n);
    }

    /** Replies written together with others of their batch ({@link ReplyBatch}) since the server started. */
    long gatheredReplies() {
        return gatheredReplies.sum();
    }

    /** Any thread: a connection has {@code n} replies queued unwritten; records a new peak. */
    void noteQueuedReplies(int n) {
        if (n > peakQueuedReplies.get()) {
            peakQueuedReplies.accumulateAndGet(n, Math::max);
        }
    }

    /** The most replies any connection has had queued unwritten since the server started. */
    int peakQueuedReplies() {
        return peakQueuedReplies.get();
    }

    /** Times the selector thread has returned from {@code select}: a busy selector shows here. */
    long selectorWakeups() {
        return wakeups;
    }

    boolean inSelectorThread() {
        return Thread.currentThread() == thread;
    }

    /**
     * Opens {@code v}'s files on an opener thread, then runs {@code done} for {@code c} on the
     * selector thread with the failure, or null if the files are open.
     */
    void openFiles(NbdConnection c, VolumeStore v, java.util.function.Consumer<IOException> done) {
        opener.execute(() -> {
            IOException failure = null;
            try {
                v.open();
            } catch (IOException e) {
                failure = e;
            } catch (RuntimeException e) {
                failure = new IOException(e);
            }
            IOException f = failure;
            execute(c, () -> done.accept(f));
        });
    }

    /**
     * Selector thread: {@code c} stopped reading because the buffer budget had no room for its
     * next write payload or read reply; once buffers are released, {@link NbdConnection#memoryAvailable} runs.
     */
    void awaitMemory(NbdConnection c) {
        memoryWaiters.add(c);
    }

    /** Selector thread: tells the connections waiting for the buffer budget to try again, in order. */
    private void retryMemoryWaiters() {
        memoryFreed = false;
        for (int n = memoryWaiters.size(); n > 0; n--) {
            NbdConnection c = memoryWaiters.poll();
            if (c == null) {
                return; // closed meanwhile
            }
            contained(c, c::memoryAvailable); // one that finds no room yet adds itself again
        }
    }

    /**
     * Selector thread: a TLS connection's tenant is known; answers whether it may stay, within
     * {@link Limits#maxConnectionsPerSource} connections of one tenant (the per-source cap, per
     * tenant once clients present certificates). One that may is counted until it is forgotten.
     */
    boolean admitTenant(java.util.UUID tenant) {
        int n = byTenant.getOrDefault(tenant, 0);
        if (n >= limits.maxConnectionsPerSource()) {
            return false;
        }
        byTenant.put(tenant, n + 1);
        return true;
    }

    /** Selector thread. */
    void forget(NbdConnection c) {
        memoryWaiters.remove(c);
        java.util.UUID tenant = c.tls.admitted();
        if (tenant != null) {
            byTenant.computeIfPresent(tenant, (t, n) -> n > 1 ? n - 1 : null);
        }
        java.util.List<NbdConnection> same = bySource.get(c.source);
        if (same != null && same.remove(c) && same.isEmpty()) {
            bySource.remove(c.source);
        }
        connections.remove(c);
        if (connections.isEmpty()) {
            synchronized (connections) {
                connections.notifyAll();
            }
        }
    }

    /** Closes the listening socket: new clients are refused; open connections go on. */
    void stopAccepting() {
        try {
            listener.close();
        } catch (IOException e) {
            LOG.log(Level.WARNING, "closing the NBD listener: " + e);
        }
    }

    /**
     * Asks every open connection to answer what it has in flight and close (as when its export is
     * removed), and waits up to {@code timeoutNanos} for all to be closed.
     *
     * @return true if none is left open
     */
    boolean drain(long timeoutNanos) throws InterruptedException {
        for (NbdConnection c : connections) {
            execute(c, () -> c.shutdown("node stopping"));
        }
        long deadline = System.nanoTime() + timeoutNanos;
        synchronized (connections) {
            while (!connections.isEmpty()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(connections, Math.min(left, TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS)));
            }
        }
        return true;
    }

    /** Bytes the selector may still write in this round (selector thread). */
    private int roundWriteBudget = ROUND_WRITE_BYTES;
    /** The keys of a round that are writable, written after every read (selector thread). */
    private final java.util.ArrayList<SelectionKey> writable = new java.util.ArrayList<>();
    /**
     * TLS connections that read their round's bound with their session maybe holding more
     * decrypted bytes, which no OP_READ announces: they read on in the next round, after the
     * others had theirs (selector thread only; filled during a round, taken at the next).
     */
    private java.util.ArrayList<NbdConnection> readOn = new java.util.ArrayList<>();
    private java.util.ArrayList<NbdConnection> readingOn = new java.util.ArrayList<>();
    /** Where the next round starts writing among its writable keys (selector thread). */
    private int writeRotation;

    /** Selector thread: what is left of the round's write budget, taken. */
    int takeWriteBudget() {
        int n = roundWriteBudget;
        roundWriteBudget = 0;
        return n;
    }

    /** Selector thread: gives back what a connection did not write of its budget. */
    void returnWriteBudget(int unused) {
        roundWriteBudget += unused;
    }

    private void loop() {
        nextTick = System.nanoTime();
        try {
            // The loop stays this small on purpose: the JIT compiles round() as a method. As one
            // 600-byte loop it ran as on-stack-replacement code, deoptimized whenever the load took
            // a new path, and the selector then ran interpreted until recompiled.
            while (running) {
                round();
            }
        } catch (Throwable e) {
            LOG.log(Level.ERROR, "NBD selector loop failed: the node no longer serves NBD clients", e);
            OutOfMemory.checkFatal(e);
        } finally {
            // new clients are refused rather than left waiting for a greeting nobody will send
            stopAccepting();
            for (NbdConnection c : connections) {
                contained(c, () -> c.abort("server stopping"));
            }
            try {
                selector.close();
            } catch (IOException ignored) {
                // nothing left to do
            }
            stopped.countDown();
        }
    }

    /** When the selector next checks its connections for stalls and timeouts (selector thread). */
    private long nextTick;

    /** One round of the selector: tasks, then reads, then writes within the round's budget. */
    private void round() throws IOException {
        if (readOn.isEmpty()) {
            selector.select(TICK_MILLIS);
        } else {
            selector.selectNow(); // a connection reads on: no waiting for the others
        }
        wakeups++;
        java.util.ArrayList<NbdConnection> due = readOn; // those of the last round; this round's go to the next
        readOn = readingOn;
        readingOn = due;
        Task t;
        while ((t = tasks.poll()) != null) {
            contained(t.connection(), t.work());
        }
        if (memoryFreed) {
            retryMemoryWaiters();
        }
        // reads first, then writes within the round's budget, from a rotating start
        Set<SelectionKey> keys = selector.selectedKeys();
        Iterator<SelectionKey> it = keys.iterator();
        while (it.hasNext()) {
            SelectionKey k = it.next();
            it.remove();
            if (k.attachment() == null) {
                accept();
            } else {
                NbdConnection c = (NbdConnection) k.attachment();
                contained(c, () -> c.onReadable(k));
                if (k.isValid() && k.isWritable()) {
                    writable.add(k);
                }
            }
        }
        for (NbdConnection c : readingOn) { // after the connections the socket announced
            c.readOnQueued = false;
            contained(c, c::readOn);
        }
        readingOn.clear();
        roundWriteBudget = ROUND_WRITE_BYTES;
        int n = writable.size();
        for (int i = 0, start = n == 0 ? 0 : Math.floorMod(writeRotation++, n); i < n; i++) {
            SelectionKey k = writable.get((start + i) % n);
            NbdConnection c = (NbdConnection) k.attachment();
            contained(c, () -> c.onWritable(k));
        }
        writable.clear();
        long now = System.nanoTime();
        if (now - nextTick >= 0) {
            nextTick = now + TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
            for (NbdConnection c : connections) {
                contained(c, () -> c.checkStalled(now));
            }
        }
    }

    /**
     * Selector thread: runs {@code work} for {@code c}; if it throws anything, an
     * {@link OutOfMemoryError} included, logs it and closes {@code c} only.
     */
    private void contained(NbdConnection c, Runnable work) {
        try {
            work.run();
        } catch (Throwable e) {
            if (!OutOfMemory.checkFatal(e)) {
                LOG.log(Level.ERROR, "NBD connection failed on the selector thread; closing it", e);
            }
            try {
                c.abort("internal error: " + e);
            } catch (Throwable again) {
                LOG.log(Level.ERROR, "closing the failed connection", again);
                forget(c);
            }
        }
    }

    private void accept() {
        SocketChannel ch;
        try {
            while ((ch = listener.accept()) != null) {
                java.net.InetAddress source = ((InetSocketAddress) ch.getRemoteAddress()).getAddress();
                java.util.List<NbdConnection> same = bySource.getOrDefault(source, java.util.List.of());
                if (same.size() >= limits.maxConnectionsPerSource() && !evictIdle(same)) {
                    long now = System.nanoTime();
                    if (now - sourceCapLoggedAt > TimeUnit.SECONDS.toNanos(10)) {
                        sourceCapLoggedAt = now;
                        LOG.log(Level.WARNING, "{0} NBD connections open from {1}, the maximum for one source, none idle:"
                                + " refusing new ones from it", same.size(), source.getHostAddress());
                    }
                    ch.close(); // before the greeting: the client sees the connection closed
                    continue;
                }
                if (connections.size() >= limits.maxConnections() && !evictIdle(largestSource())) {
                    if (!atCapacity) {
                        atCapacity = true;
                        LOG.log(Level.WARNING, "{0} NBD connections open, the maximum, none idle: refusing new ones",
                                connections.size());
                    }
                    ch.close(); // before the greeting: the client sees the connection closed
                    continue;
                }
                atCapacity = false;
                NbdConnection c = null;
                try {
                    ch.configureBlocking(false);
                    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
                    c = new NbdConnection(this, ch, source);
                    SelectionKey key = ch.register(selector, SelectionKey.OP_READ, c);
                    connections.add(c);
                    bySource.computeIfAbsent(source, s -> new java.util.ArrayList<>()).add(c);
                    c.start(key);
                } catch (Throwable e) { // an OutOfMemoryError for its receive buffer included
                    OutOfMemory.checkFatal(e);
                    LOG.log(Level.WARNING, "accepting a connection: " + e);
                    if (c != null) {
                        NbdConnection failed = c;
                        contained(failed, () -> failed.abort("accept failed"));
                    }
                    ch.close();
                }
            }
        } catch (IOException e) {
            LOG.log(Level.WARNING, "accept failed: " + e);
        }
    }

    /** Selector thread: the connections of the source that has the most open. */
    private java.util.List<NbdConnection> largestSource() {
        java.util.List<NbdConnection> largest = java.util.List.of();
        for (java.util.List<NbdConnection> l : bySource.values()) {
            if (l.size() > largest.size()) {
                largest = l;
            }
        }
        return largest;
    }

    /**
     * Selector thread: closes the one of {@code candidates} idle longest, if it has been idle for
     * {@link Limits#idleEvictNanos} (see "Connection caps"); false if none has.
     */
    private boolean evictIdle(java.util.List<NbdConnection> candidates) {
        long now = System.nanoTime();
        NbdConnection oldest = null;
        long longest = -1;
        for (NbdConnection c : candidates) {
            long idle = c.idleNanos(now);
            if (idle >= limits.idleEvictNanos() && idle > longest) {
                longest = idle;
                oldest = c;
            }
        }
        if (oldest == null) {
            return false;
        }
        LOG.log(Level.INFO, "closing an NBD connection from {0} idle for {1} s to let a new one in (connection cap)",
                oldest.source.getHostAddress(), longest / 1_000_000_000L);
        NbdConnection evicted = oldest;
        contained(evicted, () -> evicted.abort("idle, evicted at the connection cap"));
        return true;
    }

    /** Closes every connection gracefully (in-flight requests answered first) on the selector thread. */
    void closeGracefully(Collection<NbdConnection> conns) {
        for (NbdConnection c : conns) {
            execute(c, () -> c.shutdown("export removed"));
        }
    }

    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        opener.shutdownNow();
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        selector.wakeup();
        if (Thread.currentThread() != thread) {
            try {
                stopped.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
