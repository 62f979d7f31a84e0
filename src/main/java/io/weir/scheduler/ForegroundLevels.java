package io.weir.scheduler;

import io.weir.scheduler.SchedulerConfig.TenantSpec;
import java.util.Collection;
import java.util.Map;

/**
 * The foreground task's two levels of {@link HierarchicalScheduler}: tenants, then their volumes.
 * Chooses the foreground's next request (the reservation phase, then the weight phase), keeps
 * every node of the two levels in the right heap as its queue, counter and limits change (ready,
 * throttled until a timer, idle, or anticipated for a moment), and rebases the levels' counters.
 * The root level (tasks), submission, completion and reconfiguration stay in the scheduler, which
 * calls in here.
 *
 * <p>Structure, as the scheduler's documentation describes it: the reservation phase serves the
 * volume with the earliest reservation tag, stored minus {@link #reservationShift}, once it is due;
 * otherwise the weight phase serves the tenant with the lowest counter in {@link #ready}, then its
 * volume with the lowest counter. A node over a limit waits in {@link #timers}. With anticipation
 * on, a deep node whose queue just ran dry waits in its level's anticipated heap (this class's for
 * tenants, its tenant's for volumes), and {@link #ready(long)} holds the weight phase while one
 * still waited for is more than the slack below the choice.
 *
 * <p>Not thread-safe: called by the scheduler, under its caller's lock.
 */
final class ForegroundLevels {

    private static final byte REPLICA = (byte) IoKind.REPLICA.ordinal();

    private static final IoKind[] KINDS = IoKind.values();

    /** The scheduler's tenants (read here: rebasing, forgetting waits). */
    private final Map<String, TenantNode> tenants;
    private final LatencyBuffer latencies;
    /** Positions in ready heaps (each node is in at most one: its parent's). */
    private final IndexedHeap.Positions readyPositions = new IndexedHeap.Positions();
    private final IndexedHeap.Positions timerPositions = new IndexedHeap.Positions();
    private final IndexedHeap.Positions reservationPositions = new IndexedHeap.Positions();
    private final IndexedHeap.Positions anticipatedPositions = new IndexedHeap.Positions();
    /** Tenants that are backlogged and within their limits, keyed by counter. */
    private final IndexedHeap<TenantNode> ready = new IndexedHeap<>(readyPositions);
    /** Virtual time of the tenant level. */
    long vtime;
    /** Throttled volumes and tenants, keyed by the time they may go again. */
    private final IndexedHeap<SchedNode> timers = new IndexedHeap<>(timerPositions);
    /** Ready volumes with a reservation, keyed by their tag less {@link #reservationShift}. */
    private final IndexedHeap<FlowNode> reservations = new IndexedHeap<>(reservationPositions);
    /**
     * Deep tenants whose volumes all ran dry a moment ago, keyed by counter (see "Anticipation" in
     * the package documentation).
     */
    private final IndexedHeap<TenantNode> anticipated = new IndexedHeap<>(anticipatedPositions);
    /**
     * Set when the weight phase waits for an anticipated node, or the root for the foreground
     * ({@link #holdUntil}); until {@link #wake}. Cleared by each {@link HierarchicalScheduler#next}.
     */
    private boolean held;
    /** Whether deep nodes whose queue runs dry are waited for; off by default. */
    private boolean anticipation;
    private long wake;
    /**
     * Added to every stored reservation tag before it is compared with the clock. Raising it moves
     * all tags forward together, which bounds the lag without changing their order.
     */
    long reservationShift;

    ForegroundLevels(Map<String, TenantNode> tenants, LatencyBuffer latencies) {
        this.tenants = tenants;
        this.latencies = latencies;
    }

    // ------------------------------------------------------------------------- the root's view

    /** Whether the foreground has a request to dispatch now; may set the hold instead. */
    boolean ready(long now) {
        if (reservationDue(now)) {
            return true;
        }
        if (ready.isEmpty()) {
            return false;
        }
        TenantNode tn = ready.peek();
        FlowNode f = tn.ready.peek();
        if (waitsFor(anticipated, tn.counter - slack(tn), now) || waitsFor(tn.anticipated, f.counter - slack(f), now)) {
            held = true;
            return false;
        }
        return true;
    }

