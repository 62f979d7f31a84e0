package io.weir.scheduler;

import io.weir.scheduler.SchedulerConfig.VolumeSpec;

/**
 * A volume: one flow with an intrusive FIFO of requests ({@link TicketQueue}), a counter, limits and an optional
 * reservation. It is also the volume's public {@link VolumeHandle}.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class FlowNode extends SchedNode implements VolumeHandle {

    /** The scheduler that owns this node: a handle is only accepted by its own scheduler. */
    final Object owner;
    /** Set when the volume was removed and fully drained; its handle is dead from then on. */
    boolean retired;
    VolumeSpec spec;
    TenantNode tenant;
    CostModel costModel;
    int capacity;

    int inFlight;

    /** Reservation interval {@code 1e9 / minIops}, or 0 when the volume has no reservation. */
    long reservationInterval;
    /** mClock reservation tag of the head request: the time by which it is due. */
    long reservationTag;

    long readOps;
    long writeOps;
    long readBytes;
    long writeBytes;
    /** Requests applied as a copy for the volume's primary ({@link IoKind#REPLICA}), and their bytes. */
    long replicaOps;
    long replicaBytes;
    long rejected;
    long cpuNanos;

    FlowNode(VolumeSpec spec, int slot, Object owner, long now) {
        super(spec.id(), spec.weight(), slot);
        this.owner = owner;
        this.deepUntil = now; // not deep: a clock's origin is arbitrary, so 0 may lie ahead
        apply(spec, now);
    }

    /**
     * Takes its (first or new) spec: weight, limits, reservation, cost model and queue bound; a
     * volume named again is live again. Its tenant is the scheduler's to change.
     */
    void apply(VolumeSpec s, long now) {
        limit(s.maxIops(), s.burstIops(), s.maxBytesPerSec(), s.burstBytesPerSec(), now);
        setWeight(s.weight());
        draining = false;
        spec = s;
        costModel = s.costModel();
        capacity = s.queueCapacity();
        reservationInterval = s.minIops() > 0 ? Math.max(1, 1_000_000_000L / s.minIops()) : 0;
    }

    /** True if its own or its tenant's limits, or a reservation, decide this volume's share. */
    boolean shaped() {
        return reservationInterval > 0 || limiter != Limiter.UNLIMITED || tenant.limiter != Limiter.UNLIMITED;
    }

    @Override
    public String volumeId() {
        return id;
    }
}
