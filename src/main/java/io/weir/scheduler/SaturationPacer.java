package io.weir.scheduler;

import java.util.ArrayList;
import java.util.List;

/**
 * Makes the scheduler the node's bottleneck while weights are not holding, with no capacity
 * setting: a node-wide pace on the foreground's weight phase (a rate in cost units per second,
 * like Linux iocost's {@code vrate}), steered by the service that backlogged volumes forfeit.
 * Off by default ({@link HierarchicalScheduler#pacing}); the data node turns it on with
 * {@code --pacing on}.
 *
 * <h2>Why</h2>
 * The scheduler can only order what waits in its queues. When the node's real bottleneck is
 * elsewhere (on a CPU-bound node: the clients' share of the cores, loopback TCP, replies waiting
 * in socket buffers for a client that cannot read them as fast as they come), the workers find
 * one or two requests queued and take them all: the split is then decided by whichever client
 * runs most, not by weights (measured on a 2-core node, weights 3:1 and no limits: 0.6-1.35:1,
 * with 2-5 of each client's 32 requests queued in the scheduler and the rest in its socket
 * buffers). A pace just below the rate the node sustains moves the backlog into the scheduler,
 * where weights decide, and a low-weight client, whose requests now wait here, stops taking CPU
 * from the others.
 *
 * <h2>The signal: forfeited service</h2>
 * A volume (or tenant) that had two or more requests queued at once in this period or the last
 * one is <em>backlogged</em>: its client asks for more than it is served at once. When such a
 * node runs dry and comes back, the rejoin rule would place it at its level's virtual time, and
 * the service it fell behind by is lost to it: that is exactly a weight not holding because its
 * requests waited somewhere the scheduler cannot see. While pacing, such a node keeps up to
 * {@link #creditCost()} of that lag (it catches up when its requests arrive); what goes beyond,
 * or everything while not pacing, is <em>forfeited</em> and counted. Volumes and tenants shaped by
 * a limit or a reservation of their own are left out (their limits decide their share).
 *
 * <h2>The controller</h2>
 * Every {@link #PERIOD_NANOS}:
 * <ul>
 *   <li>fewer than two backlogged unshaped volumes (nothing to share): no pace, so a lone volume
 *       is never paced (work conservation);</li>
 *   <li>forfeited service above {@value #FORFEIT} of the cost served in the period: the pace
 *       drops to {@value #DECREASE} × the rate served in the period, never below
 *       {@value #FLOOR} × the highest rate served recently (a client that cannot keep its
 *       volume busy at any pace cannot drag the node down without bound);</li>
 *   <li>otherwise, if the pace held work back, it rises by {@value #INCREASE} (probing for
 *       capacity, as iocost's vrate does); a pace far above what is served for a second is
 *       lifted.</li>
 * </ul>
 * So the pace settles just below the rate at which the node's real bottleneck (CPU, the send
 * of large replies, a slow store: whatever it is) starts to starve a backlogged volume, and
 * finds it again when the bottleneck moves. It is a GCRA with a tolerance of
 * {@value #TOLERANCE_NANOS} ns, so workers are woken in small bursts, not once per request.
 * Reservation-phase service is charged to the pace but never held by it.
 *
 * <p>Per request it costs O(1) (a few field updates); the evaluation is O(1) per period. Not
 * thread-safe: guarded by the scheduler lock.
 */
final class SaturationPacer {

    static final long PERIOD_NANOS = 100_000_000L;
    static final long TOLERANCE_NANOS = 2_000_000L;
    /** Credit of a stalled backlogged node, in time at the pace: longer than a client's usual stall on a loaded machine. */
    static final long CREDIT_NANOS = 500_000_000L;
    static final double FORFEIT = 0.02;
    static final double DECREASE = 0.95;
    static final double INCREASE = 1.02;
    /** Fair periods in a row before the pace probes upward. */
    static final int PROBE_AFTER = 3;
    static final double FLOOR = 0.5;
    /** Per period: how fast the recent peak rate is forgotten (about 5% per second). */
    private static final double PEAK_DECAY = 0.995;
    /** Periods in a row with nothing to share, or the pace far above what is served, before it is lifted. */
    private static final int SLACK_PERIODS = 10;

    private boolean enabled;
    /** Cost units per second, or +infinity when not pacing. */
    private double rate = Double.POSITIVE_INFINITY;
    /** GCRA theoretical arrival time of the next weight-phase dispatch. */
    private long tat;
    private long periodStart;
    private int epoch = 1;
    private long periodCost;
    private double forfeited;
    private boolean heldBack;
    private double peak;
    private int slackPeriods;
    /** Periods in a row in which the pace held work back and nothing was forfeited. */
    private int fairPeriods;
    /** Volumes backlogged in this period, each once. */
    private final List<FlowNode> backlogged = new ArrayList<>();
    private long lastForfeitPermille;

    SaturationPacer(long now) {
        this.periodStart = now;
        this.tat = now;
    }

    /** Turns pacing on or off; off, the scheduler behaves exactly as without a pacer. */
    void enable(boolean on, long now) {
        enabled = on;
        lift(now);
    }

