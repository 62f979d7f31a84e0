package io.weir.scheduler;

import io.weir.scheduler.SchedulerConfig.TaskSpec;

/**
 * A task of the root scheduler. Background tasks have their own FIFO; the foreground task's work
 * lives in the flow hierarchy.
 *
 * <h2>Implementation notes</h2>
 * The counter is the first currency: CPU nanoseconds times {@link #SCALE} divided by the current
 * share, charged at completion with the CPU time the executor measured.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class TaskNode {

    /** Counter units per CPU nanosecond at share 1; keeps fractional shares precise. */
    static final double SCALE = 1024.0;

    final String name;
    final boolean foreground;
    TaskSpec spec;
    double share;
    /** {@code SCALE / share}, kept with the share so that a charge multiplies instead of dividing. */
    private double unitsPerCpuNano;
    double utilization;
    long counter;
    boolean wasReady;
    boolean draining;
    int capacity;

    Ticket<?> head;
    Ticket<?> tail;
    int size;
    int inFlight;

    long ops;
    long cpuNanos;
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
        unitsPerCpuNano = SCALE / s;
    }

    void setUtilization(double u) {
        utilization = u;
        if (spec.dynamic() != null) {
            setShare(spec.dynamic().shareAt(u));
        }
    }

    void charge(long cpu) {
        if (cpu > 0) {
            counter += (long) (cpu * unitsPerCpuNano); // the same double as cpu * (SCALE / share)
        }
    }

    void push(Ticket<?> t) {
        t.next = null;
        if (tail == null) {
            head = t;
        } else {
            tail.next = t;
        }
        tail = t;
        size++;
    }

    Ticket<?> poll() {
        Ticket<?> t = head;
        head = t.next;
        if (head == null) {
            tail = null;
        }
        t.next = null;
        size--;
        return t;
    }
}
