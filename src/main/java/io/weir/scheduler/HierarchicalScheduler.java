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

/**
 * The single-threaded core of Weir's hierarchical QoS scheduler: a root scheduler that divides
 * worker time (CPU time, plus time blocked in the store) among tasks, and below its foreground
 * task a tenant/volume hierarchy that divides the IO among flows, with limits, bursting and
 * reservations at every level.
 *
 * <p>The caller owns time and threads: every method takes {@code now} (from a
 * {@link TimeSource}) and the caller must serialize all calls, normally with one lock as
 * {@link QosExecutor} does. A decision is {@code O(log n)} in the number of flows; in steady state
 * a request allocates only its {@link Ticket} handles (one through {@link QosExecutor}, two
 * through {@code enqueue} and {@code next}). Requests are at most
 * {@link #MAX_REQUEST_BYTES}.
 *
 * <pre>{@code
 * HierarchicalScheduler<Runnable> s = new HierarchicalScheduler<>(config, clock.nanoTime());
 * s.enqueue("vol-1", IoKind.READ, 4096, work, clock.nanoTime());      // may throw QueueFullException
 * VolumeHandle v = s.volume("vol-1");                                  // resolve once per connection
 * s.enqueue(v, IoKind.WRITE, 8192, work, clock.nanoTime());             // no id lookup
 * Ticket<Runnable> t = s.next(clock.nanoTime());                       // null: nothing eligible now
 * long cpu = run(t.request());
 * s.complete(t, cpu, clock.nanoTime());                                 // charges the task's CPU time
 * s.complete(t, cpu, worker, clock.nanoTime());                         // or its worker time (CPU + blocked)
 * }</pre>
 *
 * <p>The theory &mdash; the rejoin rule, the fairness bound, reservations and their bounded lead,
 * the counters' range, and every deviation from the published algorithms &mdash; is in the
 * {@linkplain io.weir.scheduler package documentation}.
 *
 * <h2>Implementation notes</h2>
 *
 * <h3>Structure</h3>
 * <ol>
 *   <li><b>Root.</b> A linear scan over the (few) tasks picks, among tasks with dispatchable work,
 *       the lowest counter {@code workerNanos / share}. Charged at {@link #complete} with measured
 *       worker time: CPU time plus time blocked (in a store slower than the CPU, say).</li>
 *   <li><b>Foreground</b> ({@link ForegroundLevels}, its tenant and volume levels). First the
 *       reservation phase: the volume with the earliest reservation tag, if that tag is
 *       {@code <= now}. Otherwise the weight phase: the tenant with the lowest
 *       counter in the foreground ready heap, then its volume with the lowest counter. Both levels
 *       are charged {@code cost / weight} at dispatch; a reservation-phase charge is capped
 *       ({@link SchedNode#capLead}).</li>
 *   <li><b>Limits.</b> A node over a limit leaves its parent's ready heap and waits in one timer
 *       heap keyed by the time it may go again ({@link Limiter}); the rest of the level takes the
 *       capacity, so the scheduler is work-conserving (but for anticipation, below).</li>
 *   <li><b>Anticipation</b> ({@link #anticipation}, off by default). A deep volume or tenant whose
 *       queue runs dry goes into its level's anticipated heap (the scheduler's for tenants, its
 *       tenant's for volumes), keyed by counter; {@link ForegroundLevels#ready} holds the weight phase
 *       while the lowest entry still waited for is more than the slack below the choice, and
 *       {@link #nextEligibleTime()} reports when the wait ends. Expired entries are dropped when
 *       they reach the top. The root's wait for the foreground task is two flags on its
 *       {@link TaskNode}.</li>
 *   <li><b>Reservation tags</b> are stored minus {@link ForegroundLevels#reservationShift}:
 *       raising the shift moves all tags forward together ({@code O(1)}), which caps the earliest
 *       tag's lag at {@link #RESERVATION_MAX_LAG_NANOS} without changing their order.</li>
 *   <li><b>Rebasing.</b> Where a level's virtual time is raised, a level past
 *       {@link #REBASE_THRESHOLD} is rebased in place: its children's counters and its ready heap's
 *       keys move down together ({@link IndexedHeap#shiftKeys}).</li>
 * </ol>
 * This class keeps the root level, submission, completion and reconfiguration. Parts that stand
 * alone live in their own classes: the foreground's two levels ({@link ForegroundLevels}), the
 * request FIFO ({@link TicketQueue}), the pooled request state ({@link TicketPool},
 * {@link RequestRecord}), the latency counts ({@link LatencyBuffer}) and the snapshot
 * ({@link SnapshotBuilder}).
 *
 * <h3>Memory per request</h3>
 * With thousands of volumes a round trip is bound by cache misses, not instructions: the chosen
 * volume's node, its head request (queued {@code flows x depth} requests ago) and its latency
 * counts are cold. So the hot path avoids every miss it can: {@link VolumeHandle}s skip the
 * {@code String} lookup (a chain of three dependent misses at 100,000 volumes), heaps are 4-ary
 * and keep only keys and slots, in primitive arrays ({@link IndexedHeap}), latency counts cover
 * only the buckets a volume uses ({@link LatencyRecorder}) and are found by slot, without the
 * volume's node, and latency samples are counted {@value #LATENCY_BATCH} at a time, when their
 * misses overlap ({@link LatencyBuffer}). What remains is inherent to per-volume state: about two
 * dependent misses (node, then head request) per decision.
 *
 * <h3>Reference stores</h3>
 * Under G1 (the default collector) storing a non-null reference into an old object from another
 * region runs a write barrier with a full memory fence, which also waits for every earlier store
 * still missing the cache. Scheduler state is long-lived, so the hot path stores references only
 * when they change: latency arrays only when they grew, a recycled record's volume and task
 * only when they differ (a closed-loop client's next request is usually for the volume that just
 * completed), and the heaps none at all. A record's IO kind is a byte, not the enum. The
 * {@link Ticket}s of a request (one from {@code enqueue}, one from {@link #next}, 24 bytes
 * each, so that a stale ticket can be told from a current one) point to the record, never
 * the other way: a record holding its ticket would cost a reference store into an old object
 * per request, with the write barrier above on the hot path.
 *
 * <h3>Concurrency</h3>
 * None inside. Every method must be called with the caller's lock held.
 *
 * @param <R> the caller's request type
 */
