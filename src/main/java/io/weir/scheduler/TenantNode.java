package io.weir.scheduler;

import io.weir.scheduler.SchedulerConfig.TenantSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * A tenant: the container level of the flow hierarchy. Holds the ready heap of its volumes and
 * the virtual time of that level.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class TenantNode extends SchedNode {

    TenantSpec spec;
    /** Volumes that are backlogged and within their limits, keyed by counter. */
    final IndexedHeap<FlowNode> ready;
    /** Virtual time of the volume level: the largest start counter dispatched so far. */
    long vtime;
    /** All volumes of this tenant, including draining ones. */
    final List<FlowNode> flows = new ArrayList<>();

    /** Deep volumes whose queue ran dry a moment ago, keyed by counter (see "Anticipation" in the package documentation). */
    final IndexedHeap<FlowNode> anticipated;

    TenantNode(TenantSpec spec, int slot, IndexedHeap.Positions readyPositions,
            IndexedHeap.Positions anticipatedPositions, long now) {
        super(spec.id(), spec.weight(), slot);
        this.ready = new IndexedHeap<>(readyPositions);
        this.anticipated = new IndexedHeap<>(anticipatedPositions);
        this.deepUntil = now; // not deep: a clock's origin is arbitrary, so 0 may lie ahead
        apply(spec, now);
    }

    /** Takes its (first or new) spec: weight and limits; a tenant named again is live again. */
    void apply(TenantSpec s, long now) {
        limit(s.maxIops(), s.burstIops(), s.maxBytesPerSec(), s.burstBytesPerSec(), now);
        setWeight(s.weight());
        draining = false;
        spec = s;
    }
}