    /** The pace in cost units per second; {@code +Infinity} while not pacing. */
    double rate() {
        return rate;
    }

    /** Service forfeited in the last period, in thousandths of the cost served in it. */
    long lastForfeitPermille() {
        return lastForfeitPermille;
    }

    /** True if a weight-phase dispatch may happen at {@code now}; records it when it may not. */
    boolean allows(long now) {
        if (rate == Double.POSITIVE_INFINITY || tat - now <= TOLERANCE_NANOS) {
            return true;
        }
        heldBack = true;
        return false;
    }

    /** When the pace allows the next dispatch, or {@link HierarchicalScheduler#NO_DEADLINE}. */
    long eligibleAt() {
        return rate == Double.POSITIVE_INFINITY ? HierarchicalScheduler.NO_DEADLINE : tat - TOLERANCE_NANOS;
    }

    /** A foreground request of {@code f} was queued; {@code f.size} counts it. */
    void queued(FlowNode f) {
        if (enabled && f.size >= 2 && f.paceBackloggedEpoch != epoch) {
            f.paceBackloggedEpoch = epoch;
            f.tenant.paceBackloggedEpoch = epoch;
            backlogged.add(f);
        }
    }

    /** A foreground request costing {@code cost} was dispatched. */
    void dispatched(long cost, long now) {
        if (!enabled) {
            return;
        }
        periodCost += cost;
        if (rate != Double.POSITIVE_INFINITY) {
            tat = Math.max(tat, now) + (long) (cost * 1e9 / rate);
        }
    }

    /**
     * Where a volume or tenant that becomes ready again is placed, given its level's virtual time
     * {@code vtime} and whether it is shaped by limits of its own. A recently backlogged,
     * unshaped node keeps up to {@link #creditCost()} of its lag while pacing; what it loses
     * beyond is counted as forfeited.
     */
    long rejoinAt(SchedNode n, int backloggedEpoch, boolean shaped, long vtime) {
        if (!enabled || shaped || epoch - backloggedEpoch > 1 || n.counter - vtime >= 0) {
            return vtime;
        }
        long credit = rate == Double.POSITIVE_INFINITY ? 0 : creditCost() * SchedNode.COUNTER_SCALE / n.weight;
        long lag = vtime - n.counter;
        if (lag > credit) {
            forfeited += (double) (lag - credit) * n.weight / SchedNode.COUNTER_SCALE;
        }
        return vtime - credit;
    }

    /**
     * The most service a recently backlogged node may get back: the pace over
     * {@value #CREDIT_NANOS} ns, at least 1 MiB.
     */
    long creditCost() {
        return (long) Math.min(HierarchicalScheduler.MAX_COST,
                Math.max(HierarchicalScheduler.RESERVATION_LEAD_BYTES, rate * CREDIT_NANOS / 1e9));
    }

    /** Ends the period if it is over: evaluates it and sets the pace for the next. */
    void tick(long now) {
        if (!enabled) {
            return;
        }
        long elapsed = now - periodStart;
        if (elapsed < PERIOD_NANOS) {
            return;
        }
        double served = periodCost * 1e9 / elapsed;
        peak = Math.max(peak * PEAK_DECAY, served);
        int sharing = 0;
        for (FlowNode f : backlogged) {
            if (!shaped(f) && !f.retired) {
                sharing++;
            }
        }
        lastForfeitPermille = periodCost == 0 ? 0 : (long) (forfeited * 1000 / periodCost);
        if (sharing < 2) {
            if (rate != Double.POSITIVE_INFINITY && ++slackPeriods >= SLACK_PERIODS) {
                lift(now);
            }
        } else if (forfeited > FORFEIT * periodCost) {
            if (rate == Double.POSITIVE_INFINITY) {
                tat = now;
            }
            // down by the share of service that was forfeited (room for the starved), and a margin
            double lost = Math.min(0.5, forfeited / periodCost);
            rate = Math.max(1, Math.max(FLOOR * peak, Math.min(rate, served) * (1 - lost) * DECREASE));
            slackPeriods = 0;
            fairPeriods = 0;
        } else if (rate != Double.POSITIVE_INFINITY) {
            if (heldBack) {
                if (++fairPeriods >= PROBE_AFTER) {
                    rate *= INCREASE; // probe for capacity once the pace has been fair for a while
                }
                slackPeriods = 0;
            } else if (served < rate * 0.5 && ++slackPeriods >= SLACK_PERIODS) {
                lift(now);
            }
        }
        backlogged.clear();
        epoch++;
        periodCost = 0;
        forfeited = 0;
        heldBack = false;
        periodStart = now;
    }

    private void lift(long now) {
        rate = Double.POSITIVE_INFINITY;
        tat = now;
        slackPeriods = 0;
    }

    /** A volume whose share its own or its tenant's limits or reservation decide. */
    static boolean shaped(FlowNode f) {
        return f.reservationInterval > 0 || f.limiter != Limiter.UNLIMITED || f.tenant.limiter != Limiter.UNLIMITED;
    }
}