public final class HierarchicalScheduler<R> {

    /** Returned by {@link #nextEligibleTime()} when no timed event is pending. */
    public static final long NO_DEADLINE = Long.MAX_VALUE;

    /**
     * Largest request accepted, in bytes: {@code 2^32 - 1}, the largest length of an NBD request
     * (its length field is 32 bits). {@code enqueue} and {@link QosExecutor#submit} reject more.
     */
    public static final long MAX_REQUEST_BYTES = (1L << 32) - 1;

    /**
     * Largest cost charged for one request: a {@link CostModel} that returns more is charged
     * this much ({@code 2^40}, 256 times the largest request), which keeps {@code cost * 2^16}
     * and every counter far from the range of a {@code long}.
     */
    public static final long MAX_COST = 1L << 40;

    /**
     * How far reservation service may carry a volume's counter ahead of its level's virtual time,
     * in cost (bytes) per unit of weight, unless its last request alone cost more: 1 MiB. See
     * "Reservations" in the package documentation for what this bounds.
     */
    public static final long RESERVATION_LEAD_BYTES = 1L << 20;

    /**
     * How far a reservation tag may lag the clock: the most reservation service a volume can catch
     * up on after a period in which its reservation could not be met.
     */
    static final long RESERVATION_MAX_LAG_NANOS = 1_000_000_000L;

    /**
     * A level whose virtual time passes this ({@code 2^62}) subtracts it from its virtual time
     * and from every child's counter: the counters then never come near {@code 2^63}.
     */
    static final long REBASE_THRESHOLD = 1L << 62;

    /**
     * How long the weight phase waits for a deep volume or tenant whose queue ran dry before it
     * serves a sibling with a higher counter (see "Anticipation" in the package documentation).
     */
    static final long ANTICIPATION_NANOS = 1_000_000L;

