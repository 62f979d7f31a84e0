package io.weir.scheduler;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs storage work on a fixed pool of worker threads in the order a {@link HierarchicalScheduler}
 * decides, and charges each task the worker time its work actually used: CPU time, plus time
 * blocked in the store.
 *
 * <h2>How a request flows</h2>
 * <pre>
 *  submit(volume, kind, bytes, work) ─┐ admission         inbox            ┌──────── worker 1 ────────┐
 *  submit(volume, ...)  ──────────────┼─(bound check, ──► (lock-free ──►   │ lock: drain inbox into   │
 *  submitBackground(task, work) ──────┘  lock-free)        MPSC list)      │ scheduler, complete last,│
 *        │                                                                 │ next(); unlock; run work │
 *        └─► QueueFullException (thrown at once)                           └──────── worker N ────────┘
 * </pre>
 * <ol>
 *   <li>{@link #submit} admits the work against its volume's queue bound (or
 *       {@link #submitBackground} against its task's) with one atomic increment and pushes it on
 *       a lock-free inbox; it returns a {@link CompletableFuture}. If the queue is full it throws
 *       {@link QueueFullException} immediately; nothing is ever dropped silently. Submitters
 *       never take the scheduler lock unless a worker is asleep and must be woken.</li>
 *   <li>A worker takes the scheduler lock, moves everything in the inbox into the scheduler (in
 *       arrival order), reports its previous requests' CPU and worker time, and takes the next
 *       decision: the task with the least worker time per share, then within the foreground task
 *       the reservation phase or the lowest-counter tenant and volume that is within its
 *       limits.</li>
 *   <li>The worker runs the work outside the lock and completes the future with the result or
 *       the exception thrown. When the backlog is deep it takes up to {@value #MAX_BATCH}
 *       decisions per lock acquisition and runs them in order, which amortises the lock (and
 *       tells a {@link BatchListener}, so that the caller can merge what the requests do on
 *       their way out, such as writing replies). If
 *       everything queued is throttled, workers sleep until the earliest eligible time or the
 *       next submission.</li>
 * </ol>
 *
 * <h2>Thread safety</h2>
 * Every public method may be called from any thread, by any number of submitters at once. All
 * scheduler state sits behind one {@link ReentrantLock}, which only workers (and the rare
 * reconfigure, snapshot or wake-up) take; it is held only for a scheduling decision
 * ({@code O(log flows)}), never while work runs. Futures are completed outside the lock, on the
 * worker thread, so dependent stages attached with the non-async {@code then*} methods run on a
 * worker: keep them short or use the {@code *Async} variants. A submission that races with a
 * {@link #reconfigure} removing its volume is still run (the volume drains); if the volume is
 * already gone when the worker picks the submission up, its future completes exceptionally with
 * {@link IllegalArgumentException}.
 *
 * <h2>CPU accounting</h2>
 * Reading a thread's CPU clock is a system call (hundreds of nanoseconds), as long as a small
 * request itself. So each worker samples its {@link CpuClock} at most once per
 * {@linkplain Builder#cpuSampleInterval(long) sample interval} (default
 * {@value #DEFAULT_CPU_SAMPLE_INTERVAL_NANOS} ns). Between samples a request is charged its
 * wall time times the worker's CPU/wall ratio over the previous interval (the wall clock is read
 * once per request, so a request's wall time starts where the previous one in its batch ended); the request that closes
 * an interval is charged the interval's measured CPU time minus what was already charged in it.
 * Every interval's CPU time is therefore charged once in total (unless the requests before the
 * sample were estimated above it, when the interval is charged that estimate), a request longer than an
 * interval is charged almost exactly its own CPU time (time blocked is not CPU), and short
 * requests share the interval's time in proportion to their wall time. An interval of 0 reads
 * the CPU clock for every request. The charge includes the worker's scheduling overhead and
 * excludes time spent parked while idle.
 *
 * <p>The tasks' counters are charged worker time, measured the same way: at each sample the
 * worker also reads its thread's run delay ({@code RunDelay}: time runnable but waiting for a
 * CPU), and an interval's worker time is its CPU time plus what its requests' wall time holds
 * beyond that CPU time and run delay, the time they were blocked (in a store slower than the
 * CPU, a lock, a page fault). Without a run delay (not Linux) worker time is CPU time. Usage
 * reports CPU time ({@link Stats#cpuNanos()}) and, per task, worker time
 * ({@link Stats#workerNanos()}). Each worker's {@link CpuSampler} does both;
 * submissions reach the scheduler through the {@link Inbox}, so that a worker's loop reads as
 * "complete the last batch, drain the inbox, take a batch, run it".
 *
 * <h2>Lifecycle</h2>
 * {@link #close()} stops accepting new work ({@link RejectedExecutionException}), lets the workers
 * finish everything already queued or running (still honouring limits, so throttled work drains
 * at its limit), then joins them. It is idempotent.
 *
 * <h2>Example</h2>
 * <pre>{@code
 * try (QosExecutor ex = QosExecutor.builder(config).workers(4).build()) {
 *     CompletableFuture<Integer> crc = ex.submit("vol-1", IoKind.READ, buf.length, () -> checksum(buf));
 *     ex.submitBackground("scrub", () -> scrubOneExtent());
 *     ex.setUtilization("flush", writeBufferFill());   // drives a dynamic share
 *     SchedulerSnapshot usage = ex.snapshot(true);     // for the agent's usage report
 * }
 * }</pre>
 */
public final class QosExecutor implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(QosExecutor.class.getName());

    /**
     * Most requests a worker takes per lock acquisition. A worker takes a full batch only while no
     * other worker is idle, and otherwise a fair share of the backlog, so batching does not leave
     * a worker without work. It amortises the lock (and the cache lines of the scheduler moving
     * between cores) and bounds how many requests the root scheduler dispatches before it sees
     * their CPU charges.
     */
    static final int MAX_BATCH = 8;

    /**
     * Longest an idle worker parks without a deadline; a safety net only, since submitters wake
     * idle workers directly.
     */
    static final long IDLE_PARK_NANOS = 100_000_000L;

    /** Default CPU sample interval: one thread-CPU-time read per millisecond of work per worker. */
    public static final long DEFAULT_CPU_SAMPLE_INTERVAL_NANOS = 1_000_000L;

    private final HierarchicalScheduler<Job<?>> scheduler;
    private final ReentrantLock lock = new ReentrantLock();
    private final TimeSource clock;
    private final CpuClock cpuClock;
    private final long cpuSampleInterval;
    private final BatchListener batchListener;
    private final List<Thread> workers;
    /** Per worker: 1 while it is parked (or about to park) with no work; claimed by a waker. */
    private final AtomicIntegerArray parked;

    /** Admission gates by volume id and by background task name; replaced whole on reconfigure. */
    private volatile Map<String, Gate> volumeGates;
    private volatile Map<String, Gate> taskGates;

    /** Submissions not yet moved into the scheduler; the lock holder takes them. */
    private final Inbox<Job<?>> inbox = new Inbox<>(new Job<>(null, null, null, 0, null, RequestRecord.WHOLE));

    /** Submitted and not yet dispatched (inbox plus scheduler queues). */
    private final AtomicInteger undispatched = new AtomicInteger();
    /** Workers asleep or about to sleep; submitters wake one when this is non-zero. */
    private final AtomicInteger idleWorkers = new AtomicInteger();
    private volatile boolean closed;

    private QosExecutor(Builder b) {
        this.clock = b.timeSource;
        this.cpuClock = b.cpuClock;
        this.cpuSampleInterval = b.cpuSampleInterval;
        this.batchListener = b.batchListener;
        this.scheduler = new HierarchicalScheduler<>(b.config, clock.nanoTime());
        scheduler.anticipation(b.anticipation);
        installGates(b.config);
        this.workers = new ArrayList<>(b.workers);
        this.parked = new AtomicIntegerArray(b.workers);
        for (int i = 0; i < b.workers; i++) {
            int index = i;
            workers.add(b.threadFactory.newThread(() -> workerLoop(index)));
        }
        workers.forEach(Thread::start);
    }

    /** Creates an executor with {@code workers} threads, the system clock and thread CPU time. */
    public QosExecutor(SchedulerConfig config, int workers) {
        this(builder(config).workers(workers));
    }

    /** Returns a builder for an executor enforcing {@code config}. */
    public static Builder builder(SchedulerConfig config) {
        return new Builder(config);
    }

    /**
     * Submits foreground IO work for a volume.
     *
     * @param volumeId the volume (flow) the IO belongs to
     * @param kind read, write or what a copy applies for its primary, for statistics and the cost model
     * @param bytes the IO size: the basis of its cost and of byte limits; at most
     *     {@link HierarchicalScheduler#MAX_REQUEST_BYTES}
     * @param work the work; its result or exception completes the returned future
     * @return a future completed by a worker once the work has run
     * @throws QueueFullException if the volume's queue is at its bound
     * @throws IllegalArgumentException if the volume is not configured (or is being removed), or
     *     {@code bytes} is negative or above {@link HierarchicalScheduler#MAX_REQUEST_BYTES}
     * @throws RejectedExecutionException if the executor is closed
     */
    public <T> CompletableFuture<T> submit(String volumeId, IoKind kind, long bytes, Callable<T> work) {
        return submit(volumeId, kind, bytes, RequestRecord.WHOLE, work);
    }

    /**
     * Submits one piece of a request run as several, the next once the one before has run: a
     * large request then holds a worker for one piece at a time, and another flow's request
     * waits for one piece, not the whole. The request counts once: see
     * {@link HierarchicalScheduler#enqueuePiece} for how its pieces are charged and counted.
     * Only a first piece is refused for a full queue.
     *
     * @param bytes the piece's bytes
     * @param first the request's first piece
     * @param last the request's last piece
     * @throws QueueFullException if a first piece finds the volume's queue at its bound
     * @throws IllegalArgumentException as {@link #submit}
     * @throws RejectedExecutionException if the executor is closed
     */
    public <T> CompletableFuture<T> submitPiece(String volumeId, IoKind kind, long bytes, boolean first, boolean last,
            Callable<T> work) {
        return submit(volumeId, kind, bytes, RequestRecord.piece(first, last), work);
    }

    /** A whole request, or a piece of one: a first piece (or a whole request) meets the queue bound. */
    private <T> CompletableFuture<T> submit(String volumeId, IoKind kind, long bytes, byte piece, Callable<T> work) {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(work, "work");
        HierarchicalScheduler.checkRequestBytes(bytes);
        Gate gate = volumeGates.get(volumeId);
        if (gate == null) {
            throw new IllegalArgumentException("unknown or removed volume '" + volumeId + "'");
        }
        Job<T> job = new Job<>(work, volumeId, kind, bytes, gate, piece);
        admit(gate, job, RequestRecord.isFirst(piece));
        return job;
    }

    /**
     * Submits work for a background task (gc, flush, replication, scrub, ...).
     *
     * @throws QueueFullException if the task's queue is at its bound
     * @throws IllegalArgumentException if the task is not a configured background task
     * @throws RejectedExecutionException if the executor is closed
     */
    public <T> CompletableFuture<T> submitBackground(String task, Callable<T> work) {
        Objects.requireNonNull(work, "work");
        Gate gate = taskGates.get(task);
        if (gate == null) {
            throw new IllegalArgumentException("unknown or removed background task '" + task + "'");
        }
        Job<T> job = new Job<>(work, task, null, 0, gate, RequestRecord.WHOLE);
        admit(gate, job, true);
        return job;
    }

    private void admit(Gate gate, Job<?> job, boolean bounded) {
        undispatched.incrementAndGet(); // before the closed check: close() waits for it
        if (closed) {
            undispatched.decrementAndGet();
            throw new RejectedExecutionException("QosExecutor is closed");
        }
        if (gate.admitted.incrementAndGet() - gate.released.get() > gate.capacity && bounded) {
            gate.admitted.decrementAndGet();
            gate.rejected.incrementAndGet();
            undispatched.decrementAndGet();
            throw new QueueFullException(gate.name, gate.capacity);
        }
        inbox.push(job); // a volatile store: pairs with the idle check below (Dekker)
        if (idleWorkers.get() > 0) {
            wakeOne();
        }
    }

    /**
     * Wakes one parked worker, without any lock. Correct against a worker going idle at the same
     * time because the worker publishes {@code parked} and {@code idleWorkers} before it checks the
     * inbox, and a submitter links its job before it reads {@code idleWorkers}; an unpark that
     * arrives before the park makes the park return at once.
     */
    private void wakeOne() {
        for (int i = 0; i < parked.length(); i++) {
            if (parked.get(i) == 1 && parked.compareAndSet(i, 1, 0)) {
                idleWorkers.decrementAndGet();
                LockSupport.unpark(workers.get(i));
                return;
            }
        }
    }

    private void wakeAll() {
        for (int i = 0; i < parked.length(); i++) {
            if (parked.compareAndSet(i, 1, 0)) {
                idleWorkers.decrementAndGet();
            }
            LockSupport.unpark(workers.get(i));
        }
    }

    /** Moves the inbox into the scheduler. Caller holds {@link #lock}. */
    private void drainInbox(long now) {
        for (Job<?> next; (next = inbox.poll()) != null;) {
            try {
                if (next.kind != null) {
                    scheduler.enqueueAdmitted(handle(next), next.kind, next.bytes, next, now, next.piece);
                } else {
                    scheduler.enqueueBackgroundAdmitted(next.target, next, now);
                }
            } catch (RuntimeException e) {
                // the volume or task was removed and fully drained before this job arrived
                next.gate.release();
                undispatched.decrementAndGet();
                next.completeExceptionally(e);
            }
        }
    }

    /**
     * The scheduler handle of a job's volume, cached in its gate so that moving the inbox into the
     * scheduler does no id lookup per job. Caller holds {@link #lock}.
     *
     * @throws IllegalArgumentException if the volume is gone
     */
    private VolumeHandle handle(Job<?> job) {
        Gate g = job.gate;
        VolumeHandle h = g.handle;
        if (h == null || !scheduler.isLive(h)) {
            h = scheduler.volumeAdmitted(job.target);
            if (h == null) {
                throw new IllegalArgumentException("unknown or removed volume '" + job.target + "'");
            }
            g.handle = h;
        }
        return h;
    }

    private void installGates(SchedulerConfig config) {
        Map<String, Gate> oldV = volumeGates == null ? Map.of() : volumeGates;
        Map<String, Gate> oldT = taskGates == null ? Map.of() : taskGates;
        Map<String, Gate> v = new HashMap<>();
        for (SchedulerConfig.VolumeSpec s : config.volumes()) {
            Gate g = oldV.get(s.id());
            v.put(s.id(), g == null ? new Gate(s.id(), s.queueCapacity()) : g.withCapacity(s.queueCapacity()));
        }
        Map<String, Gate> t = new HashMap<>();
        for (SchedulerConfig.TaskSpec s : config.tasks()) {
            if (!s.isForeground()) {
                Gate g = oldT.get(s.name());
                t.put(s.name(), g == null ? new Gate(s.name(), s.queueCapacity()) : g.withCapacity(s.queueCapacity()));
            }
        }
        // A gate dropped with its volume or task hands its refusals to the scheduler's node, which
        // lives on while it drains and may be placed back: its rejected count never goes down.
        oldV.forEach((id, g) -> {
            if (!v.containsKey(id)) {
                scheduler.addRejected(id, g.rejected.get());
            }
        });
        oldT.forEach((name, g) -> {
            if (!t.containsKey(name)) {
                scheduler.addTaskRejected(name, g.rejected.get());
            }
        });
        volumeGates = v;
        taskGates = t;
    }

    /**
     * Applies a new configuration atomically; see {@link HierarchicalScheduler#reconfigure}.
     * Submissions still in the inbox are first moved into the scheduler, so they are governed by
     * the new policies like everything else already queued.
     */
    public void reconfigure(SchedulerConfig config) {
        lock.lock();
        try {
            long now = clock.nanoTime();
            drainInbox(now);
            scheduler.reconfigure(config, now);
            installGates(config);
        } finally {
            lock.unlock();
        }
        wakeAll();
    }

    /** Feeds the utilization signal of a task with a dynamic share. */
    public void setUtilization(String task, double utilization) {
        lock.lock();
        try {
            scheduler.setUtilization(task, utilization);
        } finally {
            lock.unlock();
        }
    }

    /** A snapshot of all statistics; latency histograms keep accumulating. */
    public SchedulerSnapshot snapshot() {
        return snapshot(false);
    }

    /**
     * A snapshot of all statistics, optionally restarting the latency histograms. Queue depths
     * include submissions still in the inbox; {@code rejected} counts submissions refused by
     * admission.
     */
    public SchedulerSnapshot snapshot(boolean resetLatencies) {
        lock.lock();
        try {
            long now = clock.nanoTime();
            drainInbox(now);
            SchedulerSnapshot s = scheduler.snapshot(now, resetLatencies);
            Map<String, Stats> vols = new HashMap<>(s.volumes());
            Map<String, Stats> tenants = new HashMap<>(s.tenants());
            Map<String, Long> extraByTenant = new HashMap<>();
            for (SchedulerConfig.VolumeSpec v : scheduler.config().volumes()) {
                Gate g = volumeGates.get(v.id());
                Stats st = vols.get(v.id());
                if (g != null && st != null && g.rejected.get() > 0) {
                    vols.put(v.id(), withExtraRejected(st, g.rejected.get()));
                    extraByTenant.merge(v.tenantId(), g.rejected.get(), Long::sum);
                }
            }
            extraByTenant.forEach((t, n) -> tenants.computeIfPresent(t, (k, st) -> withExtraRejected(st, n)));
            Map<String, Stats> tasks = new HashMap<>(s.tasks());
            taskGates.forEach((name, g) -> tasks.computeIfPresent(name, (k, st) -> withExtraRejected(st, g.rejected.get())));
            return s.withStats(vols, tenants, tasks);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Each volume's queued plus in-flight requests, by id, submissions still in the inbox
     * included: the {@code queueDepth + inFlight} of {@link #snapshot(boolean)}, without building
     * its statistics (latency histograms and all), for sampling every second.
     */
    public Map<String, Long> queueDepths() {
        lock.lock();
        try {
            drainInbox(clock.nanoTime());
            return scheduler.queueDepths();
        } finally {
            lock.unlock();
        }
    }

    private static Stats withExtraRejected(Stats s, long n) {
        return new Stats(s.id(), s.readOps(), s.writeOps(), s.readBytes(), s.writeBytes(), s.queueDepth(), s.inFlight(),
                s.rejected() + n, s.waitP50Nanos(), s.waitP99Nanos(), s.serviceP50Nanos(), s.serviceP99Nanos(),
                s.throttledNanos(), s.cpuNanos(), s.share(), s.waitMaxNanos(), s.serviceMaxNanos(), s.workerNanos(),
                s.replicaOps(), s.replicaBytes());
    }

    /** The configuration in force. */
    public SchedulerConfig config() {
        lock.lock();
        try {
            return scheduler.config();
        } finally {
            lock.unlock();
        }
    }


    /** Requests submitted and not yet completed. */
    public int pending() {
        lock.lock();
        try {
            return undispatched.get() + scheduler.runningCount();
        } finally {
            lock.unlock();
        }
    }

    /** True once {@link #close()} has been called. */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Stops accepting work, waits until everything submitted has completed, and stops the
     * workers. Idempotent. If interrupted while waiting, it keeps waiting and restores the
     * interrupt status afterwards.
     */
    @Override
    public void close() {
        closed = true;
        wakeAll();
        boolean interrupted = false;
        for (Thread t : workers) {
            if (t == Thread.currentThread()) {
                continue; // close() called from a work item: the worker exits after it returns
            }
            while (t.isAlive()) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void workerLoop(int index) {
        try (RunDelay runDelay = RunDelay.openForCurrentThread()) { // null where not measured
            Worker w = new Worker(index, new CpuSampler(cpuClock, runDelay, cpuSampleInterval, System.nanoTime()));
            // The loop stays this small on purpose: the JIT compiles take() and run() as methods.
            // As one 700-byte loop it ran as on-stack-replacement code, deoptimized whenever the
            // load took a new path, and the workers then ran interpreted until recompiled.
            while (w.take()) {
                w.run();
            }
        }
    }

    /** A worker thread's state: the batch it took, and the CPU and worker time each request used. */
    private final class Worker {
        private final int index;
        private final CpuSampler cpu;
        @SuppressWarnings("unchecked")
        private final Ticket<Job<?>>[] batch = new Ticket[MAX_BATCH];
        private final long[] batchCpu = new long[MAX_BATCH];
        private final long[] batchWork = new long[MAX_BATCH];
        private final int workerCount = workers.size();
        private int batchSize;

        Worker(int index, CpuSampler cpu) {
            this.index = index;
            this.cpu = cpu;
        }

        /**
         * Under the lock: completes the batch that ran, then takes the next one, parking while
         * nothing is eligible. False when the executor is closed and drained: the worker exits.
         */
        boolean take() {
            lock.lock();
            try {
                long now = clock.nanoTime();
                for (int i = 0; i < batchSize; i++) {
                    scheduler.complete(batch[i], batchCpu[i], batchWork[i], now);
                    batch[i] = null;
                }
                batchSize = 0;
                for (;;) {
                    drainInbox(now);
                    Ticket<Job<?>> t = scheduler.next(now);
                    if (t != null) {
                        batch[batchSize++] = t;
                        // batch while no other worker is waiting for work; otherwise take a fair share
                        int limit = idleWorkers.get() == 0
                                ? MAX_BATCH : Math.min(MAX_BATCH, 1 + scheduler.queuedCount() / workerCount);
                        while (batchSize < limit && (t = scheduler.next(now)) != null) {
                            batch[batchSize++] = t;
                        }
                        undispatched.addAndGet(-batchSize);
                        for (int i = 0; i < batchSize; i++) {
                            batch[i].request().gate.release();
                        }
                        break;
                    }
                    if (closed && undispatched.get() == 0) {
                        wakeAll(); // the others re-check and exit too
                        return false;
                    }
                    now = park(now);
                }
                if (closed && undispatched.get() == 0) {
                    wakeAll(); // last work taken: parked workers may exit now
                } else if (idleWorkers.get() > 0 && scheduler.queuedCount() > 0) {
                    wakeOne(); // let another idle worker look at the remaining work
                }
                return true;
            } finally {
                lock.unlock();
            }
        }

        /**
         * Holds the lock on entry and on return: parks until a submission, the next timed event
         * of the scheduler, or the idle bound. Returns the time after it.
         */
        private long park(long now) {
            long deadline = scheduler.nextEligibleTime();
            parked.set(index, 1);
            idleWorkers.incrementAndGet();
            if (!inbox.isEmpty()) {
                // a submission raced with going idle: take it back unless a waker already did
                if (parked.compareAndSet(index, 1, 0)) {
                    idleWorkers.decrementAndGet();
                }
                return now;
            }
            lock.unlock();
            try {
                if (deadline == HierarchicalScheduler.NO_DEADLINE) {
                    LockSupport.parkNanos(QosExecutor.this, IDLE_PARK_NANOS);
                } else if (deadline - now > 0) {
                    LockSupport.parkNanos(QosExecutor.this, deadline - now);
                }
            } finally {
                lock.lock();
            }
            if (parked.compareAndSet(index, 1, 0)) {
                idleWorkers.decrementAndGet(); // timed out or spurious: nobody claimed us
            }
            return clock.nanoTime();
        }

        /** Outside the lock: runs the batch taken, measuring each request. */
        void run() {
            // One wall-clock read per request (reads cost 30-60 ns on some VMs): a request's wall
            // time runs from the previous one's end, so it includes the bookkeeping in between.
            BatchListener listener = batchSize > 1 ? batchListener : null;
            if (listener != null) {
                try {
                    listener.batchStarted();
                } catch (RuntimeException e) {
                    listenerFailed("batchStarted", e);
                }
            }
            try {
                long start = System.nanoTime();
                for (int i = 0; i < batchSize; i++) {
                    batch[i].request().run();
                    long end = System.nanoTime();
                    if (listener != null && requestRan(listener, start, end, i + 1 < batchSize ? batch[i + 1].request().work : null)) {
                        end = System.nanoTime(); // what the listener did for it is the request's
                    }
                    batchCpu[i] = cpu.charge(start, end);
                    batchWork[i] = cpu.work();
                    start = end;
                }
            } finally {
                if (listener != null) {
                    try {
                        listener.batchEnded();
                    } catch (RuntimeException e) {
                        listenerFailed("batchEnded", e);
                    }
                }
            }
        }

        /** The listener's {@link BatchListener#requestRan}; one that throws is taken as having done nothing. */
        private boolean requestRan(BatchListener listener, long start, long end, Object next) {
            try {
                return listener.requestRan(start, end, next);
            } catch (RuntimeException e) {
                listenerFailed("requestRan", e);
                return false;
            }
        }
    }

    /**
     * A batch listener threw: a bug of the caller's, logged; the worker goes on with its batch
     * (what the listener held for it is the listener's to write), since a worker that died would
     * leave the rest of its batch unrun and its requests' callers waiting for ever.
     */
    private static void listenerFailed(String method, RuntimeException e) {
        LOG.log(System.Logger.Level.ERROR, "the batch listener's " + method + " failed; the batch goes on", e);
    }

    /**
     * Admission state of one volume or background task. The queue bound is checked against
     * {@code admitted - released}: submitters increment {@code admitted} atomically, while
     * {@code released} is only written by lock holders (one per dispatched or failed job), so it
     * needs no atomic read-modify-write, just an ordered store.
     */
    private static final class Gate {
        final String name;
        final int capacity;
        final AtomicLong admitted;
        final AtomicLong released;
        final AtomicLong rejected;
        /** Cached scheduler handle of the volume (null for tasks); read and written under the lock. */
        VolumeHandle handle;

        Gate(String name, int capacity) {
            this(name, capacity, new AtomicLong(), new AtomicLong(), new AtomicLong());
        }

        private Gate(String name, int capacity, AtomicLong admitted, AtomicLong released, AtomicLong rejected) {
            this.name = name;
            this.capacity = capacity;
            this.admitted = admitted;
            this.released = released;
            this.rejected = rejected;
        }

        Gate withCapacity(int c) {
            return c == capacity ? this : new Gate(name, c, admitted, released, rejected);
        }

        /** One admitted job left admission's count. Caller holds the scheduler lock. */
        void release() {
            released.lazySet(released.get() + 1);
        }
    }

    /**
     * The work, its future and its inbox link in one object: the only per-request allocation of
     * the executor.
     */
    private static final class Job<T> extends CompletableFuture<T> implements Inbox.Link<Job<?>> {
        private static final VarHandle NEXT;

        static {
            try {
                NEXT = MethodHandles.lookup().findVarHandle(Job.class, "next", Job.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final Callable<T> work;
        final String target;
        final IoKind kind;
        final long bytes;
        final Gate gate;
        /** Which piece of its request ({@link RequestRecord#piece}; {@link RequestRecord#WHOLE} for most). */
        final byte piece;
        @SuppressWarnings("unused")
        private volatile Job<?> next;

        Job(Callable<T> work, String target, IoKind kind, long bytes, Gate gate, byte piece) {
            this.work = work;
            this.target = target;
            this.kind = kind;
            this.bytes = bytes;
            this.gate = gate;
            this.piece = piece;
        }

        @Override
        public Job<?> next() {
            return (Job<?>) NEXT.getVolatile(this);
        }

        @Override
        public void setNext(Job<?> n) {
            NEXT.setVolatile(this, n);
        }

        void run() {
            if (isDone()) {
                return; // cancelled by the caller before it ran
            }
            try {
                complete(work.call());
            } catch (Throwable e) {
                completeExceptionally(e);
            }
        }
    }

    /**
     * Told on a worker thread when it runs a batch of more than one request (see
     * {@link #MAX_BATCH}), so that the caller can hold back what each request does on its way
     * out, such as writing its reply to a socket, and do it for several requests at once. Its
     * methods run on the worker, outside the scheduler lock, and should do no more than what
     * they held would have done in the requests' own runs (a write to a socket whose peer is
     * slow to read may wait as it would have there); the time is charged to the request after
     * which it happens. A method that throws is logged at ERROR and the batch goes on, as if
     * {@code requestRan} had answered false: the worker never dies of its listener.
     */
    public interface BatchListener {

        /** The worker starts running a batch of more than one request. */
        void batchStarted();

        /**
         * A request of the batch ran from {@code startNanos} to {@code endNanos}
         * ({@link System#nanoTime()}); {@code next} is the work the worker runs next in this
         * batch (the {@code Callable} submitted), or null after the batch's last request.
         * Answers whether it did work of its own after {@code endNanos}: the worker then charges
         * that time to this request.
         */
        boolean requestRan(long startNanos, long endNanos, Object next);

        /** The batch has run (also when a request ended with an error): after its last {@link #requestRan}. */
        void batchEnded();
    }

    /** Configures a {@link QosExecutor}. */
    public static final class Builder {
        private final SchedulerConfig config;
        private int workers = Runtime.getRuntime().availableProcessors();
        private TimeSource timeSource = TimeSource.system();
        private CpuClock cpuClock = CpuClock.threadCpuTime();
        private long cpuSampleInterval = DEFAULT_CPU_SAMPLE_INTERVAL_NANOS;
        private ThreadFactory threadFactory = defaultThreadFactory();
        private boolean anticipation;
        private BatchListener batchListener;

        private Builder(SchedulerConfig config) {
            this.config = Objects.requireNonNull(config, "config");
        }

        /** Number of worker threads; default: available processors. */
        public Builder workers(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("workers must be >= 1");
            }
            this.workers = n;
            return this;
        }

        /** Clock for scheduling decisions and latencies; default {@link TimeSource#system()}. */
        public Builder timeSource(TimeSource t) {
            this.timeSource = Objects.requireNonNull(t);
            return this;
        }

        /**
         * How CPU time is measured; default {@link CpuClock#threadCpuTime()}. Worker time adds the
         * time blocked, from the wall clock and the thread's run delay, whatever this clock.
         */
        public Builder cpuClock(CpuClock c) {
            this.cpuClock = Objects.requireNonNull(c);
            return this;
        }

        /**
         * How often each worker reads its CPU clock, in nanoseconds of wall time; 0 reads it for
         * every request. Default {@value QosExecutor#DEFAULT_CPU_SAMPLE_INTERVAL_NANOS}.
         */
        public Builder cpuSampleInterval(long nanos) {
            if (nanos < 0) {
                throw new IllegalArgumentException("cpuSampleInterval must be >= 0");
            }
            this.cpuSampleInterval = nanos;
            return this;
        }

        /** Factory for worker threads; default: daemon threads named {@code weir-qos-N}. */
        public Builder threadFactory(ThreadFactory f) {
            this.threadFactory = Objects.requireNonNull(f);
            return this;
        }

        /**
         * Whether the scheduler waits a moment for a deep flow whose queue ran dry before it
         * serves a sibling further ahead, so that weights hold while the backlog waits outside
         * the scheduler ({@link HierarchicalScheduler#anticipation}); default off: purely
         * work-conserving.
         */
        public Builder anticipation(boolean on) {
            this.anticipation = on;
            return this;
        }

        /** Told when a worker runs a batch of more than one request; default none. */
        public Builder batchListener(BatchListener l) {
            this.batchListener = Objects.requireNonNull(l);
            return this;
        }

        public QosExecutor build() {
            return new QosExecutor(this);
        }

        private static ThreadFactory defaultThreadFactory() {
            AtomicInteger n = new AtomicInteger();
            return r -> {
                Thread t = new Thread(r, "weir-qos-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            };
        }
    }
}
