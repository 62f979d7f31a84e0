package io.weir.datanode;

import io.weir.scheduler.QosExecutor;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The data node's background work, run as the scheduler's background tasks under their CPU
 * shares, each in small steps so that the root scheduler can interleave it with client IO:
 * <ul>
 *   <li>{@code scrub}: reads the open volumes' data blocks and verifies them against their
 *       checksums ({@link VolumeStore#scrub}); a pass over all volumes starts every
 *       {@code scrubPeriod} (0: continuously). Utilization: how far the current pass is overdue,
 *       as a fraction of the period (0 when it falls due, 1 a period later and after; 1 while
 *       running back to back; 0 between passes).</li>
 *   <li>{@code gc}: punches the ranges clients trimmed ({@link VolumeStore#gcStep}). Utilization: bytes
 *       awaiting reclamation over {@link #GC_FULL_BYTES}.</li>
 *   <li>{@code flush}: there is no write-back buffer of our own; the page cache is one, and
 *       flush destages it: it starts write-back of volumes with unflushed writes every
 *       {@link #FLUSH_INTERVAL_NANOS} (sooner past {@link #FLUSH_FULL_BYTES}), so that client
 *       FLUSH and FUA find little left to write. It does not wait for the disk
 *       ({@link VolumeStore#destage}): a forcing step held one of the workers blocked for the whole
 *       write-back, every second, under a random-write load. Utilization: unflushed bytes over
 *       {@link #FLUSH_FULL_BYTES}.</li>
 * </ul>
 * Each task keeps at most a few steps queued or running; a finished step submits
 * the next at once while there is work, so a busy task stays backlogged in the scheduler and gets
 * exactly its share. A driver thread ticks every {@link #TICK_MILLIS} ms to start idle tasks and
 * report utilizations ({@link QosExecutor#setUtilization}).
 */
final class BackgroundTasks implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(BackgroundTasks.class.getName());

    /** Scrub steps that may be queued or running at once (gc and flush: one). */
    static final int SCRUB_OUTSTANDING = 2;
    /** Driver period. */
    static final long TICK_MILLIS = 50;
    /** Pending trimmed bytes at which gc's utilization reaches 1. */
    static final long GC_FULL_BYTES = 1L << 30;
    /** Unflushed bytes at which flush's utilization reaches 1 (and a volume is flushed at once). */
    static final long FLUSH_FULL_BYTES = 256L << 20;
    /** Longest a volume's writes stay unflushed by the flush task. */
    static final long FLUSH_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final QosExecutor executor;
    private final Supplier<List<VolumeStore>> volumes;
    private final long scrubPeriodNanos;
    private final Thread driver;
    private volatile boolean running = true;

    private final Task scrub = new Task("scrub", SCRUB_OUTSTANDING);
    private final Task gc = new Task("gc", 1);
    private final Task flush = new Task("flush", 1);
    private final LongSupplier nanoTime;

    // scrub cursor, guarded by this: a pass takes the open volumes in the order of their ids, so
    // that its place (a volume's id and a block) holds whichever volumes open or close meanwhile
    private String scrubId = "";
    private long scrubBlock;
    private volatile long lastPassEnd;
    private volatile boolean passRunning;
    private volatile long lastFlush;
    /** The flush pass under way; a volume is destaged at most once per pass (flush steps run one at a time). */
    private int flushPass;
    private final AtomicInteger scrubPasses = new AtomicInteger();

    BackgroundTasks(QosExecutor executor, Supplier<List<VolumeStore>> volumes, long scrubPeriodNanos) {
        this(executor, volumes, scrubPeriodNanos, System::nanoTime);
    }

    /** With the clock that times the scrub passes and the flush interval (tests move their own). */
    BackgroundTasks(QosExecutor executor, Supplier<List<VolumeStore>> volumes, long scrubPeriodNanos, LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
        this.lastPassEnd = nanoTime.getAsLong();
        this.lastFlush = lastPassEnd;
        this.executor = executor;
        this.volumes = volumes;
        this.scrubPeriodNanos = scrubPeriodNanos;
        this.driver = new Thread(this::loop, "weir-background");
        driver.setDaemon(true);
        driver.start();
    }

    /** Completed scrub passes over all open volumes. */
    int scrubPasses() {
        return scrubPasses.get();
    }

    /** Scrub steps queued or running. */
    int scrubStepsOutstanding() {
        return scrub.outstanding.get();
    }

    private void loop() {
        while (running) {
            try {
                long now = nanoTime.getAsLong();
                // the steps start a pass (scrubStep, under the lock): a flag set here could start
                // one just after a step had ended the last
                boolean scrubDue = passRunning || passDue(now);
                if (scrubDue) {
                    scrub.fill(this::scrubStep);
                }
                long pendingTrim = 0;
                long dirty = 0;
                for (VolumeStore v : volumes.get()) {
                    pendingTrim += v.pendingTrimBytes();
                    dirty += v.dirtyBytes.get();
                }
                if (pendingTrim > 0) {
                    gc.fill(this::gcStep);
                }
                if (dirty >= FLUSH_FULL_BYTES || dirty > 0 && now - lastFlush >= FLUSH_INTERVAL_NANOS) {
                    flush.fill(this::flushStep);
                }
                // a pass falls due a period after the last one ended: overdue from then on
                double overdue = scrubPeriodNanos == 0 ? 1
                        : Math.max(0, Math.min(1, (double) (now - lastPassEnd - scrubPeriodNanos) / scrubPeriodNanos));
                utilization("scrub", scrubDue ? overdue : 0);
                utilization("gc", Math.min(1, (double) pendingTrim / GC_FULL_BYTES));
                utilization("flush", Math.min(1, (double) dirty / FLUSH_FULL_BYTES));
                Thread.sleep(TICK_MILLIS);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "background driver", e);
            }
        }
    }

    /** A scrub period has passed since the last pass ended. */
    private boolean passDue(long now) {
        return now - lastPassEnd >= scrubPeriodNanos;
    }

    private void utilization(String task, double u) {
        try {
            executor.setUtilization(task, u);
        } catch (RuntimeException e) {
            // the task is not configured: nothing to steer
        }
    }

    /**
     * One scrub step: claims the next {@value VolumeStore#SCRUB_STEP_BLOCKS} blocks of the open volumes
     * in turn, by id (under this object's lock), and verifies them (outside it). False once the pass is
     * complete and the next one is not due at once, and for a step that finds no pass running and
     * none due: without that check the step in flight beside the one that ended a pass started the
     * next at once, and an idle node scrubbed back to back for good after its first pass.
     */
    boolean scrubStep() throws Exception {
        VolumeStore v;
        long from;
        synchronized (this) {
            if (!passRunning) {
                // a step still in flight when another ended the pass: the next pass waits its period
                if (!passDue(nanoTime.getAsLong())) {
                    return false;
                }
                passRunning = true;
            }
            VolumeStore current = null;
            VolumeStore next = null;
            boolean anyOpen = false;
            for (VolumeStore x : volumes.get()) {
                if (!x.isOpen()) {
                    continue;
                }
                anyOpen = true;
                int c = x.id.compareTo(scrubId);
                if (c == 0) {
                    current = x;
                } else if (c > 0 && (next == null || x.id.compareTo(next.id) < 0)) {
                    next = x;
                }
            }
            if (current == null || scrubBlock >= current.blocks()) {
                current = next;
                scrubBlock = 0;
            }
            if (current == null) {
                scrubId = "";
                scrubBlock = 0;
                passRunning = false;
                lastPassEnd = nanoTime.getAsLong();
                scrubPasses.incrementAndGet();
                return scrubPeriodNanos == 0 && anyOpen;
            }
            v = current;
            scrubId = v.id;
            from = scrubBlock;
            scrubBlock += VolumeStore.SCRUB_STEP_BLOCKS;
        }
        try {
            v.scrub(from, from + VolumeStore.SCRUB_STEP_BLOCKS);
        } catch (VolumeClosedException e) {
            // removed meanwhile: the next step moves on
        }
        return true;
    }

    private boolean gcStep() throws Exception {
        for (VolumeStore v : volumes.get()) {
            if (v.pendingTrimBytes() > 0) {
                try {
                    v.gcStep();
                } catch (VolumeClosedException e) {
                    continue; // removed meanwhile: its trims go with its files
                }
                return true;
            }
        }
        return false;
    }

    /**
     * One flush step: destages the next volume with unflushed writes not yet destaged in this
     * pass. False once the pass is complete; the next starts {@link #FLUSH_INTERVAL_NANOS} later
     * (sooner past {@link #FLUSH_FULL_BYTES}). Without the once-per-pass rule a pass never ended
     * while a client kept writing (each step found new writes and asked for the next), and the
     * task destaged back to back instead of every second.
     */
    boolean flushStep() throws Exception {
        long now = nanoTime.getAsLong();
        for (VolumeStore v : volumes.get()) {
            if (v.flushPass != flushPass && v.dirtyBytes.get() > 0 && v.isOpen()) {
                v.flushPass = flushPass;
                try {
                    v.destage();
                } catch (VolumeClosedException e) {
                    continue; // closed meanwhile: closing flushed it
                }
                return true;
            }
        }
        flushPass++;
        lastFlush = now;
        return false;
    }

    @Override
    public void close() {
        running = false;
        driver.interrupt();
        try {
            driver.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One background task's submissions: at most a fixed number at a time. */
    private final class Task {
        private final String name;
        private final int max;
        private final AtomicInteger outstanding = new AtomicInteger();

        Task(String name, int max) {
            this.name = name;
            this.max = max;
        }

        void fill(Callable<Boolean> step) {
            while (running) {
                int n = outstanding.get();
                if (n >= max || !outstanding.compareAndSet(n, n + 1)) {
                    if (n >= max) {
                        return;
                    }
                    continue;
                }
                try {
                    executor.submitBackground(name, step).whenComplete((more, failure) -> {
                        outstanding.decrementAndGet();
                        if (failure != null) {
                            LOG.log(Level.WARNING, name + " step failed: " + failure);
                        } else if (Boolean.TRUE.equals(more)) {
                            fill(step);
                        }
                    });
                } catch (IllegalArgumentException | RejectedExecutionException e) {
                    outstanding.decrementAndGet(); // task not configured, queue full or executor closed
                    return;
                }
            }
        }
    }
}