    /** Whether the foreground is held for an anticipated node, until {@link #nextEligibleTime}'s wake. */
    boolean held() {
        return held;
    }

    /** Forgets the hold: each decision decides it anew. */
    void clearHold() {
        held = false;
    }

    /** The root waits for the anticipated foreground task until {@code wake}. */
    void holdUntil(long wake) {
        held = true;
        this.wake = wake;
    }

    boolean anticipation() {
        return anticipation;
    }

    /** Turns anticipation on or off; off forgets every wait. */
    void anticipation(boolean on) {
        anticipation = on;
        if (!on) {
            anticipated.clear();
            for (TenantNode tn : tenants.values()) {
                tn.anticipated.clear();
            }
        }
    }

    /** {@link HierarchicalScheduler#nextEligibleTime()}: the earliest timer, due reservation or end of a hold. */
    long nextEligibleTime() {
        long best = HierarchicalScheduler.NO_DEADLINE;
        boolean any = false;
        if (!timers.isEmpty()) {
            best = timers.peekKey();
            any = true;
        }
        if (!reservations.isEmpty()) {
            long r = reservations.peekKey() + reservationShift;
            if (!any || r - best < 0) {
                best = r;
                any = true;
            }
        }
        if (held && (!any || wake - best < 0)) {
            best = wake;
        }
        return best;
    }

    // ------------------------------------------------------------------------------- dispatch

    /** {@link HierarchicalScheduler#ANTICIPATION_SLACK_BYTES} in counter units of {@code n}'s weight. */
    private static long slack(SchedNode n) {
        return HierarchicalScheduler.ANTICIPATION_SLACK_BYTES * SchedNode.COUNTER_SCALE / n.weight;
    }

    /**
     * True if the lowest anticipated node of a level, still waited for, is below {@code counter}
     * (a ready sibling's counter less the slack). Drops entries whose credit expired.
     */
    private boolean waitsFor(IndexedHeap<? extends SchedNode> level, long counter, long now) {
        while (!level.isEmpty()) {
            SchedNode a = level.peek();
            if (a.anticipatedUntil - now <= 0) {
                level.poll();
            } else if (a.holdUntil - now > 0 && level.peekKey() - counter < 0) {
                wake = a.holdUntil;
                return true;
            } else {
                return false;
            }
        }
        return false;
    }

    /** Starts waiting for a deep node whose queue just ran dry, unless its own limits shape it. */
    private <N extends SchedNode> void anticipate(IndexedHeap<N> level, N n, boolean shaped, long now) {
        if (anticipation && !shaped && !n.draining && n.deepUntil - now > 0) {
            n.anticipatedUntil = now + HierarchicalScheduler.ANTICIPATION_CREDIT_NANOS;
            n.holdUntil = now + HierarchicalScheduler.ANTICIPATION_NANOS;
            level.add(n, n.counter);
        }
    }

    private boolean reservationDue(long now) {
        return !reservations.isEmpty() && reservations.peekKey() + reservationShift - now <= 0;
    }

