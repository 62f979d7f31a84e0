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
 * A cost is at most {@link HierarchicalScheduler#MAX_COST} ({@code 2^40}), so a charge is at most
 * {@code 2^56} units and {@code cost * COUNTER_SCALE + remainder} cannot overflow.
 *
 * <h3>Range</h3>
 * Counters are plain non-negative {@code long}s: the level they belong to rebases them
 * ({@link #rebase}) before its virtual time passes {@link HierarchicalScheduler#REBASE_THRESHOLD},
 * and a counter's lead over its level's virtual time is bounded ({@link #capLead}), so no counter
 * comes near {@code 2^63}, however long the scheduler runs.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
abstract class SchedNode extends TicketQueue {

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
    /** The limits {@link #limiter} enforces: max IOPS, burst IOPS, max bytes/s, burst bytes/s (null: none set yet). */
    private long[] limits;
    int state = IDLE;
    boolean draining;

    /**
     * Until when this node counts as <em>deep</em>: its client recently had two or more requests
     * at the scheduler at once (queued or running), so a dry queue means its next request is on
     * the way (see "Anticipation" in the package documentation).
     */
    long deepUntil;
    /** While this idle node is in its level's anticipated heap: until when it keeps its place. */
    long anticipatedUntil;
    /** While this idle node is in its level's anticipated heap: until when siblings wait for it. */
    long holdUntil;

    private long throttledSince;
    private long throttledUntil;
    private long throttledNanos;

    /** Dense index of this node, for the heaps' position tables; unique among live nodes. */
    final int slot;

    SchedNode(String id, int weight, int slot) {
        this.id = id;
        this.weight = weight;
        this.slot = slot;
    }

    /**
     * Sets the node's limits ({@link Limiter#of}): a new limiter when they changed, or on the
     * first call; the current one, with its burst credit, when they did not.
     */
    final void limit(long maxIops, long burstIops, long maxBytesPerSec, long burstBytesPerSec, long now) {
        long[] next = {maxIops, burstIops, maxBytesPerSec, burstBytesPerSec};
        if (!java.util.Arrays.equals(next, limits)) {
            limits = next;
            limiter = Limiter.of(maxIops, burstIops, maxBytesPerSec, burstBytesPerSec, now);
        }
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
            placeAt(vtime);
        }
    }

    /** Places the node at {@code vtime} as a newcomer: no credit, no debt. */
    final void placeAt(long vtime) {
        counter = vtime;
        remainder = 0;
    }

    /**
     * Bounds the lead over the level's virtual time after a reservation-phase charge: at most
     * {@code max(cost, RESERVATION_LEAD_BYTES)} per unit of weight.
     */
    final void capLead(long vtime, long cost) {
        long cap = vtime + Math.max(cost, HierarchicalScheduler.RESERVATION_LEAD_BYTES) * COUNTER_SCALE / weight;
        if (counter > cap) {
            counter = cap;
            remainder = 0;
        }
    }

    /**
     * Moves the counter down by {@code base} when its level rebases; a counter that lagged the
     * level by more than that (an idle node) goes to 0, the new virtual time, which is where the
     * rejoin rule would have put it anyway.
     */
    final void rebase(long base) {
        long c = counter - base;
        if (c < 0) {
            placeAt(0);
        } else {
            counter = c;
        }
    }

    /** Enters {@link #THROTTLED} at {@code now} until {@code until}; the caller arms the timer. */
    final void throttle(long now, long until) {
        state = THROTTLED;
        throttledSince = now;
        throttledUntil = until;
    }

    /**
     * Leaves {@link #THROTTLED} for {@link #IDLE}, counting the throttled time up to {@code at} but
     * never past the due time, which {@link #throttledNanos(long)} may already have reported.
     */
    final void endThrottle(long at) {
        throttledNanos += throttledBetween(at);
        state = IDLE;
    }

    /**
     * Time spent throttled since creation, as of {@code now}. Never decreases: the current spell
     * counts only up to its due time, so a timer that fires late adds nothing a snapshot missed.
     */
    final long throttledNanos(long now) {
        return state == THROTTLED ? throttledNanos + throttledBetween(now) : throttledNanos;
    }

    private long throttledBetween(long at) {
        long end = at - throttledUntil < 0 ? at : throttledUntil;
        return Math.max(0, end - throttledSince);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + id + ", counter=" + counter + ", state=" + state + "]";
    }
}
