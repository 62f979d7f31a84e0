package io.weir.scheduler;

import io.weir.scheduler.SchedulerConfig.TaskSpec;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.HdrHistogram.Histogram;

/**
 * The single-threaded core of Weir's hierarchical QoS scheduler: a root scheduler that divides
 * CPU time among tasks, and below its foreground task a tenant/volume hierarchy that divides the
 * IO among flows, with limits, bursting and reservations at every level.
 *
 * <p>The caller owns time and threads: every method takes {@code now} (from a
 * {@link TimeSource}) and the caller must serialize all calls, normally with one lock as
 * {@link QosExecutor} does. A decision is {@code O(log n)} in the number of flows and allocates
 * nothing in steady state.
 *
 * <pre>{@code
 * HierarchicalScheduler<Runnable> s = new HierarchicalScheduler<>(config, clock.nanoTime());
 * s.enqueue("vol-1", IoKind.READ, 4096, work, clock.nanoTime());      // may throw QueueFullException
 * VolumeHandle v = s.volume("vol-1");                                  // resolve once per connection
 * s.enqueue(v, IoKind.WRITE, 8192, work, clock.nanoTime());             // no id lookup
 * Ticket<Runnable> t = s.next(clock.nanoTime());                       // null: nothing eligible now
 * long cpu = run(t.request());
 * s.complete(t, cpu, clock.nanoTime());                                 // charges the task's CPU time
 * }</pre>
 *
 * <h2>Implementation notes</h2>
 *
 * <h3>Structure</h3>
 * <ol>
 *   <li><b>Root.</b> A linear scan over the (few) tasks picks, among tasks with dispatchable work,
 *       the lowest counter {@code cpuNanos / share} (first currency) [patent, claim 1]. Charged at
 *       {@link #complete} with measured CPU time.</li>
 *   <li><b>Foreground.</b> First the reservation (constraint) phase: the volume with the earliest
 *       reservation tag, if that tag is {@code <= now} [2]. Otherwise the weight phase: the
 *       tenant with the lowest counter in the foreground ready heap, then its volume with the
 *       lowest counter. Both levels are charged {@code cost / weight} at dispatch, since the cost
 *       (bytes) is known then; this makes it H-SFQ [1][3] with start tags.</li>
 *   <li><b>Limits.</b> A node over a limit leaves its parent's ready heap and waits in one timer
 *       heap keyed by the time it may go again ({@link Limiter}); the rest of the level takes the
 *       capacity, so the scheduler is work-conserving.</li>
 * </ol>
 *
 * <h3>Rejoin rule</h3>
 * Each level keeps a virtual time {@code V}: the largest counter dispatched at that level by the
 * weight phase (the start tag of the request in service, as in SFQ [1]). {@code V} never
 * decreases and never exceeds the counter of a ready child. A child that becomes ready (it was
 * idle, or it was throttled) gets {@code counter = max(counter, V)}, as CFS places a waking task
 * at {@code min_vruntime}. It banks no credit for idle time, and never starts behind.
 *
 * <h3>Fairness bound</h3>
 * For two children {@code i, j} of one level that stay ready over an interval, the normalised
 * service differs by at most {@code Lmax_i/w_i + Lmax_j/w_j} (SFQ, [1] Theorem 1), where
 * {@code Lmax} is the largest cost. A child that rejoins is bounded the same way from the moment
 * it rejoins. <b>Deviation:</b> counters are fixed point ({@link SchedNode#COUNTER_SCALE}); the
 * remainder is carried so rounding does not accumulate, and the bound holds up to 4 counter units
 * ({@code 4 / 65536} byte per unit weight).
 *
 * <h3>Reservations</h3>
 * mClock's reservation tag, kept per volume for its head request: a volume that becomes ready
 * starts at {@code max(tag, now)}; each reservation-phase dispatch advances it by
 * {@code 1 / minIops}. Weight-phase dispatches do not advance it (mClock's tag adjustment [2]).
 * A volume whose weight share already exceeds its reservation still sees the reservation phase,
 * but its counter is charged for that service too, which leaves its total at
 * {@code max(reservation, fair share)} rather than the sum. When reservations exceed capacity,
 * earliest-tag-first serves each volume in proportion to its {@code minIops}.
 * <b>Deviation:</b> the earliest tag lags {@code now} by at most {@link #RESERVATION_MAX_LAG_NANOS}:
 * when it would lag more, all tags move forward together (one shared offset, {@code O(1)}), which
 * keeps their order, so proportional degradation is preserved while the reservation service owed
 * after an infeasible period is bounded by that much time's worth.
 * <b>Deviation:</b> the reservation phase ignores the tenant's limits but charges them; config
 * validation guarantees a tenant's {@code maxIops} covers the sum of its volumes' minimums.
 *
 * <h3>Memory per request</h3>
 * With thousands of volumes a round trip is bound by cache misses, not instructions: the chosen
 * volume's node, its head ticket (queued {@code flows x depth} requests ago) and its latency
 * counts are cold. So the hot path avoids every miss it can: {@link VolumeHandle}s skip the
 * {@code String} lookup (a chain of three dependent misses at 100,000 volumes), heaps are 4-ary
 * and keep only keys and slots, in primitive arrays ({@link IndexedHeap}), latency counts cover
 * only the buckets a volume uses ({@link LatencyRecorder}) and are found by slot, without the
 * volume's node, and a volume's latency samples are buffered and counted {@value #LATENCY_BATCH}
 * at a time, when their misses overlap (a {@link #snapshot} counts the buffer first, so
 * statistics are unchanged). What remains is inherent to per-volume state: about two dependent
 * misses (node, then head ticket) per decision.
 *
 * <h3>Reference stores</h3>
 * Under G1 (the default collector) storing a non-null reference into an old object from another
 * region runs a write barrier with a full memory fence, which also waits for every earlier store
 * still missing the cache. Scheduler state is long-lived, so the hot path stores references only
 * when they change: latency arrays only when they grew, a recycled ticket's volume and task
 * only when they differ (a closed-loop client's next request is usually for the volume that just
 * completed), and the heaps none at all. A ticket's IO kind is a byte, not the enum.
 *
 * <h3>Concurrency</h3>
 * None inside. Every method must be called with the caller's lock held.
 *
 * <p>[1] P. Goyal, H. M. Vin, H. Cheng, "Start-time fair queueing: a scheduling algorithm for
 * integrated services packet switching networks", SIGCOMM 1996.<br>
 * [2] A. Gulati, A. Merchant, P. Varman, "mClock: handling throughput variability for hypervisor
 * IO scheduling", OSDI 2010.<br>
 * [3] J. C. R. Bennett, H. Zhang, "Hierarchical packet fair queueing algorithms", SIGCOMM 1996.
 *
 * @param <R> the caller's request type
 */