    /** Takes the foreground's next request and charges its volume and tenant; precondition: {@link #ready}. */
    RequestRecord dispatch(long now) {
        FlowNode f;
        boolean reservationPhase;
        if (reservationDue(now)) {
            long lag = now - (reservations.peekKey() + reservationShift);
            if (lag > HierarchicalScheduler.RESERVATION_MAX_LAG_NANOS) {
                reservationShift += lag - HierarchicalScheduler.RESERVATION_MAX_LAG_NANOS;
            }
            f = reservations.peek();
            reservationPhase = true;
        } else {
            f = ready.peek().ready.peek();
            reservationPhase = false;
        }
        TenantNode tn = f.tenant;
        RequestRecord t = f.poll();
        boolean first = t.isFirst();
        if (first && t.kind != REPLICA) {
            latencies.deferWait(f.slot, now - t.enqueuedAt);
        }
        long cost = !first ? Math.max(1, t.bytes)
                : Math.max(1, Math.min(f.costModel.cost(KINDS[t.kind], t.bytes), HierarchicalScheduler.MAX_COST));
        if (!reservationPhase) {
            // Virtual time = start tag of the request entering service (SFQ). Only the weight phase
            // picks the minimum, so only it may advance V without overtaking a ready child.
            if (f.counter - tn.vtime > 0) {
                tn.vtime = f.counter;
                if (tn.vtime > HierarchicalScheduler.REBASE_THRESHOLD) {
                    rebaseVolumes(tn);
                }
            }
            if (tn.counter - vtime > 0) {
                vtime = tn.counter;
                if (vtime > HierarchicalScheduler.REBASE_THRESHOLD) {
                    rebaseTenants();
                }
            }
        } else if (first) {
            f.reservationTag += f.reservationInterval; // a continuation finishes an op already reserved
        }
        t.reservationPhase = reservationPhase;
        f.chargeCounter(cost);
        tn.chargeCounter(cost);
        if (reservationPhase) {
            // the bounded lead (deviation 4 in the package documentation)
            f.capLead(tn.vtime, cost);
            tn.capLead(vtime, cost);
        }
        int ops = t.isLast() ? 1 : 0; // IOPS limits count a request at its last piece
        f.limiter.charge(now, ops, t.bytes);
        f.inFlight++;
        refresh(f, now);
        if (reservationPhase) {
            tn.limiter.chargeUnadmitted(now, ops, t.bytes); // past the tenant's limits: no lasting debt
        } else {
            tn.limiter.charge(now, ops, t.bytes);
        }
        refresh(tn, now);
        return t;
    }

    /** Rebases the volume level of a tenant: see {@link HierarchicalScheduler#REBASE_THRESHOLD}. {@code O(volumes)}. */
    private static void rebaseVolumes(TenantNode tn) {
        long base = tn.vtime;
        tn.vtime = 0;
        for (FlowNode f : tn.flows) {
            f.rebase(base);
        }
        tn.ready.shiftKeys(base);
        tn.anticipated.clear(); // idle counters went to 0 above: nobody is owed a wait any more
    }

    /** Rebases the tenant level. {@code O(tenants)}. */
    private void rebaseTenants() {
        long base = vtime;
        vtime = 0;
        for (TenantNode tn : tenants.values()) {
            tn.rebase(base);
        }
        ready.shiftKeys(base);
        anticipated.clear();
    }

    // -------------------------------------------------------------------------- state machine

    /** A volume's queue, counter or limiter changed: re-evaluates it, then its tenant. */
    void wake(FlowNode f, long now) {
        refresh(f, now);
        refresh(f.tenant, now);
    }

    /** Re-evaluates a volume after its queue, counter or limiter changed. */
    void refresh(FlowNode f, long now) {
        if (f.state == SchedNode.THROTTLED) {
            return; // re-evaluated when its timer fires
        }
        TenantNode tn = f.tenant;
        if (f.size == 0) {
            if (f.state == SchedNode.READY) {
                tn.ready.remove(f);
                reservations.remove(f);
                f.state = SchedNode.IDLE;
                anticipate(tn.anticipated, f, f.shaped(), now);
            }
            return;
        }
        boolean awaited = false;
        if (f.state == SchedNode.IDLE && tn.anticipated.contains(f)) {
            awaited = f.anticipatedUntil - now > 0; // back within its credit: it keeps its place
            tn.anticipated.remove(f);
        }
        long e = f.limiter.eligibleAt(now);
        if (e - now > 0) {
            if (f.state == SchedNode.READY) {
                tn.ready.remove(f);
                reservations.remove(f);
            }
            f.throttle(now, e);
            timers.add(f, e);
            return;
        }
        if (f.state == SchedNode.READY) {
            tn.ready.update(f, f.counter);
            if (f.reservationInterval > 0) {
                reservations.update(f, f.reservationTag);
            }
        } else {
            if (!awaited) {
                f.rejoin(tn.vtime);
            }
            tn.ready.add(f, f.counter);
            if (f.reservationInterval > 0) {
                if (f.reservationTag + reservationShift - now < 0) {
                    f.reservationTag = now - reservationShift; // mClock: max(tag, now), no banked credit
                }
                reservations.add(f, f.reservationTag);
            }
            f.state = SchedNode.READY;
        }
    }

