/**
 * Weir's hierarchical QoS scheduler: the part of a data node that decides, request by request,
 * whose work runs next on the CPU. Pure Java; it depends on the JDK and HdrHistogram only, and of
 * the wire protocol on {@link io.weir.protocol.QosSettings} alone: the JDK-only owner of the QoS
 * fields' rules, which the control plane checks too, so that what it accepts the scheduler
 * accepts. The scheduler never sees Jackson.
 *
 * <h2>Architecture</h2>
 * <pre>
 *                         root: tasks by CPU time / share   (first currency, charged at completion)
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
 *       volume's node itself), so the per-request path does no id lookup.</li>
 *   <li>{@link io.weir.scheduler.QosExecutor} runs work on N threads under that core, measures
 *       each item's CPU time ({@link io.weir.scheduler.CpuClock}) and charges it.</li>
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
 * are SolidFire peak rates. {@code 0} means unlimited / none. A task's <em>share</em> is its CPU
 * weight, optionally driven by a utilization signal (low below T1, high above T2, linear or
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
 * <h2>Fairness bound</h2>
 * For two siblings {@code i, j} ready throughout an interval, with {@code W} the cost served and
 * {@code Lmax} the largest cost of one request, {@code |W_i/w_i − W_j/w_j| ≤ Lmax_i/w_i +
 * Lmax_j/w_j} (SFQ, Goyal, Vin and Cheng, SIGCOMM 1996, Theorem 1). It holds at the tenant level
 * and among the volumes of one tenant, and, for a child that rejoins, from the moment it rejoins:
 * after 10 s of idleness a volume receives at most {@code Lmax_i/w_i + Lmax_j/w_j} more normalised
 * service than a continuously backlogged sibling, and is not starved. After a weight change the
 * bound holds again once each of the two has been charged once under its new weight. At the root,
 * the same argument bounds CPU time per share, with the CPU time of requests in flight on other
 * workers added to {@code Lmax} (charges arrive at completion). The tests check the bound
 * exactly, in integers.
 *
 * <h2>Limits and bursting</h2>
 * Each limit is a GCRA constraint (virtual-scheduling form of a token bucket). With a burst rate,
 * the sustained constraint carries credit that accrues while the child runs below its max, capped
 * at 60 s × (burst − max) (Element OS burstTime), and a peak constraint bounds the rate while the
 * credit is spent. Over any window of length {@code d}: served ≤ {@code max·d + credit cap + one
 * request} and ≤ {@code burst·d + burst·2 ms + one request}. Throttled time is reported per node.
 *
 * <h2>Reservations, and what happens when they are infeasible</h2>
 * A volume whose reservation tag is due is served before any weight-based choice, earliest tag
 * first; each such dispatch advances its tag by {@code 1/minIops}. The service is also charged to
 * its counter, so a volume gets {@code max(reservation, fair share)}, not the sum. When the
 * reservations add up to more than the node can serve, earliest-tag-first serves every backlogged
 * reserved volume <b>in proportion to its min IOPS</b>, and weight-only volumes get nothing until the
 * reservations are met again.
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
 *       together, which bounds catch-up after an infeasible period and keeps proportionality.</li>
 *   <li><b>Reservations vs tenant limits</b>: the reservation phase ignores a tenant's limits (but
 *       charges them); configuration validation requires a tenant's max IOPS to cover the sum of
 *       its volumes' min IOPS.</li>
 *   <li><b>Limit admission</b>: a request may start while any credit remains (one request of
 *       overdraft, repaid before the next); all credit-free limits get a 2 ms tolerance for wake-up
 *       jitter.</li>
 *   <li><b>Root rejoin is observed at decisions</b>: a task is treated as idle only if a
 *       decision saw it without work.</li>
 *   <li><b>Sampled CPU time</b> ({@link io.weir.scheduler.QosExecutor}): the thread CPU clock is
 *       read at most once per millisecond per worker; requests in between are charged their wall
 *       time times the worker's recent CPU/wall ratio, and the request that closes a sample
 *       interval takes the interval's remainder, so every measured nanosecond is charged exactly
 *       once. {@code cpuSampleInterval(0)} measures every request.</li>
 *   <li><b>Batched dispatch</b> ({@link io.weir.scheduler.QosExecutor}): a worker may take up to 8
 *       decisions per lock acquisition while no other worker is idle, so the root sees CPU charges
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