public final class HierarchicalScheduler<R> {

    /** Returned by {@link #nextEligibleTime()} when no timed event is pending. */
    public static final long NO_DEADLINE = Long.MAX_VALUE;

    /**
     * How far a reservation tag may lag the clock: the most reservation service a volume can catch
     * up on after a period in which its reservation could not be met.
     */
    static final long RESERVATION_MAX_LAG_NANOS = 1_000_000_000L;

    /** Volume latency samples buffered before they are counted in one pass. */
    static final int LATENCY_BATCH = 1024;

    /** Marks a buffered sample as a service time (otherwise it is a wait time). */
    private static final int SERVICE_SAMPLE = 1 << 31;

    private static final byte READ = (byte) IoKind.READ.ordinal();

    /** Largest number of idle tickets kept for reuse. */
    static final int TICKET_POOL_MAX = 1 << 16;

    private SchedulerConfig config;
    private final Map<String, TaskNode> tasksByName = new LinkedHashMap<>();
    private TaskNode[] tasks = new TaskNode[0];
    private TaskNode foreground;
    private long rootVtime;

    private final Map<String, TenantNode> tenants = new LinkedHashMap<>();
    private final Map<String, FlowNode> flows = new LinkedHashMap<>();
    /** Positions in ready heaps (each node is in at most one: its parent's). */
    private final IndexedHeap.Positions readyPositions = new IndexedHeap.Positions();
    private final IndexedHeap.Positions timerPositions = new IndexedHeap.Positions();
    private final IndexedHeap.Positions reservationPositions = new IndexedHeap.Positions();
    private final IndexedHeap<TenantNode> fgReady = new IndexedHeap<>(readyPositions);
    private long fgVtime;
    private final IndexedHeap<SchedNode> timers = new IndexedHeap<>(timerPositions);
    private final IndexedHeap<FlowNode> reservations = new IndexedHeap<>(reservationPositions);
    /** Free node slots, reused before new ones are minted. */
    private int[] freeSlots = new int[16];
    private int freeSlotCount;
    private int nextSlot;
    /**
     * Added to every stored reservation tag before it is compared with the clock. Raising it moves
     * all tags forward together, which bounds the lag without changing their order.
     */
    private long reservationShift;

    /**
     * Volume latency counts ({@link LatencyRecorder}) by node slot, allocated on first use: wait
     * times and service times. Kept here rather than in the {@link FlowNode}, so counting a sample
     * does not have to load the (by then cold) node first.
     */
    private int[][] waitCountsBySlot = new int[64][];
    private int[][] serviceCountsBySlot = new int[64][];

    /** Volume latency samples not yet counted: slot, kind and bucket index (see {@link #deferLatency}). */
    private final long[] latencySamples = new long[LATENCY_BATCH];
    private int latencyCount;
    /** Written by {@link #foldLatencies}'s first pass so that its loads are not optimised away. */
    private int latencyTouch;

    private Ticket<R> free;
    private int freeCount;
    private int queued;
    private int running;

    /** Creates a scheduler enforcing {@code config}, starting at time {@code now}. */
    public HierarchicalScheduler(SchedulerConfig config, long now) {
        reconfigure(config, now);
    }

    // ---------------------------------------------------------------------------- submission