    /**
     * How long a deep volume or tenant whose queue ran dry keeps its place: back within this
     * time, it rejoins at its own counter, not at its level's virtual time (see "Anticipation").
     */
    static final long ANTICIPATION_CREDIT_NANOS = 20_000_000L;

    /**
     * How far, in cost per unit of weight, a sibling may run ahead of an anticipated node before
     * it waits for it: 1 MiB (see "Anticipation").
     */
    static final long ANTICIPATION_SLACK_BYTES = 1L << 20;

    /** How long a volume counts as deep after it last had two requests at the scheduler at once. */
    static final long DEEP_NANOS = 100_000_000L;

    /** Volume latency samples buffered before they are counted in one pass. */
    static final int LATENCY_BATCH = LatencyBuffer.BATCH;

    private static final byte READ = (byte) IoKind.READ.ordinal();

    private static final byte REPLICA = (byte) IoKind.REPLICA.ordinal();

    private SchedulerConfig config;
    final Map<String, TaskNode> tasksByName = new LinkedHashMap<>();
    private TaskNode[] tasks = new TaskNode[0];
    private TaskNode foreground;
    /** Virtual time of the root (tasks). */
    long rootVtime;

    final Map<String, TenantNode> tenants = new LinkedHashMap<>();
    private final Map<String, FlowNode> flows = new LinkedHashMap<>();
    /** Free node slots, reused before new ones are minted. */
    private int[] freeSlots = new int[16];
    private int freeSlotCount;
    private int nextSlot;

    /** Volume latency counts and the samples not yet counted. */
    final LatencyBuffer latencies = new LatencyBuffer();
    /** The foreground task's tenant and volume levels (after the maps it shares). */
    final ForegroundLevels levels = new ForegroundLevels(tenants, latencies);

    /** Reused request records; also identifies this scheduler's tickets. */
    private final TicketPool pool = new TicketPool();
    int queued;
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
     * @param kind read, write or what a copy applies for its primary (statistics, cost model)
     * @param bytes the request size; cost and byte limits derive from it
     * @param request the caller's object, returned by {@link Ticket#request()}
     * @param now current time
     * @return the request's ticket
     * @throws IllegalArgumentException if the volume is unknown or being removed
     * @throws QueueFullException if the volume's queue is at its bound (counted in {@link Stats#rejected()})
     */
    public Ticket<R> enqueue(String volumeId, IoKind kind, long bytes, R request, long now) {
        return new Ticket<>(enqueue(volumeId, kind, bytes, request, now, false, RequestRecord.WHOLE));
    }

    /**
     * Queues a foreground request that was already admitted elsewhere (by {@link QosExecutor}'s
     * lock-free admission): the queue bound is not checked again, and a volume that is draining
     * still takes it, since the caller already holds a future for it. Returns no ticket: the
     * executor takes its tickets from {@link #next}, so it allocates one per request, not two.
     */
    void enqueueAdmitted(String volumeId, IoKind kind, long bytes, R request, long now) {
        enqueue(volumeId, kind, bytes, request, now, true, RequestRecord.WHOLE);
    }

    /**
     * Queues one piece of a request run as several. A request too large to hold a worker in one
     * go (the data node's reads and writes above a chunk) runs as pieces, each queued behind its
     * volume's other requests when the one before it has run and chosen by the same counters, so
     * that a small request of another flow waits for at most one piece, not one whole request.
     * The request counts once, whatever its pieces: the first piece is charged the cost model's
     * cost of its bytes (the fixed cost per request and the minimum charge included) and counts
     * the operation in the volume's statistics and latencies (the first piece's wait and
     * service) and its reservation; every later piece, a <em>continuation</em>, is charged its
     * bytes alone. Byte limits count each piece's bytes; IOPS limits count the request once, at
     * its last piece, so that an IOPS limit gates a request's start and never holds back its
     * continuations. Only the first piece is subject to the queue bound; a volume that is being
     * removed still takes a continuation, whose request was admitted already.
     *
     * @param first the request's first piece (its later pieces are queued only after it ran)
     * @param last the request's last piece
     * @throws IllegalArgumentException if the volume is unknown, or gone (a continuation), or
     *     being removed (a first piece)
     * @throws QueueFullException if a first piece finds the volume's queue at its bound
     */
    public Ticket<R> enqueuePiece(String volumeId, IoKind kind, long bytes, R request, long now, boolean first,
            boolean last) {
        return new Ticket<>(enqueue(volumeId, kind, bytes, request, now, !first, RequestRecord.piece(first, last)));
    }

