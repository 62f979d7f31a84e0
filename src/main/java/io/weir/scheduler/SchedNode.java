package io.weir.scheduler;

/**
 * A node of the foreground flow hierarchy: a volume ({@link FlowNode}) or a tenant
 * ({@link TenantNode}). Holds the flow counter (second currency), the limiter and the heap
 * positions.
 *
 * <h2>Implementation notes</h2>
 *
 * <h3>States</h3>
 * <ul>
 *   <li>{@link #IDLE}: in no heap. Either nothing is queued below it, or (for a tenant) all of
 *       its backlogged volumes are throttled.</li>
 *   <li>{@link #READY}: backlogged and within its limits; in its parent's ready heap keyed by
 *       {@link #counter}.</li>
 *   <li>{@link #THROTTLED}: backlogged but over a limit; in the scheduler's timer heap keyed by
 *       the time it may go again. A throttled node keeps its place nowhere and receives nothing.</li>
 * </ul>
 * Every transition into {@code READY} applies the rejoin rule
 * {@code counter = max(counter, parent.vtime)}.
 *
 * <h3>Counter arithmetic</h3>
 * Counters are fixed point: one unit is {@code 1 / COUNTER_SCALE} cost-unit per unit of weight.
 * Each charge adds {@code cost * COUNTER_SCALE / weight} and carries the remainder, so the
 * counter never drifts from the exact rational value {@code base + C / w} by more than one unit.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
abstract class SchedNode {

    /** Counter resolution: {@code 2^16} units per byte per unit weight. */
    static final long COUNTER_SCALE = 1L << 16;

    static final int IDLE = 0;
    static final int READY = 1;
    static final int THROTTLED = 2;

    final String id;
    int weight;
    long counter;
    private long remainder;
    Limiter limiter = Limiter.UNLIMITED;
    int state = IDLE;
    boolean draining;

    long throttledSince;
    long throttledNanos;

    /** Dense index of this node, for the heaps' position tables; unique among live nodes. */
    final int slot;

    SchedNode(String id, int weight, int slot) {
        this.id = id;
        this.weight = weight;
        this.slot = slot;
    }

    /** Advances the counter by {@code cost / weight}. */
    final void chargeCounter(long cost) {
        long num = cost * COUNTER_SCALE + remainder;
        counter += num / weight;
        remainder = num % weight;
    }

    final void setWeight(int w) {
        if (w != weight) {
            weight = w;
            remainder = 0;
        }
    }

    /** Applies the rejoin rule against the level's virtual time. */
    final void rejoin(long vtime) {
        if (counter - vtime < 0) {
            counter = vtime;
            remainder = 0;
        }
    }

    final long throttledNanos(long now) {
        return state == THROTTLED ? throttledNanos + Math.max(0, now - throttledSince) : throttledNanos;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + id + ", counter=" + counter + ", state=" + state + "]";
    }
}
