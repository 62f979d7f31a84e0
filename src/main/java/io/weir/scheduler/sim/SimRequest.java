package io.weir.scheduler.sim;

import io.weir.scheduler.IoKind;

/** One simulated request. Mutable only by the simulator and its policies (single-threaded). */
public final class SimRequest {
    /** Sequence number, unique within a run. */
    public final long id;
    /** Index of the workload that issued it. */
    public final int workload;
    /** Volume id or task name. */
    public final String target;
    /** True for background work. */
    public final boolean background;
    /** Size in bytes (0 for background). */
    public final long bytes;
    /** Read or write (null for background). */
    public final IoKind kind;
    /** Simulated CPU time the request needs. */
    public final long cpuNanos;
    /** Arrival time. */
    public final long arrivalNanos;
    /** Dispatch time, once dispatched. */
    public long dispatchNanos = -1;
    Object handle;
    long sfqStart;

    SimRequest(long id, int workload, String target, boolean background, long bytes, IoKind kind, long cpuNanos,
            long arrivalNanos) {
        this.id = id;
        this.workload = workload;
        this.target = target;
        this.background = background;
        this.bytes = bytes;
        this.kind = kind;
        this.cpuNanos = cpuNanos;
        this.arrivalNanos = arrivalNanos;
    }
}