    /** Re-evaluates a tenant after its ready set, counter or limiter changed. */
    void refresh(TenantNode tn, long now) {
        if (tn.state == SchedNode.THROTTLED) {
            return;
        }
        if (tn.ready.isEmpty()) {
            if (tn.state == SchedNode.READY) {
                ready.remove(tn);
                tn.state = SchedNode.IDLE;
                anticipate(anticipated, tn, tn.limiter != Limiter.UNLIMITED || tn.anticipated.isEmpty(), now);
            }
            return;
        }
        boolean awaited = false;
        if (tn.state == SchedNode.IDLE && anticipated.contains(tn)) {
            awaited = tn.anticipatedUntil - now > 0;
            anticipated.remove(tn);
        }
        long e = tn.limiter.eligibleAt(now);
        if (e - now > 0) {
            if (tn.state == SchedNode.READY) {
                ready.remove(tn);
            }
            tn.throttle(now, e);
            timers.add(tn, e);
            return;
        }
        if (tn.state == SchedNode.READY) {
            ready.update(tn, tn.counter);
        } else {
            if (!awaited) {
                tn.rejoin(vtime);
            }
            ready.add(tn, tn.counter);
            tn.state = SchedNode.READY;
        }
    }

    /** Ends the throttling of every node whose timer is due at {@code now}. */
    void processTimers(long now) {
        while (!timers.isEmpty() && timers.peekKey() - now <= 0) {
            long due = timers.peekKey();
            SchedNode n = timers.poll();
            n.endThrottle(due);
            if (n instanceof FlowNode) {
                wake((FlowNode) n, now);
            } else {
                refresh((TenantNode) n, now);
            }
        }
    }

    // ------------------------------------------------------------------ nodes coming and going

    /** Makes room in the heaps' positions for a new node's slot. */
    void ensureSlot(int slot) {
        readyPositions.ensure(slot);
        timerPositions.ensure(slot);
        reservationPositions.ensure(slot);
        anticipatedPositions.ensure(slot);
    }

    /** A new tenant, at the tenant level's virtual time; in no heap yet. */
    TenantNode newTenant(TenantSpec s, int slot, long now) {
        TenantNode tn = new TenantNode(s, slot, readyPositions, anticipatedPositions, now);
        tn.counter = vtime;
        return tn;
    }

    /**
     * Empties every heap and marks every node idle, before a reconfiguration places them again
     * under their new policies ({@link #refresh}): {@code O(n log n)}, done rarely.
     */
    void unplaceAll(Collection<TenantNode> tenantNodes, Collection<FlowNode> flowNodes, long now) {
        ready.clear();
        timers.clear();
        reservations.clear();
        anticipated.clear();
        for (TenantNode tn : tenantNodes) {
            tn.ready.clear();
            tn.anticipated.clear();
            settle(tn, now);
        }
        for (FlowNode f : flowNodes) {
            settle(f, now);
        }
    }

    /** Marks a node idle after every heap was cleared; precondition: it is in no heap. */
    private static void settle(SchedNode n, long now) {
        if (n.state == SchedNode.THROTTLED) {
            n.endThrottle(now);
        }
        n.state = SchedNode.IDLE;
    }

    /** Takes a retiring volume out of every heap, and marks it idle. */
    void unplace(FlowNode f) {
        TenantNode tn = f.tenant;
        tn.ready.remove(f);
        timers.remove(f);
        reservations.remove(f);
        tn.anticipated.remove(f);
        f.state = SchedNode.IDLE;
    }

    /** Takes a retiring tenant out of every heap. */
    void unplace(TenantNode tn) {
        ready.remove(tn);
        timers.remove(tn);
        anticipated.remove(tn);
    }
}