    private RequestRecord enqueue(String volumeId, IoKind kind, long bytes, R request, long now, boolean admitted,
            byte piece) {
        FlowNode f = flows.get(volumeId);
        if (f == null || (f.draining && !admitted)) {
            throw new IllegalArgumentException("unknown or removed volume '" + volumeId + "'");
        }
        return enqueue(f, kind, bytes, request, now, admitted, piece);
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
        return new Ticket<>(enqueue(f, kind, bytes, request, now, false, RequestRecord.WHOLE));
    }

    /**
     * Handle counterpart of {@link #enqueueAdmitted(String, IoKind, long, Object, long)}, for a
     * whole request or one piece of one ({@link RequestRecord#piece}, {@link #enqueuePiece}).
     */
    void enqueueAdmitted(VolumeHandle volume, IoKind kind, long bytes, R request, long now, byte piece) {
        enqueue(checkHandle(volume, true), kind, bytes, request, now, true, piece);
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

    /**
     * Checks a request size against {@link #MAX_REQUEST_BYTES}.
     *
     * @throws IllegalArgumentException if {@code bytes} is negative or above the maximum
     */
    static void checkRequestBytes(long bytes) {
        if (bytes < 0 || bytes > MAX_REQUEST_BYTES) {
            throw new IllegalArgumentException("request size must be in [0, " + MAX_REQUEST_BYTES
                    + "] bytes (the largest NBD request): " + bytes);
        }
    }

    private RequestRecord enqueue(FlowNode f, IoKind kind, long bytes, R request, long now, boolean admitted,
            byte piece) {
        Objects.requireNonNull(kind, "kind");
        checkRequestBytes(bytes);
        if (!admitted && f.size >= f.capacity) {
            f.rejected++;
            throw new QueueFullException(f.id, f.capacity);
        }
        RequestRecord t = pool.obtain();
        t.request = request;
        t.bytes = bytes;
        t.kind = (byte) kind.ordinal();
        t.piece = piece;
        // A recycled ticket often served the same volume before: store only what changed (see
        // "Reference stores").
        if (t.flow != f) {
            t.flow = f;
        }
        if (t.task != foreground) {
            t.task = foreground;
        }
        t.enqueuedAt = now;
        t.status = RequestRecord.QUEUED;
        f.push(t);
        queued++;
        if (f.size + f.inFlight >= 2 && f.deepUntil - now < DEEP_NANOS / 2) {
            f.deepUntil = now + DEEP_NANOS;
            f.tenant.deepUntil = f.deepUntil;
            foreground.deepUntil = f.deepUntil;
        }
        if (f.state == SchedNode.IDLE) {
            levels.wake(f, now);
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
        return new Ticket<>(enqueueBackground(task, request, now, false));
    }

    /** Background counterpart of {@link #enqueueAdmitted}. */
    void enqueueBackgroundAdmitted(String task, R request, long now) {
        enqueueBackground(task, request, now, true);
    }

    private RequestRecord enqueueBackground(String task, R request, long now, boolean admitted) {
        TaskNode k = tasksByName.get(task);
        if (k == null || (k.draining && !admitted) || k.foreground) {
            throw new IllegalArgumentException("unknown or removed background task '" + task + "'");
        }
        if (!admitted && k.size >= k.capacity) {
            k.rejected++;
            throw new QueueFullException(k.name, k.capacity);
        }
        RequestRecord t = pool.obtain();
        t.request = request;
        t.flow = null;
        t.kind = RequestRecord.NO_KIND;
        t.bytes = 0;
        t.piece = RequestRecord.WHOLE; // a pooled record may have served a later piece: this job counts as an op
        t.task = k;
        t.enqueuedAt = now;
        t.status = RequestRecord.QUEUED;
        k.push(t);
        queued++;
        return t;
    }

    // ------------------------------------------------------------------------------ dispatch

    /**
     * Chooses the next request to run and marks it running, or returns null when nothing is
     * eligible at {@code now} (everything idle or throttled; see {@link #nextEligibleTime()}).
     */
    public Ticket<R> next(long now) {
        levels.clearHold();
        // before the early return: a throttled node whose time has passed must leave the timers
        // even with nothing queued, or nextEligibleTime would keep naming that past time
        levels.processTimers(now);
        if (queued == 0) {
            return null;
        }
        TaskNode best = null;
        boolean fgAwaited = false;
        for (TaskNode k : tasks) {
            boolean ready = k.foreground ? levels.ready(now) : k.size > 0;
            if (k.foreground) {
                boolean busy = ready || levels.held();
                if (busy || !levels.anticipation() || queued > backgroundQueued()) {
                    // running, or not ready with requests queued: waiting for its limits, not dry
                    k.awaited = false;
                } else if (k.busy && k.deepUntil - now > 0) {
                    k.awaited = true; // the deep foreground just ran dry: wait a moment for it
                    k.anticipatedUntil = now + ANTICIPATION_NANOS;
                } else if (k.awaited && k.anticipatedUntil - now <= 0) {
                    k.awaited = false;
                }
                k.busy = busy;
                fgAwaited = k.awaited;
            }
            if (ready) {
                if (!k.wasReady && k.counter - rootVtime < 0) {
                    k.counter = rootVtime; // rejoin rule at the root
                }
                if (best == null || k.counter - best.counter < 0) {
                    best = k;
                }
            }
            k.wasReady = ready || k.foreground && (levels.held() || fgAwaited); // waiting for it is not idleness
        }
        if (best == null) {
            return null;
        }
        if (fgAwaited && foreground.counter - best.counter < 0) {
            // the root's anticipation: the foreground, behind this task, has requests on the way
            levels.holdUntil(foreground.anticipatedUntil);
            return null;
        }
        if (best.counter - rootVtime > 0) {
            rootVtime = best.counter;
            if (rootVtime > REBASE_THRESHOLD) {
                rebaseRoot();
            }
        }
        RequestRecord t = best.foreground ? levels.dispatch(now) : best.poll();
        queued--;
        running++;
        best.inFlight++;
        t.status = RequestRecord.RUNNING;
        t.dispatchedAt = now;
        if (t.isFirst()) {
            int[] counts = best.waitCounts; // a volume's wait is counted in ForegroundLevels.dispatch
            int[] grown = LatencyRecorder.record(counts, now - t.enqueuedAt);
            if (grown != counts) {
                best.waitCounts = grown; // only when it grew: see "Reference stores"
            }
        }
        return new Ticket<>(t); // a fresh handle: no reference stored into the (old) record
    }

    /** Rebases the root. {@code O(tasks)}. */
    private void rebaseRoot() {
        long base = rootVtime;
        rootVtime = 0;
        for (TaskNode k : tasksByName.values()) {
            k.rebase(base);
        }
    }

    /**
     * Reports that a running request finished and charges its task the CPU time it consumed, as
     * {@link #complete(Ticket, long, long, long)} with a worker time equal to that CPU time.
     *
     * @param ticket a ticket returned by {@link #next(long)}
     * @param cpuNanos the CPU time spent processing it, as measured by the executor
     * @param now current time
     */
    public void complete(Ticket<R> ticket, long cpuNanos, long now) {
        complete(ticket, cpuNanos, cpuNanos, now);
    }

    /**
     * Reports that a running request finished: its task's counter is charged its worker time, its
     * task's usage both times, and its volume's usage its CPU time. The ticket must not be used
     * afterwards.
     *
     * @param ticket a ticket returned by {@link #next(long)}
     * @param cpuNanos the CPU time spent processing it, as measured by the executor
     * @param workerNanos the time it held its worker running or blocked (waiting for a CPU not
     *     included): what the tasks' shares divide; more than {@code cpuNanos} over time when the
     *     store is slower than the CPU
     * @param now current time
     */
    public void complete(Ticket<R> ticket, long cpuNanos, long workerNanos, long now) {
        RequestRecord r = ticket.record;
        if (r.owner != pool) {
            throw new IllegalArgumentException("ticket of another scheduler: " + ticket);
        }
        if (r.generation != ticket.generation) {
            throw new IllegalStateException("stale ticket: its request was already completed");
        }
        if (r.status != RequestRecord.RUNNING) {
            throw new IllegalStateException("ticket is not running: " + ticket);
        }
        long cpu = Math.max(0, cpuNanos);
        long served = now - r.dispatchedAt;
        TaskNode k = r.task;
        long worker = Math.max(0, workerNanos);
        k.charge(worker);
        k.cpuNanos += cpu;
        k.workerNanos += worker;
        k.inFlight--;
        boolean op = r.isFirst(); // a continuation adds bytes to its request, not an op
        if (op) {
            k.ops++;
            int[] counts = k.serviceCounts;
            int[] grown = LatencyRecorder.record(counts, served);
            if (grown != counts) {
                k.serviceCounts = grown;
            }
        }
        FlowNode f = r.flow;
        if (f != null) {
            f.inFlight--;
            f.cpuNanos += cpu;
            int ops = op ? 1 : 0;
            if (r.kind == READ) {
                f.readOps += ops;
                f.readBytes += r.bytes;
            } else if (r.kind == REPLICA) {
                f.replicaOps += ops;
                f.replicaBytes += r.bytes;
            } else {
                f.writeOps += ops;
                f.writeBytes += r.bytes;
            }
            if (op && r.kind != REPLICA) {
                latencies.deferService(f.slot, served);
            }
            if (f.draining) {
                maybeRetire(f);
            }
        }
        if (k.draining && k.size == 0 && k.inFlight == 0) {
            rebuildTaskArray();
        }
        running--;
        pool.release(r);
    }

    /**
     * The earliest time at which a throttled node becomes eligible or a reservation falls due, or
     * {@link #NO_DEADLINE} when nothing is waiting on time. Meaningful after {@link #next(long)}
     * returned null: a worker sleeps until then or until the next submission.
     */
    public long nextEligibleTime() {
        return levels.nextEligibleTime();
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
                k.deepUntil = now; // not deep: a clock's origin is arbitrary, so 0 may lie ahead
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
                tn = levels.newTenant(s, allocateSlot(), now);
                tenants.put(s.id(), tn);
            } else {
                tn.apply(s, now);
            }
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
                f = new FlowNode(s, allocateSlot(), this, now);
                f.reservationTag = now - levels.reservationShift;
                f.tenant = tn;
                tn.flows.add(f);
                flows.put(s.id(), f);
            } else {
                f.apply(s, now);
                if (f.tenant != tn) {
                    // Its counter meant something only relative to the old tenant's virtual time:
                    // it starts at the new level as a newcomer (the heaps are rebuilt below).
                    f.tenant.flows.remove(f);
                    f.tenant = tn;
                    tn.flows.add(f);
                    f.placeAt(tn.vtime);
                }
            }
        }
        for (FlowNode f : flows.values()) {
            if (!ids.contains(f.id)) {
                f.draining = true;
            }
        }
        this.config = next;

