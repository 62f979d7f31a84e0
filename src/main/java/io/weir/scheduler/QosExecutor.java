package io.weir.scheduler;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs storage work on a fixed pool of worker threads in the order a {@link HierarchicalScheduler}
 * decides, and charges each task the CPU time its work actually used.
 *
 * <h2>How a request flows</h2>
 * <pre>
 *  submit(volume, kind, bytes, work) ──┐                 ┌──────────── worker 1 ──────────┐
 *  submit(volume, ...)  ───────────────┤                 │ next() → run work → measure CPU │
 *  submitBackground(task, work) ───────┼──► scheduler ───┤ complete(cpu) → next() → ...    │
 *                                      │   (one lock)    └─────────────────────────────────┘
 *        QueueFullException ◄──────────┘                 ┌──────────── worker N ──────────┐
 *        (thrown at once)                                └─────────────────────────────────┘
 * </pre>
 * <ol>
 *   <li>{@link #submit} queues the work on its volume's flow (or {@link #submitBackground} on a
 *       background task) and returns a {@link CompletableFuture}. If the flow's queue is full it
 *       throws {@link QueueFullException} immediately; nothing is ever dropped silently.</li>
 *   <li>An idle worker takes the scheduler's next decision: the task with the least CPU per
 *       share, then within the foreground task the reservation phase or the lowest-counter tenant
 *       and volume that is within its limits.</li>
 *   <li>The worker runs the work outside the lock, reads its thread's CPU clock, and completes
 *       the future with the result or the exception thrown.</li>
 *   <li>On the same lock acquisition as its next decision, the worker charges the CPU time to
 *       the task. If everything queued is throttled, workers sleep until the earliest eligible
 *       time or the next submission.</li>
 * </ol>
 *
 * <h2>Thread safety</h2>
 * Every public method may be called from any thread, by any number of submitters at once. All
 * scheduler state sits behind one {@link ReentrantLock}; it is held only for a scheduling decision
 * (microseconds at most, {@code O(log flows)}), never while work runs. Futures are completed
 * outside the lock, on the worker thread, so dependent stages attached with the non-async
 * {@code then*} methods run on a worker: keep them short or use the {@code *Async} variants.
 *
 * <h2>CPU accounting</h2>
 * Each worker reads its {@link CpuClock} once per request, at the end of the request, and charges
 * the difference from the previous reading. The charge therefore includes the worker's share of
 * scheduling overhead, which is a few hundred nanoseconds, and excludes time spent parked while
 * idle (thread CPU time does not advance then).
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

    private final HierarchicalScheduler<Job<?>> scheduler;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition workAvailable = lock.newCondition();
    private final TimeSource clock;
    private final CpuClock cpuClock;
    private final List<Thread> workers;
    private int idleWorkers;
    private boolean closed;

    private QosExecutor(Builder b) {
        this.clock = b.timeSource;
        this.cpuClock = b.cpuClock;
        this.scheduler = new HierarchicalScheduler<>(b.config, clock.nanoTime());
        this.workers = new ArrayList<>(b.workers);
        for (int i = 0; i < b.workers; i++) {
            Thread t = b.threadFactory.newThread(this::workerLoop);
            workers.add(t);
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
     * @param kind read or write, for statistics and the cost model
     * @param bytes the IO size: the basis of its cost and of byte limits
     * @param work the work; its result or exception completes the returned future
     * @return a future completed by a worker once the work has run
     * @throws QueueFullException if the volume's queue is at its bound
     * @throws IllegalArgumentException if the volume is not configured (or is being removed)
     * @throws RejectedExecutionException if the executor is closed
     */
    public <T> CompletableFuture<T> submit(String volumeId, IoKind kind, long bytes, Callable<T> work) {
        Job<T> job = new Job<>(Objects.requireNonNull(work, "work"));
        lock.lock();
        try {
            checkOpen();
            scheduler.enqueue(volumeId, kind, bytes, job, clock.nanoTime());
            if (idleWorkers > 0) {
                workAvailable.signal();
            }
        } finally {
            lock.unlock();
        }
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
        Job<T> job = new Job<>(Objects.requireNonNull(work, "work"));
        lock.lock();
        try {
            checkOpen();
            scheduler.enqueueBackground(task, job, clock.nanoTime());
            if (idleWorkers > 0) {
                workAvailable.signal();
            }
        } finally {
            lock.unlock();
        }
        return job;
    }

    private void checkOpen() {
        if (closed) {
            throw new RejectedExecutionException("QosExecutor is closed");
        }
    }

    /** Applies a new configuration atomically; see {@link HierarchicalScheduler#reconfigure}. */
    public void reconfigure(SchedulerConfig config) {
        lock.lock();
        try {
            scheduler.reconfigure(config, clock.nanoTime());
            workAvailable.signalAll();
        } finally {
            lock.unlock();
        }
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

    /** A snapshot of all statistics, optionally restarting the latency histograms. */
    public SchedulerSnapshot snapshot(boolean resetLatencies) {
        lock.lock();
        try {
            return scheduler.snapshot(clock.nanoTime(), resetLatencies);
        } finally {
            lock.unlock();
        }
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

    /** Requests queued or running. */
    public int pending() {
        lock.lock();
        try {
            return scheduler.queuedCount() + scheduler.runningCount();
        } finally {
            lock.unlock();
        }
    }

    /** True once {@link #close()} has been called. */
    public boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops accepting work, waits until everything queued and running has completed, and stops
     * the workers. Idempotent. If interrupted while waiting, it keeps waiting and restores the
     * interrupt status afterwards.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            workAvailable.signalAll();
        } finally {
            lock.unlock();
        }
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

    private void workerLoop() {
        Ticket<Job<?>> done = null;
        long doneCpu = 0;
        long cpuMark = cpuClock.currentThreadCpuNanos();
        for (;;) {
            Ticket<Job<?>> t;
            lock.lock();
            try {
                if (done != null) {
                    scheduler.complete(done, doneCpu, clock.nanoTime());
                    done = null;
                }
                for (;;) {
                    long now = clock.nanoTime();
                    t = scheduler.next(now);
                    if (t != null) {
                        break;
                    }
                    if (closed && scheduler.queuedCount() == 0) {
                        workAvailable.signalAll();
                        return;
                    }
                    long deadline = scheduler.nextEligibleTime();
                    idleWorkers++;
                    try {
                        if (deadline == HierarchicalScheduler.NO_DEADLINE) {
                            workAvailable.await();
                        } else if (deadline - now > 0) {
                            workAvailable.awaitNanos(deadline - now);
                        }
                    } catch (InterruptedException e) {
                        // workers are stopped by close(), not by interrupts; keep going
                    } finally {
                        idleWorkers--;
                    }
                }
                if (idleWorkers > 0 && scheduler.queuedCount() > 0) {
                    workAvailable.signal(); // let another idle worker look at the remaining work
                }
            } finally {
                lock.unlock();
            }
            Job<?> job = t.request();
            job.run();
            long c = cpuClock.currentThreadCpuNanos();
            doneCpu = c - cpuMark;
            cpuMark = c;
            done = t;
        }
    }

    /** The work and its future in one object: the only per-request allocation of the executor. */
    private static final class Job<T> extends CompletableFuture<T> {
        private final Callable<T> work;

        Job(Callable<T> work) {
            this.work = work;
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

    /** Configures a {@link QosExecutor}. */
    public static final class Builder {
        private final SchedulerConfig config;
        private int workers = Runtime.getRuntime().availableProcessors();
        private TimeSource timeSource = TimeSource.system();
        private CpuClock cpuClock = CpuClock.threadCpuTime();
        private ThreadFactory threadFactory = defaultThreadFactory();

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

        /** How CPU time is measured; default {@link CpuClock#threadCpuTime()}. */
        public Builder cpuClock(CpuClock c) {
            this.cpuClock = Objects.requireNonNull(c);
            return this;
        }

        /** Factory for worker threads; default: daemon threads named {@code weir-qos-N}. */
        public Builder threadFactory(ThreadFactory f) {
            this.threadFactory = Objects.requireNonNull(f);
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
