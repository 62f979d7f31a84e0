/**
 * Weir's hierarchical QoS scheduler: the part of a data node that decides, request by request,
 * whose work runs next on the CPU. Pure Java; it depends on the JDK and HdrHistogram only, and of
 * the wire protocol on {@link io.weir.protocol.QosSettings} alone: the JDK-only owner of the QoS
 * fields' rules, which the control plane checks too, so that what it accepts the scheduler
 * accepts. The scheduler never sees Jackson.
 *
 * <h2>Architecture</h2>
 * <pre>
 *                         root: tasks by worker time / share   (first currency, charged at completion)
 *        ┌──────────────┬─────────┬─────────┬──────────────┬─────────┐
 *    foreground        flush      gc     replication     scrub      (each background task: a FIFO)
 *        │
 *        ├─ reservation phase: volume with the earliest due reservation tag (mClock constraint phase)
 *        └─ weight phase: tenants by counter ─► volumes by counter  (second currency: cost / weight)
 * </pre>
 * <ul>
 *   <li>{@link io.weir.scheduler.HierarchicalScheduler} is the single-threaded core: the caller
 *       holds a lock and passes the time. Each level is an indexed 4-ary min-heap of its ready
 *       children keyed by counter; children over a limit wait in one timer heap keyed by the time
 *       they may go again; volumes with a reservation are also in a heap keyed by reservation tag.
 *       A decision is {@code O(log n)}; requests are pooled {@link io.weir.scheduler.Ticket}s
 *       linked into intrusive FIFOs, so steady state allocates nothing. A caller that queues many
 *       requests on one volume resolves it once to a {@link io.weir.scheduler.VolumeHandle} (the
 *       volume's node itself), so the per-request path does no id lookup. It keeps the root
 *       (tasks), submission, completion and reconfiguration; the foreground's tenant and volume
 *       levels, their heaps and both phases are its {@code ForegroundLevels}.</li>
 *   <li>{@link io.weir.scheduler.QosExecutor} runs work on N threads under that core, measures
 *       each item's CPU time ({@link io.weir.scheduler.CpuClock}) and worker time (CPU time plus
 *       time blocked, from the thread's {@code RunDelay}), both sampled by each worker's
 *       {@code CpuSampler}, and charges them; submissions reach the core through its lock-free
 *       {@code Inbox}.</li>
 *   <li><b>Anticipation</b> (off unless {@link io.weir.scheduler.QosExecutor.Builder#anticipation}
 *       turns it on; the data node turns it on unless {@code --anticipation off}) makes weights
 *       hold when the backlog waits outside the scheduler; see "Anticipation" below.</li>
 *   <li>{@link io.weir.scheduler.SchedulerConfig} is the immutable policy set, applied whole by
 *       {@code reconfigure}; {@link io.weir.scheduler.SchedulerSnapshot} and
 *       {@link io.weir.scheduler.Stats} are the usage statistics.</li>
 *   <li>{@link io.weir.scheduler.TimeSource} (with {@link io.weir.scheduler.ManualTimeSource}) is
 *       the injectable clock; {@code io.weir.scheduler.sim} replays workloads in virtual time.</li>
 * </ul>
 *
 * <h2>Parameters</h2>
 * As in dmclock: <em>weight</em> is proportional share (1..10000, default 100); <em>min IOPS</em>
 * is a reservation; <em>max IOPS / max bytes/s</em> are limits; <em>burst IOPS / burst bytes/s</em>
 * are SolidFire peak rates. {@code 0} means unlimited / none. A task's <em>share</em> is its
 * weight for worker time (CPU time plus time blocked in the store), optionally driven by a utilization signal (low below T1, high above T2, linear or
 * exponential between).
 *
 * <h2>The rejoin rule, exactly</h2>
 * Every level (the root, the set of tenants, each tenant's set of volumes) keeps a virtual time
 * {@code V}, the largest counter that level's weight phase has dispatched (the SFQ start tag of the
 * request in service). When a child becomes ready &mdash; its queue goes from empty to non-empty, or
 * its throttle ends &mdash; its counter becomes {@code max(counter, V)}. Since {@code V} never
 * exceeds the counter of any ready child, a returning child is placed no earlier than everyone
 * already competing (no banked credit) and no later than its own past (no penalty beyond what it
 * consumed). A reservation tag is placed the mClock way, {@code max(tag, now)}.
 *
 * <p>A volume that a reconfiguration moves to another tenant is placed at its new tenant's
 * {@code V} as a newcomer: its counter meant something only relative to the old tenant's virtual
 * time, so it neither keeps credit nor debt from there.
 *
 * <h2>Fairness bound</h2>
 * For two siblings {@code i, j} ready throughout an interval, with {@code W} the cost served and
 * {@code Lmax} the largest cost of one request, {@code |W_i/w_i − W_j/w_j| ≤ Lmax_i/w_i +
 * Lmax_j/w_j} (SFQ, Goyal, Vin and Cheng, SIGCOMM 1996, Theorem 1). It holds at the tenant level
 * and among the volumes of one tenant, and, for a child that rejoins, from the moment it rejoins:
 * after 10 s of idleness a volume receives at most {@code Lmax_i/w_i + Lmax_j/w_j} more normalised
 * service than a continuously backlogged sibling, and is not starved. After a weight change the
 * bound holds again once each of the two has been charged once under its new weight. At the root,
 * the same argument bounds worker time per share, with the worker time of requests in flight on
 * other workers added to {@code Lmax} (charges arrive at completion). The tests check the bound
 * exactly, in integers.
 *
 * <h2>Limits and bursting</h2>
 * Each limit is a GCRA constraint (virtual-scheduling form of a token bucket). With a burst rate,
 * the sustained constraint carries credit that accrues while the child runs below its max, capped
 * at 60 s × (burst − max) (Element OS burstTime), and a peak constraint bounds the rate while the
 * credit is spent. Over any window of length {@code d}: served ≤ {@code max·d + credit cap + one
 * request} and ≤ {@code burst·d + burst·20 ms + one request}. Throttled time is reported per node.
 *
 * <h2>Reservations, and what happens when they are infeasible</h2>
 * A volume whose reservation tag is due is served before any weight-based choice, earliest tag
 * first; each such dispatch advances its tag by {@code 1/minIops}. The service is also charged to
 * its counter (and its tenant's), so a volume gets {@code max(reservation, fair share)}, not the
 * sum. When the reservations add up to more than the node can serve, earliest-tag-first serves
 * every backlogged reserved volume <b>in proportion to its min IOPS</b>, and weight-only volumes
 * get nothing until the reservations are met again.
 *
 * <h3>The bounded lead</h3>
 * A volume whose reservation exceeds its fair share is charged faster than its level's virtual
 * time advances. Unbounded, that charge became a debt: once the reservation was removed, or its
 * competitors stopped, the volume waited until the others had caught up with everything it had
 * received beyond its share (72 s of starvation after an hour at 2,000 IOPS against a fair
 * share of 909; and past {@code 2^63} units the comparison flipped). So after every
 * reservation-phase dispatch the lead is capped:
 * <pre>
 *   counter_i ≤ V + max(RESERVATION_LEAD_BYTES, cost) / w_i        (RESERVATION_LEAD_BYTES = 1 MiB)
 * </pre>
 * and likewise the tenant's counter against the tenant level's {@code V} with the tenant's weight.
 * Every other charge leaves a ready child at most its last request's {@code cost / w} ahead, so
 * at every moment a ready volume's lead is at most {@code max(1 MiB, Lmax_i) / w_i}. The snapshot
 * reports it ({@link io.weir.scheduler.SchedulerSnapshot#levels()}).
 *
 * <p>What this means, exactly:
 * <ul>
 *   <li><b>While the reservation holds:</b> a volume gets at least its reservation and, when its
 *       fair share is larger, its fair share (it is served by the weight phase whenever its
 *       counter is the lowest, and reservation service only adds to its counter). When its
 *       reservation is larger, its capped counter stays {@code 1 MiB / w_i} ahead, so the weight
 *       phase serves it only if a sibling's last request weighs more than that
 *       ({@code Lmax_j / w_j > 1 MiB / w_i}): then it receives a little more than its reservation.
 *       This is the price of the bound; mClock's own tag adjustment [OSDI 2010] has the same
 *       purpose.</li>
 *   <li><b>After any change</b> of reservations or competition (a reservation removed, lowered or
 *       raised; siblings that stop or start), for two volumes {@code i, j} of one tenant that are
 *       backlogged without a reservation over an interval,
 *       {@code W_j/w_j − W_i/w_i ≤ Lmax_j/w_j + lead_i}, with {@code lead_i ≤ max(1 MiB, Lmax_i)/w_i}:
 *       the SFQ bound, widened by the lead at the start. In time: volume {@code i} is served
 *       again, at its fair share from then on, before each sibling {@code j} has received
 *       {@code lead_i·w_j + Lmax_j} bytes. Eleven equal volumes of 4 KiB requests at 10,000 IOPS:
 *       after its 2,000 IOPS reservation is removed, a volume waits at most
 *       {@code 10 × (256 + 1)} requests, 0.26 s, and then gets its 909 IOPS.
 *       ({@code ReservationRecoveryPropertiesTest} checks this over random weights, reservations
 *       and changes; {@code LongRunningSchedulerTest} the scenarios above.)</li>
 * </ul>
 *
 * <h2>Range: counters over unbounded run time</h2>
 * Counters are {@code long}s that only grow, and an idle child's counter lags its level's
 * {@code V} without limit; compared by subtraction, a lag beyond {@code 2^63} would read as a lead
 * (a weight-1 volume beside one at 1 GB/s gets there in 39 hours). So each level <b>rebases</b>:
 * when its {@code V} passes {@code 2^62}, it subtracts {@code V} from {@code V} and from every
 * child's counter; a counter that would go below 0 (an idle child) is set to 0, the new {@code V},
 * which is where the rejoin rule would place it anyway. Order and leads are unchanged, so
 * scheduling is exactly as if the counters were unbounded integers. Between rebases every
 * counter stays in {@code [0, 2^62 + max lead]}: a charge is at most {@code 2^56} units (cost at
 * most {@code 2^40}, {@link io.weir.scheduler.HierarchicalScheduler#MAX_COST}; at the root
 * {@code 2^54} units per completion), and a lead at most a few charges. A rebase is
 * {@code O(children)} and happens once per {@code 2^62} units of virtual time, that is once per
 * 64 TiB of cost per unit of weight: in practice after months, if ever.
 *
 * <h2>Request size</h2>
 * A request is at most {@link io.weir.scheduler.HierarchicalScheduler#MAX_REQUEST_BYTES}
 * ({@code 2^32 − 1} bytes, the largest length an NBD request can carry); {@code enqueue} and
 * {@code QosExecutor.submit} reject larger sizes. Up to it, {@code cost × 2^16} and a limiter's
 * {@code bytes × 10^9} fit a {@code long} (the latter falls back to exact wide arithmetic for
 * rates above {@code 4.9 × 10^18} bytes/s).
 *
 * <p>A request need not hold a worker for its whole size: its submitter may run it as pieces,
 * each submitted once the one before has run ({@code QosExecutor.submitPiece},
 * {@code HierarchicalScheduler.enqueuePiece}). Every piece queues behind its volume's other
 * requests and is chosen by the counters like any request, so a small request of another flow
 * waits for one piece, not a whole 32 MiB read. The request still counts once: its first piece
 * pays the cost model's cost (fixed cost and minimum charge included) and is the operation in
 * statistics, latencies and reservations; later pieces pay their bytes; IOPS limits count the
 * request at its last piece, so that a limit gates the start of a request and never stalls it
 * half done, and byte limits count every piece's bytes.
 *
 * <h2>Anticipation: weights where the backlog waits elsewhere</h2>
 * A work-conserving scheduler can only order what waits in its queues. When the node's real
 * bottleneck is elsewhere (the clients' share of the CPU, loopback TCP, replies waiting in socket
 * buffers), a client's requests spend most of their time outside the scheduler, its queue here
 * runs dry between them, and every dry moment hands a worker to whoever else has a request
 * queued: weights 3:1 gave 1.02-1.15:1 on a 2-core node with no limits, and a cap below the
 * node's capacity was the only way to get them (see docs/benchmarks.md, benchmark 10). Linux's
 * BFQ meets the same problem on disks by <em>idling</em>: it keeps the device waiting a moment for
 * the queue it serves, since that queue's next request is on its way. Weir does the same per level
 * of the weight phase, with no capacity setting:
 * <ul>
 *   <li>a volume is <em>deep</em> for {@code DEEP_NANOS} (100 ms) after it had two or more
 *       requests at the scheduler at once (queued or running): its client keeps several in flight,
 *       so when its queue runs dry, more are coming. A QD1 client is never deep, so nobody waits
 *       for it and a lone light client's latency is untouched. A tenant is deep while one of its
 *       volumes is;</li>
 *   <li>when a deep volume's queue runs dry at a dispatch it is <em>anticipated</em>: it stays in
 *       its level's anticipated heap, keyed by its counter, for {@code ANTICIPATION_CREDIT_NANOS}
 *       (20 ms). A tenant whose last ready volume ran dry that way is anticipated at the tenant
 *       level. Volumes and tenants shaped by limits or a reservation of their own are not (their
 *       limits decide their share, and waiting for a throttled one would be waste);</li>
 *   <li>for the first {@code ANTICIPATION_NANOS} (1 ms) of that, the weight phase serves its
 *       choice only if it is at most {@code ANTICIPATION_SLACK_BYTES} (1 MiB) of cost per unit of
 *       its weight ahead of the lowest anticipated sibling. Otherwise the foreground waits (the
 *       workers park until the wait ends, {@link io.weir.scheduler.HierarchicalScheduler#nextEligibleTime()},
 *       or a request arrives); background tasks may run meanwhile, and the root treats the
 *       foreground as busy, not idle. The slack lets the workers keep serving the sibling through
 *       the deep volume's short gaps, in batches, instead of parking at every one: with no slack
 *       two volumes together got 0.875 of {@code --qos off}'s aggregate, with it 0.93-1.00;</li>
 *   <li>the root does the same for the foreground task: when the deep foreground runs dry, a
 *       background task (scrub, gc, ...) whose counter is further ahead waits up to 1 ms
 *       for it. Scrub beside one fio client (4 KiB, QD32, no limits) took more CPU than the
 *       foreground without it (0.63:1 for shares 75:25) and 2.05:1 with it
 *       ({@code DataNodeQosE2ETest}). A foreground whose requests wait for its limits has not run
 *       dry and is not waited for: the background task runs through the throttle;</li>
 *   <li>an anticipated node whose request arrives within its credit (20 ms) rejoins at its own
 *       counter, not at the level's virtual time: it was never idle in the sense of the rejoin
 *       rule, and it catches up what its siblings ran meanwhile (at most the slack while it was
 *       waited for, and what they got after the wait). After the credit it rejoins by the rule.
 *       Work conservation is given up for at most 1 ms per dry moment of a deep flow.</li>
 * </ul>
 * So while a deep flow comes back within its credit, the split between it and its siblings is the
 * SFQ split by counters, as if it had stayed backlogged, and a sibling whose requests wait here
 * stops taking CPU from the others. Measured ({@code src/test/bench/contention-bench.sh 5 6 2},
 * docs/benchmarks.md benchmark 10) on a 2-core node with the clients on the same cores, weights
 * 300:100 and no limits: heavy:light 3.00 (0.90 with {@code --qos off}), two volumes together
 * 1.002 of {@code --qos off}'s aggregate, a lone volume 0.959.
 *
 * <p>When the bottleneck is a store slower than the CPU, the workers wait in it, the backlog waits
 * in the scheduler's queues, and the queues run dry only when the clients stop: SFQ alone holds
 * the weights there, and anticipation has nothing to do. {@code DataNodeQosE2ETest}'s slow-store
 * checks (a test-only service time of 0.5 ms per transfer, no limits) gave 3.00 for weights
 * 300:100 and a cost ratio of 1.00 for 4 KiB beside 64 KiB reads, with anticipation on and off.
 * Task shares divide <em>worker time</em>: the patent's currency is CPU time, but there a
 * task's time in the store is not CPU. A request's worker time is its CPU time plus the time it
 * held its worker blocked, which is its wall time less its CPU time and its run delay (the time
 * it was runnable but waiting for a CPU, read from Linux's {@code schedstat}; where the OS does
 * not give it, worker time is CPU time). When the CPU is the bottleneck the two are the same;
 * when the store is, worker time is the store's time. Beside two clients of 64 KiB reads on that
 * 0.5 ms store, a continuous scrub at shares 75:25 took 0.40 of the transfers when charged only
 * its CPU (a 64 KiB read costs the foreground more CPU per transfer than a block's checksum costs
 * scrub) and 0.248 charged its worker time ({@code DataNodeQosE2ETest}, counted over the
 * milliseconds in which the foreground had requests queued). A scrub step (64 block reads, about
 * 36 ms there) is charged when it ends, which delays its charge but loses none of it. Usage
 * reports CPU time per volume and task, and worker time per task: the split the shares govern.
 *
  * <h2>Deviations from the published algorithms</h2>
 * <ol>
 *   <li><b>Charging at dispatch</b> (foreground levels): the patent grows a counter "after
 *       processing"; cost is known at submit, so Weir charges when the request is dispatched.
 *       With several workers, this stops them from all picking the same flow.</li>
 *   <li><b>Fixed-point counters</b>: 1/65536 byte per unit weight, with the remainder carried,
 *       so the SFQ bound holds up to 4 counter units (the tests allow exactly that; in practice
 *       it was never needed).</li>
 *   <li><b>Rejoin after throttling</b>: a throttled child rejoins like an idle one; SFQ has no
 *       limits, so it is silent on this.</li>
 *   <li><b>mClock tags per flow, not per request</b>: one tag for the head request rather than tags
 *       stamped at arrival; weight-phase service does not advance it (mClock's adjustment of
 *       R tags). The lag of the earliest tag behind the clock is capped at 1 s by moving all tags
 *       together, which bounds catch-up after an infeasible period and keeps proportionality.
 *       Reservation service is charged to the counter (max, not sum), with the lead capped at
 *       {@code max(1 MiB, cost) / w} (above), where mClock instead reduces the P tags.</li>
 *   <li><b>Reservations vs tenant limits</b>: the reservation phase ignores a tenant's limits (but
 *       charges them); configuration validation requires a tenant's max IOPS to cover the sum of
 *       its volumes' min IOPS. A reservation counts operations, so at large IO sizes it may need
 *       more bytes than the tenant's max bytes/s: such service is charged without building a debt
 *       beyond the request's own cost ({@code Limiter.chargeUnadmitted}), or the tenant's other
 *       volumes would wait, once the reservation stopped, for as long as it had run past the limit.</li>
 *   <li><b>Limit admission</b>: a request may start while any credit remains (one request of
 *       overdraft, repaid before the next); all credit-free limits get a 20 ms tolerance for wake-up
 *       jitter.</li>
 *   <li><b>Rebasing</b>: counters are rebased per level (above); a published SFQ has unbounded
 *       rationals.</li>
 *   <li><b>Root rejoin is observed at decisions</b>: a task is treated as idle only if a
 *       decision saw it without work.</li>
 *   <li><b>Sampled CPU time</b> ({@link io.weir.scheduler.QosExecutor}): the thread CPU clock is
 *       read at most once per millisecond per worker; requests in between are charged their wall
 *       time times the worker's recent CPU/wall ratio, and the request that closes a sample
 *       interval takes the interval's remainder (never below 0), so every measured nanosecond is
 *       charged once, or the estimate when it overshot. {@code cpuSampleInterval(0)} measures
 *       every request.</li>
 *   <li><b>Worker time, not CPU time, at the root</b>: the patent charges a task the CPU cycles
 *       it used; Weir charges CPU time plus the time the worker was blocked (its wall time less
 *       CPU time and run delay, per sample interval), because on a store slower than the CPU the
 *       store's time is what the tasks share and a task's time in it is not CPU (see above). The
 *       two agree when the CPU is the bottleneck.</li>
 *   <li><b>Anticipation</b> (only with anticipation on, above): the weight phase may wait up to
 *       1 ms per dry moment of a deep flow while work is queued (not work-conserving for that
 *       long), and an anticipated node that returns within its 20 ms credit keeps its counter
 *       below its level's virtual time. Between flows that stay deep and return within their
 *       credit, the SFQ bound holds as if they had been backlogged throughout, widened by the
 *       slack (1 MiB per unit of weight) and by what a sibling was served after a wait ended. With anticipation off (the
 *       default of {@code HierarchicalScheduler} and {@code QosExecutor}) none of this applies and
 *       every property above holds as stated.</li>
 *   <li><b>Batched dispatch</b> ({@link io.weir.scheduler.QosExecutor}): a worker may take up to 8
 *       decisions per lock acquisition while no other worker is idle, so the root sees charges
 *       up to 8 requests per worker late.</li>
 *   <li><b>Latency recording</b>: per-node log-linear buckets (1/32 of an octave, 128 ns floor)
 *       on the hot path, turned into HdrHistograms when a snapshot is taken; percentiles are
 *       within about 3%. A volume's samples are buffered and counted 1024 at a time (and before
 *       every snapshot, so no sample is missing from one), because counting each at once stalled
 *       every decision on a cold cache line with many volumes; counted together, in two passes
 *       (first only the loads, then the counts), those misses overlap. A node's counts cover
 *       only the buckets it has used.</li>
 * </ol>
 *
 * <h2>Multi-core (US 10,423,447)</h2>
 * Not built yet. The counters are plain numbers per node, so per-core schedulers can later share
 * a global cost per flow without changing the selection logic.
 */
package io.weir.scheduler;