        // 4. rebuild every heap from scratch under the new policies: O(n log n), done rarely.
        levels.unplaceAll(tenants.values(), flows.values(), now);
        for (FlowNode f : new ArrayList<>(flows.values())) {
            if (f.size > 0) {
                levels.refresh(f, now);
            } else if (f.draining) {
                maybeRetire(f);
            }
        }
        for (TenantNode tn : new ArrayList<>(tenants.values())) {
            if (tn.draining && tn.flows.isEmpty()) {
                tenants.remove(tn.id);
                releaseSlot(tn);
            } else {
                levels.refresh(tn, now);
            }
        }
    }

    private int allocateSlot() {
        int slot = freeSlotCount > 0 ? freeSlots[--freeSlotCount] : nextSlot++;
        levels.ensureSlot(slot);
        latencies.ensure(slot);
        return slot;
    }

    /** Returns a retired node's slot; precondition: the node is in no heap. */
    private void releaseSlot(SchedNode n) {
        if (n instanceof FlowNode) {
            latencies.release(n.slot);
        }
        if (freeSlotCount == freeSlots.length) {
            freeSlots = Arrays.copyOf(freeSlots, freeSlotCount * 2);
        }
        freeSlots[freeSlotCount++] = n.slot;
    }

    private void maybeRetire(FlowNode f) {
        if (f.draining && f.size == 0 && f.inFlight == 0) {
            TenantNode tn = f.tenant;
            levels.unplace(f);
            f.retired = true;
            flows.remove(f.id);
            tn.flows.remove(f);
            releaseSlot(f);
            if (tn.draining && tn.flows.isEmpty()) {
                levels.unplace(tn);
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

    /**
     * Turns anticipation on or off (off by default). On, the weight phase waits up to
     * {@link #ANTICIPATION_NANOS} for a deep volume or tenant whose queue just ran dry before it
     * serves a sibling that is further ahead, so weights hold even when the backlog waits outside
     * the scheduler; off, the scheduler is work-conserving. Turning it off forgets every wait.
     */
    public void anticipation(boolean on) {
        levels.anticipation(on);
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

    /**
     * True if the volume is known and not being removed: false both while a removed volume drains
     * and once it is gone; {@link #volumeStatus} tells the two apart.
     */
    public boolean hasVolume(String volumeId) {
        FlowNode f = flows.get(volumeId);
        return f != null && !f.draining;
    }

    /** Whether a volume is live, draining after its removal, or gone (or never known). */
    public VolumeStatus volumeStatus(String volumeId) {
        FlowNode f = flows.get(volumeId);
        return f == null ? VolumeStatus.GONE : f.draining ? VolumeStatus.DRAINING : VolumeStatus.LIVE;
    }

    /** The life cycle of a volume, as {@link #volumeStatus} reports it. */
    public enum VolumeStatus {
        /** Configured: accepts requests. */
        LIVE,
        /**
         * Removed by a reconfiguration but still has queued or running requests: accepts no new
         * ones, is still scheduled under its last policy, and is still in snapshots.
         */
        DRAINING,
        /** Not configured, or removed and fully drained: absent from snapshots. */
        GONE
    }

    /** True if the background task is known and not being removed. */
    public boolean hasBackgroundTask(String task) {
        TaskNode k = tasksByName.get(task);
        return k != null && !k.draining && !k.foreground;
    }

    /**
     * Each volume's queued plus in-flight requests, by id (draining volumes included): what
     * {@link #snapshot} reports as {@code queueDepth + inFlight}, without its statistics, for
     * frequent sampling. Linear in the number of volumes.
     */
    public Map<String, Long> queueDepths() {
        Map<String, Long> depths = new HashMap<>(flows.size() * 4 / 3 + 1);
        for (FlowNode f : flows.values()) {
            depths.put(f.id, (long) f.size + f.inFlight);
        }
        return depths;
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
        return SnapshotBuilder.build(this, now, resetLatencies);
    }

    /** Adds refusals counted outside the scheduler to a volume's {@code rejected}, if it still exists. */
    void addRejected(String volumeId, long n) {
        FlowNode f = flows.get(volumeId);
        if (f != null) {
            f.rejected += n;
        }
    }

    /** Adds refusals counted outside the scheduler to a task's {@code rejected}, if it still exists. */
    void addTaskRejected(String task, long n) {
        TaskNode k = tasksByName.get(task);
        if (k != null) {
            k.rejected += n;
        }
    }

    int backgroundQueued() {
        int n = 0;
        for (TaskNode k : tasks) {
            if (!k.foreground) {
                n += k.size;
            }
        }
        return n;
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
