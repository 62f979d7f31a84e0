package io.weir.scheduler;

import io.weir.scheduler.SchedulerConfig.TaskSpec;

/**
 * A task of the root scheduler. Background tasks have their own FIFO; the foreground task's work
 * lives in the flow hierarchy.
 *
 * <h2>Implementation notes</h2>
 * The counter is the first currency: worker nanoseconds (CPU time plus the time a request held
 * its worker blocked; see {@code CpuSampler}) times {@link #SCALE} divided by the current share,
 * charged at completion with the worker time the executor measured, at most {@link #MAX_CHARGE}
 * per completion. The root rebases the counters like every other level
 * ({@link HierarchicalScheduler#REBASE_THRESHOLD}).
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class TaskNode extends TicketQueue {

    /** Counter units per worker nanosecond at share 1; keeps fractional shares precise. */
    static final double SCALE = 1024.0;

    /**
     * Largest charge of one completion, in counter units ({@code 2^54}): about 4.9 hours of worker
     * time at share 1, so it binds only for absurd measurements or tiny shares, and it keeps the
     * root's counters far from {@code 2^63} between two rebases.
     */
    static final long MAX_CHARGE = 1L << 54;

    final String name;
    final boolean foreground;
    TaskSpec spec;
    double share;
    /** {@code SCALE / share}, kept with the share so that a charge multiplies instead of dividing. */
    private double unitsPerNano;
    double utilization;
    long counter;
    boolean wasReady;
    /** The foreground: until when it counts as deep (one of its volumes is; see "Anticipation"). */
    long deepUntil;
    /** The foreground: whether it had work (or waited for a dry flow) at the last decision. */
    boolean busy;
    /** The foreground: whether the root waits for it, having run dry a moment ago, until {@link #anticipatedUntil}. */
    boolean awaited;
    long anticipatedUntil;
    boolean draining;
    int capacity;

    int inFlight;

    long ops;
    long cpuNanos;
    /** Worker time charged, ns: what {@link #counter} divides by the share. */
    long workerNanos;
    long rejected;
    /** Wait-time counts ({@link LatencyRecorder}), allocated on first use. */
    int[] waitCounts;
    /** Service-time counts ({@link LatencyRecorder}), allocated on first use. */
    int[] serviceCounts;

    TaskNode(TaskSpec spec) {
        this.name = spec.name();
        this.foreground = spec.isForeground();
        apply(spec);
    }

    void apply(TaskSpec s) {
        this.spec = s;
        this.capacity = s.queueCapacity();
        setShare(s.dynamic() == null ? s.share() : s.dynamic().shareAt(utilization));
    }

    private void setShare(double s) {
        share = s;
        unitsPerNano = SCALE / s;
    }

    void setUtilization(double u) {
        utilization = u;
        if (spec.dynamic() != null) {
            setShare(spec.dynamic().shareAt(u));
        }
    }

    void charge(long nanos) {
        if (nanos > 0) {
            // the same double as nanos * (SCALE / share); at most MAX_CHARGE, so counters stay in range
            counter += Math.min((long) (nanos * unitsPerNano), MAX_CHARGE);
        }
    }

    /** Moves the counter down by {@code base} when the root rebases (see {@link SchedNode#rebase}). */
    void rebase(long base) {
        long c = counter - base;
        counter = c < 0 ? 0 : c;
    }
}