    /**
     * Queues a foreground request on a volume.
     *
     * @param volumeId the volume (flow)
     * @param kind read or write (statistics, cost model)
     * @param bytes the request size; cost and byte limits derive from it
     * @param request the caller's object, returned by {@link Ticket#request()}
     * @param now current time
     * @return the request's ticket
     * @throws IllegalArgumentException if the volume is unknown or being removed
     * @throws QueueFullException if the volume's queue is at its bound (counted in {@link Stats#rejected()})
     */
    public Ticket<R> enqueue(String volumeId, IoKind kind, long bytes, R request, long now) {
        return enqueue(volumeId, kind, bytes, request, now, false);
    }

    /**
     * Queues a foreground request that was already admitted elsewhere (by {@link QosExecutor}'s
     * lock-free admission): the queue bound is not checked again, and a volume that is draining
     * still takes it, since the caller already holds a future for it.
     */
    Ticket<R> enqueueAdmitted(String volumeId, IoKind kind, long bytes, R request, long now) {
        return enqueue(volumeId, kind, bytes, request, now, true);
    }

    private Ticket<R> enqueue(String volumeId, IoKind kind, long bytes, R request, long now, boolean admitted) {
        FlowNode f = flows.get(volumeId);
        if (f == null || (f.draining && !admitted)) {
            throw new IllegalArgumentException("unknown or removed volume '" + volumeId + "'");
        }
        return enqueue(f, kind, bytes, request, now, admitted);
    }

    /**
     * Resolves a volume once, for {@link #enqueue(VolumeHandle, IoKind, long, Object, long)}.
     *
     * @throws IllegalArgumentException if the volume is unknown or being removed
     */
    public VolumeHandle volume(String volumeId) {
        FlowNode f = flows.get(volumeId);
        if (f == null || f.draining) {
            throw new IllegalArgumentException("unknown or removed volume '" + volumeId + "'");
        }
        return f;
    }

    /**
     * Queues a foreground request on a volume resolved by {@link #volume(String)}: the same as
     * {@link #enqueue(String, IoKind, long, Object, long)} without the id lookup.
     *
     * @throws IllegalArgumentException if the handle is from another scheduler, or its volume is
     *     being removed or gone (see {@link VolumeHandle})
     * @throws QueueFullException if the volume's queue is at its bound
     */
    public Ticket<R> enqueue(VolumeHandle volume, IoKind kind, long bytes, R request, long now) {
        FlowNode f = checkHandle(volume, false);
        return enqueue(f, kind, bytes, request, now, false);
    }

    /** Handle counterpart of {@link #enqueueAdmitted(String, IoKind, long, Object, long)}. */
    Ticket<R> enqueueAdmitted(VolumeHandle volume, IoKind kind, long bytes, R request, long now) {
        return enqueue(checkHandle(volume, true), kind, bytes, request, now, true);
    }

    /** The volume's handle even while it drains (for admitted work), or null if it is gone. */
    VolumeHandle volumeAdmitted(String volumeId) {
        return flows.get(volumeId);
    }

    /** True if the handle may still queue work here (its volume is live, or draining). */
    boolean isLive(VolumeHandle volume) {
        return volume instanceof FlowNode && ((FlowNode) volume).owner == this && !((FlowNode) volume).retired;
    }

    private FlowNode checkHandle(VolumeHandle volume, boolean admitted) {
        if (!(volume instanceof FlowNode)) {
            throw new IllegalArgumentException("not a volume handle of this scheduler: " + volume);
        }
        FlowNode f = (FlowNode) volume;
        if (f.owner != this || f.retired || (f.draining && !admitted)) {
            throw new IllegalArgumentException("unknown or removed volume '" + f.id + "'");
        }
        return f;
    }

    private Ticket<R> enqueue(FlowNode f, IoKind kind, long bytes, R request, long now, boolean admitted) {
        Objects.requireNonNull(kind, "kind");
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must be >= 0: " + bytes);
        }
        if (!admitted && f.size >= f.capacity) {
            f.rejected++;
            throw new QueueFullException(f.id, f.capacity);
        }
        Ticket<R> t = obtain();
        t.request = request;
        t.bytes = bytes;
        t.kind = (byte) kind.ordinal();
        // A recycled ticket often served the same volume before: store only what changed (see
        // "Reference stores").
        if (t.flow != f) {
            t.flow = f;
        }
        if (t.task != foreground) {
            t.task = foreground;
        }
        t.enqueuedAt = now;
        t.status = Ticket.QUEUED;
        f.push(t);
        queued++;
        if (f.state == SchedNode.IDLE) {
            refreshFlow(f, now);
            refreshTenant(f.tenant, now);
        }
        return t;
    }

    /**
     * Queues a request of a background task.
     *
     * @throws IllegalArgumentException if the task is unknown, being removed, or the foreground task
     * @throws QueueFullException if the task's queue is at its bound
     */
    public Ticket<R> enqueueBackground(String task, R request, long now) {
        return enqueueBackground(task, request, now, false);
    }

    /** Background counterpart of {@link #enqueueAdmitted}. */
    Ticket<R> enqueueBackgroundAdmitted(String task, R request, long now) {
        return enqueueBackground(task, request, now, true);
    }

    private Ticket<R> enqueueBackground(String task, R request, long now, boolean admitted) {
        TaskNode k = tasksByName.get(task);
        if (k == null || (k.draining && !admitted) || k.foreground) {
            throw new IllegalArgumentException("unknown or removed background task '" + task + "'");
        }
        if (!admitted && k.size >= k.capacity) {
            k.rejected++;
            throw new QueueFullException(k.name, k.capacity);
        }
        Ticket<R> t = obtain();
        t.request = request;
        t.flow = null;
        t.kind = Ticket.NO_KIND;
        t.bytes = 0;
        t.task = k;
        t.enqueuedAt = now;
        t.status = Ticket.QUEUED;
        k.push(t);
        queued++;
        return t;
    }

    // ------------------------------------------------------------------------------ dispatch

    /**
     * Chooses the next request to run and marks it running, or returns null when nothing is
     * eligible at {@code now} (everything idle or throttled; see {@link #nextEligibleTime()}).
     */
    @SuppressWarnings("unchecked")
    public Ticket<R> next(long now) {
        if (queued == 0) {
            return null;
        }
        processTimers(now);
        TaskNode best = null;
        for (TaskNode k : tasks) {
            boolean ready = k.foreground ? foregroundReady(now) : k.size > 0;
            if (ready) {
                if (!k.wasReady && k.counter - rootVtime < 0) {
                    k.counter = rootVtime; // rejoin rule at the root
                }
                if (best == null || k.counter - best.counter < 0) {
                    best = k;
                }
            }
            k.wasReady = ready;
        }
        if (best == null) {
            return null;
        }
        if (best.counter - rootVtime > 0) {
            rootVtime = best.counter;
        }
        Ticket<R> t = best.foreground ? dispatchForeground(now) : (Ticket<R>) best.poll();
        queued--;
        running++;
        best.inFlight++;
        t.status = Ticket.RUNNING;
        t.dispatchedAt = now;
        long waited = now - t.enqueuedAt;
        int[] counts = best.waitCounts; // a volume's wait is counted in dispatchForeground
        int[] grown = LatencyRecorder.record(counts, waited);
        if (grown != counts) {
            best.waitCounts = grown; // only when it grew: see "Reference stores"
        }
        return t;
    }

    private boolean foregroundReady(long now) {
        return !fgReady.isEmpty() || reservationDue(now);
    }

    private boolean reservationDue(long now) {
        return !reservations.isEmpty() && reservations.peekKey() + reservationShift - now <= 0;
    }

    @SuppressWarnings("unchecked")
    private Ticket<R> dispatchForeground(long now) {
        FlowNode f;
        boolean reservationPhase;
        if (reservationDue(now)) {
            long lag = now - (reservations.peekKey() + reservationShift);
            if (lag > RESERVATION_MAX_LAG_NANOS) {
                reservationShift += lag - RESERVATION_MAX_LAG_NANOS;
            }
            f = reservations.peek();
            reservationPhase = true;
        } else {
            f = fgReady.peek().ready.peek();
            reservationPhase = false;
        }
        TenantNode tn = f.tenant;
        Ticket<R> t = (Ticket<R>) f.poll();
        deferLatency(f.slot, LatencyRecorder.index(now - t.enqueuedAt));
        long cost = f.costModel.cost(t.kind(), t.bytes);
        if (!reservationPhase) {
            // Virtual time = start tag of the request entering service (SFQ). Only the weight phase
            // picks the minimum, so only it may advance V without overtaking a ready child.
            if (f.counter - tn.vtime > 0) {
                tn.vtime = f.counter;
            }
            if (tn.counter - fgVtime > 0) {
                fgVtime = tn.counter;
            }
        } else {
            f.reservationTag += f.reservationInterval;
        }
        t.reservationPhase = reservationPhase;
        f.chargeCounter(cost);
        f.limiter.charge(now, t.bytes);
        f.inFlight++;
        refreshFlow(f, now);
        tn.chargeCounter(cost);
        tn.limiter.charge(now, t.bytes);
        refreshTenant(tn, now);
        return t;
    }

    /**
     * Reports that a running request finished and charges its task (and volume) the CPU time it
     * consumed. The ticket must not be used afterwards.
     *
     * @param ticket a ticket returned by {@link #next(long)}
     * @param cpuNanos the CPU time spent processing it, as measured by the executor
     * @param now current time
     */
    public void complete(Ticket<R> ticket, long cpuNanos, long now) {
        if (ticket.status != Ticket.RUNNING) {
            throw new IllegalStateException("ticket is not running: " + ticket);
        }
        long cpu = Math.max(0, cpuNanos);
        long served = now - ticket.dispatchedAt;
        TaskNode k = ticket.task;
        k.charge(cpu);
        k.cpuNanos += cpu;
        k.inFlight--;
        k.ops++;
        int[] counts = k.serviceCounts;
        int[] grown = LatencyRecorder.record(counts, served);
        if (grown != counts) {
            k.serviceCounts = grown;
        }
        FlowNode f = ticket.flow;
        if (f != null) {
            f.inFlight--;
            f.cpuNanos += cpu;
            if (ticket.kind == READ) {
                f.readOps++;
                f.readBytes += ticket.bytes;
            } else {
                f.writeOps++;
                f.writeBytes += ticket.bytes;
            }
            deferLatency(f.slot, LatencyRecorder.index(served) | SERVICE_SAMPLE);
            if (f.draining) {
                maybeRetire(f);
            }
        }
        if (k.draining && k.size == 0 && k.inFlight == 0) {
            rebuildTaskArray();
        }
        running--;
        recycle(ticket);
    }

    /**
     * The earliest time at which a throttled node becomes eligible or a reservation falls due, or
     * {@link #NO_DEADLINE} when nothing is waiting on time. Meaningful after {@link #next(long)}
     * returned null: a worker sleeps until then or until the next submission.
     */
    public long nextEligibleTime() {
        long best = NO_DEADLINE;
        boolean any = false;
        if (!timers.isEmpty()) {
            best = timers.peekKey();
            any = true;
        }
        if (!reservations.isEmpty()) {
            long r = reservations.peekKey() + reservationShift;
            if (!any || r - best < 0) {
                best = r;
            }
        }
        return best;
    }

    // ----------------------------------------------------------------------- state machine

    /** Re-evaluates a volume after its queue, counter or limiter changed. */
    private void refreshFlow(FlowNode f, long now) {
        if (f.state == SchedNode.THROTTLED) {
            return; // re-evaluated when its timer fires
        }
        TenantNode tn = f.tenant;
        if (f.size == 0) {
            if (f.state == SchedNode.READY) {
                tn.ready.remove(f);
                reservations.remove(f);
                f.state = SchedNode.IDLE;
            }
            return;
        }
        long e = f.limiter.eligibleAt(now);
        if (e - now > 0) {
            if (f.state == SchedNode.READY) {
                tn.ready.remove(f);
                reservations.remove(f);
            }
            f.state = SchedNode.THROTTLED;
            f.throttledSince = now;
            timers.add(f, e);
            return;
        }
        if (f.state == SchedNode.READY) {
            tn.ready.update(f, f.counter);
            if (f.reservationInterval > 0) {
                reservations.update(f, f.reservationTag);
            }
        } else {
            f.rejoin(tn.vtime);
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
    private void refreshTenant(TenantNode tn, long now) {
        if (tn.state == SchedNode.THROTTLED) {
            return;
        }
        if (tn.ready.isEmpty()) {
            if (tn.state == SchedNode.READY) {
                fgReady.remove(tn);
                tn.state = SchedNode.IDLE;
            }
            return;
        }
        long e = tn.limiter.eligibleAt(now);
        if (e - now > 0) {
            if (tn.state == SchedNode.READY) {
                fgReady.remove(tn);
            }
            tn.state = SchedNode.THROTTLED;
            tn.throttledSince = now;
            timers.add(tn, e);
            return;
        }
        if (tn.state == SchedNode.READY) {
            fgReady.update(tn, tn.counter);
        } else {
            tn.rejoin(fgVtime);
            fgReady.add(tn, tn.counter);
            tn.state = SchedNode.READY;
        }
    }

    private void processTimers(long now) {
        while (!timers.isEmpty() && timers.peekKey() - now <= 0) {
            long due = timers.peekKey();
            SchedNode n = timers.poll();
            n.throttledNanos += Math.max(0, due - n.throttledSince);
            n.state = SchedNode.IDLE;
            if (n instanceof FlowNode) {
                FlowNode f = (FlowNode) n;
                refreshFlow(f, now);
                refreshTenant(f.tenant, now);
            } else {
                refreshTenant((TenantNode) n, now);
            }
        }
    }

    // ------------------------------------------------------------------------ reconfiguration

    /**
     * Applies a whole new configuration atomically. Queued and running requests are kept: none is
     * lost or duplicated. Volumes, tenants and tasks missing from {@code next} stop accepting new
     * requests and drain: they keep being scheduled under their last policy until their queues are
     * empty and their running requests complete, then they disappear. A removed item that
     * reappears before it drained is simply revived. Counters, burst credit (when the limits did
     * not change) and statistics carry over; the new policies govern the very next decision.
     */
    public void reconfigure(SchedulerConfig next, long now) {
        Objects.requireNonNull(next, "config");
        // 1. tasks
        Set<String> names = new HashSet<>();
        for (TaskSpec s : next.tasks()) {
            names.add(s.name());
            TaskNode k = tasksByName.get(s.name());
            if (k == null) {
                k = new TaskNode(s);
                k.counter = rootVtime;
                tasksByName.put(s.name(), k);
            } else {
                k.apply(s);
                k.draining = false;
            }
        }
        for (TaskNode k : tasksByName.values()) {
            if (!names.contains(k.name)) {
                k.draining = true;
            }
        }
        foreground = tasksByName.get(SchedulerConfig.FOREGROUND);
        rebuildTaskArray();

        // 2. tenants
        Set<String> ids = new HashSet<>();
        for (TenantSpec s : next.tenants()) {
            ids.add(s.id());
            TenantNode tn = tenants.get(s.id());
            if (tn == null) {
                tn = new TenantNode(s, allocateSlot(), readyPositions);
                tn.counter = fgVtime;
                tn.limiter = Limiter.of(s.maxIops(), s.burstIops(), s.maxBytesPerSec(), s.burstBytesPerSec(), now);
                tenants.put(s.id(), tn);
            } else {
                TenantSpec o = tn.spec;
                if (o.maxIops() != s.maxIops() || o.burstIops() != s.burstIops()
                        || o.maxBytesPerSec() != s.maxBytesPerSec() || o.burstBytesPerSec() != s.burstBytesPerSec()) {
                    tn.limiter = Limiter.of(s.maxIops(), s.burstIops(), s.maxBytesPerSec(), s.burstBytesPerSec(), now);
                }
                tn.setWeight(s.weight());
                tn.draining = false;
            }
            tn.spec = s;
        }
        for (TenantNode tn : tenants.values()) {
            if (!ids.contains(tn.id)) {
                tn.draining = true;
            }
        }

        // 3. volumes
        ids.clear();
        for (VolumeSpec s : next.volumes()) {
            ids.add(s.id());
            TenantNode tn = tenants.get(s.tenantId());
            FlowNode f = flows.get(s.id());
            if (f == null) {
                f = new FlowNode(s, allocateSlot(), this);
                f.limiter = Limiter.of(s.maxIops(), s.burstIops(), s.maxBytesPerSec(), s.burstBytesPerSec(), now);
                f.reservationTag = now - reservationShift;
                f.tenant = tn;
                tn.flows.add(f);
                flows.put(s.id(), f);
            } else {
                VolumeSpec o = f.spec;
                if (o.maxIops() != s.maxIops() || o.burstIops() != s.burstIops()
                        || o.maxBytesPerSec() != s.maxBytesPerSec() || o.burstBytesPerSec() != s.burstBytesPerSec()) {
                    f.limiter = Limiter.of(s.maxIops(), s.burstIops(), s.maxBytesPerSec(), s.burstBytesPerSec(), now);
                }
                if (f.tenant != tn) {
                    f.tenant.flows.remove(f);
                    f.tenant = tn;
                    tn.flows.add(f);
                }
                f.setWeight(s.weight());
                f.draining = false;
            }
            f.spec = s;
            f.costModel = s.costModel();
            f.capacity = s.queueCapacity();
            f.reservationInterval = s.minIops() > 0 ? Math.max(1, 1_000_000_000L / s.minIops()) : 0;
        }
        for (FlowNode f : flows.values()) {
            if (!ids.contains(f.id)) {
                f.draining = true;
            }
        }
        this.config = next;

        // 4. rebuild every heap from scratch under the new policies: O(n log n), done rarely.
        fgReady.clear();
        timers.clear();
        reservations.clear();
        for (TenantNode tn : tenants.values()) {
            tn.ready.clear();
            settle(tn, now);
        }
        for (FlowNode f : flows.values()) {
            settle(f, now);
        }
        for (FlowNode f : new ArrayList<>(flows.values())) {
            if (f.size > 0) {
                refreshFlow(f, now);
            } else if (f.draining) {
                maybeRetire(f);
            }
        }
        for (TenantNode tn : new ArrayList<>(tenants.values())) {
            if (tn.draining && tn.flows.isEmpty()) {
                tenants.remove(tn.id);
                releaseSlot(tn);
            } else {
                refreshTenant(tn, now);
            }
        }
    }

    /** Marks a node idle after every heap was cleared; precondition: it is in no heap. */
    private static void settle(SchedNode n, long now) {
        if (n.state == SchedNode.THROTTLED) {
            n.throttledNanos += Math.max(0, now - n.throttledSince);
        }
        n.state = SchedNode.IDLE;
    }

    private int allocateSlot() {
        int slot = freeSlotCount > 0 ? freeSlots[--freeSlotCount] : nextSlot++;
        readyPositions.ensure(slot);
        timerPositions.ensure(slot);
        reservationPositions.ensure(slot);
        if (slot >= waitCountsBySlot.length) {
            int len = Math.max(slot + 1, waitCountsBySlot.length * 2);
            waitCountsBySlot = Arrays.copyOf(waitCountsBySlot, len);
            serviceCountsBySlot = Arrays.copyOf(serviceCountsBySlot, len);
        }
        return slot;
    }

    /** Returns a retired node's slot; precondition: the node is in no heap. */
    private void releaseSlot(SchedNode n) {
        if (n instanceof FlowNode) {
            foldLatencies(); // no buffered sample of this volume may be counted for the slot's next owner
            waitCountsBySlot[n.slot] = null;
            serviceCountsBySlot[n.slot] = null;
        }
        if (freeSlotCount == freeSlots.length) {
            freeSlots = Arrays.copyOf(freeSlots, freeSlotCount * 2);
        }
        freeSlots[freeSlotCount++] = n.slot;
    }

    private void maybeRetire(FlowNode f) {
        if (f.draining && f.size == 0 && f.inFlight == 0) {
            TenantNode tn = f.tenant;
            tn.ready.remove(f);
            timers.remove(f);
            reservations.remove(f);
            f.state = SchedNode.IDLE;
            f.retired = true;
            flows.remove(f.id);
            tn.flows.remove(f);
            releaseSlot(f);
            if (tn.draining && tn.flows.isEmpty()) {
                fgReady.remove(tn);
                timers.remove(tn);
                tenants.remove(tn.id);
                releaseSlot(tn);
            }
        }
    }

    private void rebuildTaskArray() {
        tasksByName.values().removeIf(k -> k.draining && k.size == 0 && k.inFlight == 0);
        tasks = tasksByName.values().toArray(new TaskNode[0]);
    }

    // -------------------------------------------------------------------------- signals, stats

    /**
     * Feeds the utilization signal of a task with a {@link SchedulerConfig.DynamicShare}; its share
     * follows from the next decision on. Ignored for tasks with a static share.
     *
     * @throws IllegalArgumentException if the task is unknown
     */
    public void setUtilization(String task, double utilization) {
        TaskNode k = tasksByName.get(task);
        if (k == null) {
            throw new IllegalArgumentException("unknown task '" + task + "'");
        }
        k.setUtilization(utilization);
    }

    /** The current CPU share of a task. */
    public double share(String task) {
        TaskNode k = tasksByName.get(task);
        if (k == null) {
            throw new IllegalArgumentException("unknown task '" + task + "'");
        }
        return k.share;
    }

    /** The configuration in force. */
    public SchedulerConfig config() {
        return config;
    }

    /** Requests queued and not yet dispatched. */
    public int queuedCount() {
        return queued;
    }

    /** Requests dispatched and not yet completed. */
    public int runningCount() {
        return running;
    }

    /** Queue depth of a volume (0 if unknown). */
    public int queueDepth(String volumeId) {
        FlowNode f = flows.get(volumeId);
        return f == null ? 0 : f.size;
    }

    /** True if the volume is known and not being removed. */
    public boolean hasVolume(String volumeId) {
        FlowNode f = flows.get(volumeId);
        return f != null && !f.draining;
    }

    /** True if the background task is known and not being removed. */
    public boolean hasBackgroundTask(String task) {
        TaskNode k = tasksByName.get(task);
        return k != null && !k.draining && !k.foreground;
    }

    /** Equivalent to {@code snapshot(now, false)}. */
    public SchedulerSnapshot snapshot(long now) {
        return snapshot(now, false);
    }

    /**
     * Takes a snapshot of every volume, tenant and task. Cost is linear in the number of nodes and
     * histogram buckets; it is meant for periodic reports, not per request.
     *
     * @param resetLatencies clear the latency histograms afterwards, so the next snapshot's
     *     percentiles cover only the requests completed in between
     */
    public SchedulerSnapshot snapshot(long now, boolean resetLatencies) {
        foldLatencies();
        Map<String, Stats> vs = new HashMap<>();
        Map<String, Stats> ts = new HashMap<>();
        Map<String, Stats> ks = new HashMap<>();
        for (TenantNode tn : tenants.values()) {
            long rOps = 0, wOps = 0, rB = 0, wB = 0, q = 0, inf = 0, rej = 0, cpu = 0;
            Histogram tw = LatencyRecorder.newHistogram();
            Histogram tsv = LatencyRecorder.newHistogram();
            for (FlowNode f : tn.flows) {
                Histogram w = LatencyRecorder.newHistogram();
                Histogram sv = LatencyRecorder.newHistogram();
                LatencyRecorder.addTo(waitCountsBySlot[f.slot], w);
                LatencyRecorder.addTo(serviceCountsBySlot[f.slot], sv);
                tw.add(w);
                tsv.add(sv);
                vs.put(f.id, new Stats(f.id, f.readOps, f.writeOps, f.readBytes, f.writeBytes, f.size, f.inFlight,
                        f.rejected, LatencyRecorder.percentile(w, 50), LatencyRecorder.percentile(w, 99),
                        LatencyRecorder.percentile(sv, 50), LatencyRecorder.percentile(sv, 99), f.throttledNanos(now),
                        f.cpuNanos, 0, LatencyRecorder.percentile(w, 100), LatencyRecorder.percentile(sv, 100)));
                rOps += f.readOps;
                wOps += f.writeOps;
                rB += f.readBytes;
                wB += f.writeBytes;
                q += f.size;
                inf += f.inFlight;
                rej += f.rejected;
                cpu += f.cpuNanos;
                if (resetLatencies) {
                    LatencyRecorder.reset(waitCountsBySlot[f.slot]);
                    LatencyRecorder.reset(serviceCountsBySlot[f.slot]);
                }
            }
            ts.put(tn.id, new Stats(tn.id, rOps, wOps, rB, wB, q, inf, rej, LatencyRecorder.percentile(tw, 50),
                    LatencyRecorder.percentile(tw, 99), LatencyRecorder.percentile(tsv, 50),
                    LatencyRecorder.percentile(tsv, 99), tn.throttledNanos(now), cpu, 0, LatencyRecorder.percentile(tw, 100),
                    LatencyRecorder.percentile(tsv, 100)));
        }
        for (TaskNode k : tasksByName.values()) {
            ks.put(k.name, new Stats(k.name, k.ops, 0, 0, 0, k.foreground ? queued - backgroundQueued() : k.size,
                    k.inFlight, k.rejected, LatencyRecorder.percentile(k.waitCounts, 50),
                    LatencyRecorder.percentile(k.waitCounts, 99), LatencyRecorder.percentile(k.serviceCounts, 50),
                    LatencyRecorder.percentile(k.serviceCounts, 99), 0, k.cpuNanos, k.share,
                    LatencyRecorder.percentile(k.waitCounts, 100), LatencyRecorder.percentile(k.serviceCounts, 100)));
            if (resetLatencies) {
                LatencyRecorder.reset(k.waitCounts);
                LatencyRecorder.reset(k.serviceCounts);
            }
        }
        return new SchedulerSnapshot(now, vs, ts, ks);
    }

    private int backgroundQueued() {
        int n = 0;
        for (TaskNode k : tasks) {
            if (!k.foreground) {
                n += k.size;
            }
        }
        return n;
    }

    // ------------------------------------------------------------------------------- latencies

    /**
     * Buffers one latency sample of a volume. With many volumes, a volume's counts are a cold
     * cache line; counting a sample at once stalls the decision on that miss (and on the one for
     * the array reference before it). Counted in a batch, the misses of different samples are
     * independent, so the CPU overlaps them; the more so as the batch is walked twice, first
     * only loading each sample's bucket, then counting (a loop of loads alone keeps more misses in
     * flight than one that also stores). Nothing is lost: {@link #snapshot} counts the buffer
     * first, and so does retiring a volume, before its slot can be reused.
     *
     * @param bucket the {@link LatencyRecorder#index bucket}, with {@link #SERVICE_SAMPLE} set for
     *     a service time
     */
    private void deferLatency(int slot, int bucket) {
        int n = latencyCount;
        latencySamples[n] = ((long) slot << 32) | (bucket & 0xFFFF_FFFFL);
        latencyCount = n + 1;
        if (n + 1 == LATENCY_BATCH) {
            foldLatencies();
        }
    }

    private void foldLatencies() {
        long[] samples = latencySamples;
        int[][] waits = waitCountsBySlot;
        int[][] services = serviceCountsBySlot;
        int n = latencyCount;
        // Pass 1 only loads each sample's bucket: the iterations are independent loads, so the CPU
        // keeps dozens of their cache misses in flight; pass 2 then counts in cache.
        int touched = 0;
        for (int i = 0; i < n; i++) {
            long sample = samples[i];
            int b = (int) sample;
            int[] counts = (b >= 0 ? waits : services)[(int) (sample >>> 32)];
            int j = LatencyRecorder.position(counts, b & ~SERVICE_SAMPLE);
            if (j > 0) {
                touched += counts[j];
            }
        }
        latencyTouch = touched;
        for (int i = 0; i < n; i++) {
            long sample = samples[i];
            int slot = (int) (sample >>> 32);
            int b = (int) sample;
            int[][] table = b >= 0 ? waits : services;
            int[] counts = table[slot];
            int[] grown = LatencyRecorder.recordIndex(counts, b & ~SERVICE_SAMPLE);
            if (grown != counts) {
                table[slot] = grown; // only when it grew: see "Reference stores"
            }
        }
        latencyCount = 0;
    }

    // --------------------------------------------------------------------------------- tickets

    @SuppressWarnings("unchecked")
    private Ticket<R> obtain() {
        Ticket<R> t = free;
        if (t != null) {
            free = (Ticket<R>) t.next;
            t.next = null;
            freeCount--;
            return t;
        }
        return new Ticket<>();
    }

    /**
     * Returns a completed ticket to the pool. It drops the caller's request but keeps its volume
     * and task, which the next request often shares (a pooled ticket may so keep a removed
     * volume's node from being collected until it is reused).
     */
    private void recycle(Ticket<R> t) {
        t.request = null;
        t.reservationPhase = false;
        t.status = Ticket.FREE;
        if (freeCount < TICKET_POOL_MAX) {
            t.next = free;
            free = t;
            freeCount++;
        }
    }

    /** Names of the live (not draining) volumes; for tests and diagnostics. */
    List<String> volumeIds() {
        List<String> out = new ArrayList<>();
        for (FlowNode f : flows.values()) {
            if (!f.draining) {
                out.add(f.id);
            }
        }
        return out;
    }
}
