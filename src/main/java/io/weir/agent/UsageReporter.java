package io.weir.agent;

import io.weir.protocol.UsageReport;
import io.weir.protocol.UsageReport.Gap;
import io.weir.protocol.UsageReport.TaskUsage;
import io.weir.protocol.UsageReport.VolumeUsage;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerSnapshot;
import io.weir.scheduler.Stats;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Turns a scheduler's statistics into numbered {@link UsageReport}s, one per reporting interval,
 * and keeps each report until the control plane acknowledges it.
 *
 * <h2>How a report is made</h2>
 * <pre>
 *  tick() every sample interval (1 s) ──► snapshot(false): add each volume's queued + in-flight
 *        │                                   requests to its queue-depth sum
 *        └── once the reporting interval (10 s) has passed since the last report:
 *            snapshot(true) ──► differences of the cumulative counters against the previous
 *            report's snapshot ──► UsageReport(sequence n, [from, to), volumes, tasks, gaps)
 *            ──► kept in the unacknowledged buffer ──► handed to the sink (the agent's channel)
 * </pre>
 * Counts are differences of cumulative counters taken under the scheduler lock, never counters
 * reset after a read, so an IO completing while a report is being made lands in exactly one
 * report: the one whose closing snapshot first includes it. The first report starts at the
 * snapshot taken when the reporter is built. A request counts from the moment its worker reports
 * the completion to the scheduler, which it does right after completing the request's future, on
 * its next pass through the scheduler lock; a snapshot taken in between counts it in the next
 * report. Over consecutive reports every completed request is counted exactly once.
 *
 * <h2>Delivery</h2>
 * Each report gets the next sequence ({@link Builder#sequences}; by default 1, 2, 3, ...). The agent sends it, and the control plane
 * answers {@code usageAck}; the agent then calls {@link #acknowledge(long)}. After a reconnect
 * the agent sends {@link #unacknowledged()} again, oldest first; the control plane deduplicates
 * by (node, sequence). The buffer is bounded by age ({@link Builder#maxAge}, default 1 h) and by
 * count ({@link Builder#maxReports}). When a bound is exceeded the oldest report is dropped and a
 * {@link Gap} is recorded; every later report carries all gaps not yet acknowledged, so a loss
 * reaches the control plane as soon as any report gets through.
 *
 * <h2>Thread safety</h2>
 * All methods may be called from any thread; state is guarded by this object's monitor. The sink
 * is called outside the monitor, on the thread that called {@link #tick()}.
 *
 * <h2>Example</h2>
 * <pre>{@code
 * UsageReporter usage = UsageReporter.builder(executor)
 *         .interval(Duration.ofSeconds(10))
 *         .sink(report -> channel.send(report))
 *         .build();
 * usage.start(scheduledExecutor);               // tick() once per sample interval
 * // on usageAck:      usage.acknowledge(seq);
 * // after reconnect:  usage.unacknowledged().forEach(channel::send);
 * }</pre>
 *
 * <h2>Implementation notes</h2>
 * <h3>Latency (deviation)</h3>
 * The scheduler keeps separate histograms of queue wait and of service time, not of their sum,
 * so the reported p50 and p99 are the sums of the wait and service percentiles, and the maximum
 * is the sum of the two maxima (an upper bound of the true maximum). The sum of percentiles
 * equals the percentile of the sum when long waits and long services go together, and is an
 * approximation otherwise. The wait percentiles alone are reported too ({@code queuedP50Us},
 * {@code queuedP99Us}): the part of the latency spent queued at the scheduler, which shows
 * whether the node is saturated and weights decide who waits.
 * <h3>Queue depth</h3>
 * The mean queue depth is the mean of the samples taken by {@link #tick()} during the interval
 * (queued plus in-flight requests), including the one taken by the report's own snapshot.
 * <h3>Volumes that come and go</h3>
 * A volume new since the previous report counts from zero (the scheduler created its counters
 * then). A volume removed between two reports is missing from the second snapshot, so what it
 * completed after the previous report is not reported. The scheduler's counters of a live volume
 * never decrease (a property test of the scheduler holds it to that, throttled time and refusals
 * included), so a counter smaller than before means the volume was recreated with the same id: its
 * current value is taken as the delta.
 * <h3>A clock that jumps</h3>
 * A report covers at most {@link UsageReport#MAX_INTERVAL} and names no time before
 * {@link UsageReport#EARLIEST}. After the wall clock jumps forward further than that (a VM
 * resumed after days, NTP stepping a clock that was far behind) the next report covers the last
 * {@code MAX_INTERVAL} up to now, and carries everything counted since the report before; while
 * the clock reads before {@code EARLIEST} (a node that booted at 1970, until NTP sets it) no
 * report is made, the counters go on, and the first report after carries them. Each is logged
 * once, at WARNING.
 * <h3>Gaps</h3>
 * Acknowledgements may arrive out of order, so the dropped sequences need not be contiguous. At
 * most {@value #MAX_PENDING_GAPS} gap ranges are kept; beyond that the two oldest are merged,
 * which may name acknowledged sequences as dropped (the control plane already has those, and
 * counts them once).
 */
public final class UsageReporter {

    private static final System.Logger LOG = System.getLogger(UsageReporter.class.getName());

    /** Default reporting interval. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);

    /** Default queue-depth sampling interval (also how often {@link #start} ticks). */
    public static final Duration DEFAULT_SAMPLE_INTERVAL = Duration.ofSeconds(1);

    /** Default age bound of the unacknowledged buffer. */
    public static final Duration DEFAULT_MAX_AGE = Duration.ofHours(1);

    /** Default count bound of the unacknowledged buffer: an hour of one-second reports. */
    public static final int DEFAULT_MAX_REPORTS = 3600;

    /** Most gap ranges kept for the next reports; beyond it the oldest two are merged. */
    static final int MAX_PENDING_GAPS = 64;

    /**
     * Where report numbers come from: each call answers a number greater than every number
     * answered before, also by an earlier reporter of the same agent (see {@link QosAgent}, which
     * persists them). Called under the reporter's lock.
     */
    @FunctionalInterface
    public interface Sequences {
        /** The next report's number, at least 1. */
        long next();
    }

    /**
     * Where a reporter reads the scheduler's statistics: {@link QosExecutor#snapshot(boolean)} and
     * {@link QosExecutor#queueDepths()}.
     */
    @FunctionalInterface
    public interface SnapshotSource {
        /** A snapshot; {@code resetLatencies} restarts the latency histograms after it. */
        SchedulerSnapshot snapshot(boolean resetLatencies);

        /**
         * Each volume's queued plus in-flight requests, by id, sampled every sample interval; by
         * default taken from a whole {@link #snapshot}, which a source may answer more cheaply.
         */
        default Map<String, Long> queueDepths() {
            return depthsOf(snapshot(false));
        }
    }

    private final SnapshotSource source;
    private final Clock clock;
    private final Duration maxAge;
    private final int maxReports;
    private final Consumer<UsageReport> sink;
    private final Duration sampleInterval;
    private final Sequences sequences;

    // Guarded by this.
    private Duration interval;
    private Map<String, Stats> previousVolumes;
    private Map<String, Stats> previousTasks;
    private Instant intervalStart;
    /** Whether a jump of the clock, or a clock before 2000, was logged ("A clock that jumps"). */
    private boolean warnedJump;
    private boolean warnedEarly;
    private final Map<String, Long> queueDepthSums = new HashMap<>();
    private int queueSamples;
    private final TreeMap<Long, UsageReport> unacknowledged = new TreeMap<>();
    private final List<Gap> pendingGaps = new ArrayList<>();
    private long droppedReports;
    private long skippedVolumeIds;

    private UsageReporter(Builder b) {
        this.source = b.source;
        this.clock = b.clock;
        this.maxAge = b.maxAge;
        this.maxReports = b.maxReports;
        this.sink = b.sink;
        this.sampleInterval = b.sampleInterval;
        this.sequences = b.sequences != null ? b.sequences : new Sequences() {
            private long next = 1;

            @Override
            public long next() {
                return next++;
            }
        };
        this.interval = b.interval;
        SchedulerSnapshot baseline = source.snapshot(true);
        this.previousVolumes = baseline.volumes();
        this.previousTasks = baseline.tasks();
        this.intervalStart = clock.instant();
    }

    /** A builder reading {@code executor}'s statistics. */
    public static Builder builder(QosExecutor executor) {
        Objects.requireNonNull(executor, "executor");
        return new Builder(new SnapshotSource() {
            @Override
            public SchedulerSnapshot snapshot(boolean resetLatencies) {
                return executor.snapshot(resetLatencies);
            }

            @Override
            public Map<String, Long> queueDepths() {
                return executor.queueDepths();
            }
        });
    }

    /** A builder reading statistics from {@code source}. */
    public static Builder builder(SnapshotSource source) {
        return new Builder(Objects.requireNonNull(source, "source"));
    }

    /**
     * Calls {@link #tick()} every sample interval on {@code scheduler} until the returned future
     * is cancelled. An exception from the sink is not allowed to stop the ticking.
     */
    public ScheduledFuture<?> start(ScheduledExecutorService scheduler) {
        long period = sampleInterval.toNanos();
        return scheduler.scheduleAtFixedRate(() -> {
            try {
                tick();
                lastFailure = null;
            } catch (RuntimeException e) {
                // A report the sink failed to take is buffered first; it goes out again after a reconnect.
                String failure = e.toString();
                if (!failure.equals(lastFailure)) {
                    lastFailure = failure;
                    LOG.log(System.Logger.Level.WARNING, "usage: a report could not be made or sent: {0}; tried again every"
                            + " {1} ms (logged once while it fails this way)", failure, sampleInterval.toMillis());
                }
            }
        }, period, period, TimeUnit.NANOSECONDS);
    }

    /** The last failure of a tick started by {@link #start}, logged once; null after a tick that succeeded. */
    private volatile String lastFailure;

    /**
     * Samples the queue depths and, once the reporting interval has passed since the last report,
     * makes the next report, hands it to the sink and answers it.
     */
    public Optional<UsageReport> tick() {
        UsageReport report;
        synchronized (this) {
            Instant now = clock.instant();
            if (now.isBefore(intervalStart.plus(interval)) || !reportable(now)) {
                sampleQueues(source.queueDepths());
                return Optional.empty();
            }
            report = makeReport(source.snapshot(true), now);
        }
        sink.accept(report);
        return Optional.of(report);
    }

    /**
     * Makes the next report now, whether or not the interval has passed, and hands it to the sink.
     *
     * @throws IllegalStateException if the clock reads a time no report may name (before 2000)
     */
    public UsageReport reportNow() {
        UsageReport report;
        synchronized (this) {
            Instant now = clock.instant();
            if (!reportable(now)) {
                throw new IllegalStateException("the clock reads " + now + ", before any time a usage report may name ("
                        + UsageReport.EARLIEST + ")");
            }
            report = makeReport(source.snapshot(true), now);
        }
        sink.accept(report);
        return report;
    }

    private static Map<String, Long> depthsOf(SchedulerSnapshot s) {
        Map<String, Long> depths = new HashMap<>();
        s.volumes().values().forEach(v -> depths.put(v.id(), v.queueDepth() + v.inFlight()));
        return depths;
    }

    /** Whether a report may name {@code now}; logs once when it may not (requires: holding this). */
    private boolean reportable(Instant now) {
        if (!now.isBefore(UsageReport.EARLIEST)) {
            return true;
        }
        if (!warnedEarly) {
            warnedEarly = true;
            LOG.log(System.Logger.Level.WARNING, "usage: the clock reads {0}, before any time a report may name; reports wait"
                    + " for it to be set, and lose nothing meanwhile (logged once)", now);
        }
        return false;
    }

    // Requires: holding this.
    private void sampleQueues(Map<String, Long> depths) {
        depths.forEach((id, depth) -> queueDepthSums.merge(id, depth, Long::sum));
        queueSamples++;
    }

    // Requires: holding this.
    private UsageReport makeReport(SchedulerSnapshot s, Instant now) {
        sampleQueues(depthsOf(s));
        List<VolumeUsage> volumes = new ArrayList<>(s.volumes().size());
        for (Stats cur : s.volumes().values()) {
            UUID id = parseId(cur.id());
            if (id == null) {
                skippedVolumeIds++;
                continue;
            }
            Stats prev = previousVolumes.get(cur.id());
            Stats d = delta(cur, prev);
            double qd = queueDepthSums.getOrDefault(cur.id(), 0L) / (double) queueSamples;
            volumes.add(new VolumeUsage(id, d.readOps(), d.writeOps(), d.readBytes(), d.writeBytes(),
                    micros(cur.waitP50Nanos() + cur.serviceP50Nanos()), micros(cur.waitP99Nanos() + cur.serviceP99Nanos()),
                    micros(cur.waitMaxNanos() + cur.serviceMaxNanos()), qd, d.throttledNanos(), d.rejected(),
                    d.cpuNanos(), micros(cur.waitP50Nanos()), micros(cur.waitP99Nanos()), d.replicaOps(), d.replicaBytes()));
        }
        List<TaskUsage> tasks = new ArrayList<>(s.tasks().size());
        for (Stats cur : s.tasks().values()) {
            Stats d = delta(cur, previousTasks.get(cur.id()));
            tasks.add(new TaskUsage(cur.id(), d.ops(), d.cpuNanos(), d.workerNanos(), cur.share()));
        }
        Instant to = now.isBefore(intervalStart) ? intervalStart : now;
        Instant from = intervalStart;
        if (from.isBefore(to.minus(UsageReport.MAX_INTERVAL))) {
            from = to.minus(UsageReport.MAX_INTERVAL); // the clock jumped (or was before 2000): see "A clock that jumps"
            if (!warnedJump) {
                warnedJump = true;
                LOG.log(System.Logger.Level.WARNING, "usage: the clock moved from {0} to {1}; the report covers {2} up to"
                        + " now, with everything counted since the report before (logged once)", intervalStart, to, UsageReport.MAX_INTERVAL);
            }
        }
        evict(to, 1); // first, so that this report already carries the gaps it causes
        UsageReport report = new UsageReport(sequences.next(), from, to, volumes, tasks, pendingGaps);
        unacknowledged.put(report.sequence(), report);
        previousVolumes = s.volumes();
        previousTasks = s.tasks();
        intervalStart = to;
        queueDepthSums.clear();
        queueSamples = 0;
        return report;
    }

    // Requires: holding this.
    private void evict(Instant now, int incoming) {
        Instant oldest = now.minus(maxAge);
        while (!unacknowledged.isEmpty()) {
            UsageReport first = unacknowledged.firstEntry().getValue();
            if (unacknowledged.size() + incoming <= maxReports && !first.to().isBefore(oldest)) {
                return;
            }
            unacknowledged.pollFirstEntry();
            droppedReports++;
            addGap(first);
        }
    }

    // Requires: holding this.
    private void addGap(UsageReport dropped) {
        int last = pendingGaps.size() - 1;
        if (last >= 0 && pendingGaps.get(last).lastSequence() == dropped.sequence() - 1) {
            Gap g = pendingGaps.get(last);
            pendingGaps.set(last, new Gap(g.firstSequence(), dropped.sequence(), g.from(), dropped.to()));
        } else {
            pendingGaps.add(new Gap(dropped.sequence(), dropped.sequence(), dropped.from(), dropped.to()));
        }
        if (pendingGaps.size() > MAX_PENDING_GAPS) {
            Gap a = pendingGaps.remove(0);
            Gap b = pendingGaps.remove(0);
            pendingGaps.add(0, new Gap(a.firstSequence(), b.lastSequence(), a.from(), b.to()));
        }
    }

    /**
     * Forgets report {@code sequence}: the control plane has stored it. Gaps it carried are
     * forgotten too, unless they have grown since. Unknown or repeated sequences are ignored.
     *
     * @return whether the report was still unacknowledged
     */
    public synchronized boolean acknowledge(long sequence) {
        UsageReport r = unacknowledged.remove(sequence);
        if (r == null) {
            return false;
        }
        pendingGaps.removeAll(r.gaps());
        return true;
    }

    /**
     * Forgets report {@code sequence}, which the control plane refused for good and stored nothing
     * of: its usage is lost, so it becomes a gap, and the gaps it carried stay pending for the next
     * report. Unknown or repeated sequences are ignored.
     *
     * @return whether the report was still unacknowledged
     */
    public synchronized boolean refused(long sequence) {
        UsageReport r = unacknowledged.remove(sequence);
        if (r == null) {
            return false;
        }
        droppedReports++;
        addGap(r);
        pendingGaps.sort(java.util.Comparator.comparingLong(Gap::firstSequence)); // it may be older than a gap kept
        return true;
    }

    /** The reports not yet acknowledged, oldest first: what to send again after a reconnect. */
    public synchronized List<UsageReport> unacknowledged() {
        evict(clock.instant(), 0);
        return List.copyOf(unacknowledged.values());
    }

    /** The gaps the next report will carry. */
    public synchronized List<Gap> pendingGaps() {
        return List.copyOf(pendingGaps);
    }

    /** Reports dropped unacknowledged since the reporter was built. */
    public synchronized long droppedReports() {
        return droppedReports;
    }

    /** Volume entries left out because the scheduler's volume id was not a UUID. */
    public synchronized long skippedVolumeIds() {
        return skippedVolumeIds;
    }

    /** The reporting interval in force. */
    public synchronized Duration interval() {
        return interval;
    }

    /** Changes the reporting interval (it is part of the pushed config); takes effect at the next tick. */
    public synchronized void setInterval(Duration interval) {
        this.interval = positive(interval, "interval");
    }

    private static Stats delta(Stats cur, Stats prev) {
        if (prev == null || cur.readOps() < prev.readOps() || cur.writeOps() < prev.writeOps()
                || cur.readBytes() < prev.readBytes() || cur.writeBytes() < prev.writeBytes()
                || cur.rejected() < prev.rejected() || cur.throttledNanos() < prev.throttledNanos()
                || cur.cpuNanos() < prev.cpuNanos() || cur.workerNanos() < prev.workerNanos()
                || cur.replicaOps() < prev.replicaOps() || cur.replicaBytes() < prev.replicaBytes()) {
            return cur;
        }
        return new Stats(cur.id(), cur.readOps() - prev.readOps(), cur.writeOps() - prev.writeOps(),
                cur.readBytes() - prev.readBytes(), cur.writeBytes() - prev.writeBytes(), cur.queueDepth(),
                cur.inFlight(), cur.rejected() - prev.rejected(), 0, 0, 0, 0,
                cur.throttledNanos() - prev.throttledNanos(), cur.cpuNanos() - prev.cpuNanos(), cur.share(), 0, 0,
                cur.workerNanos() - prev.workerNanos(), cur.replicaOps() - prev.replicaOps(),
                cur.replicaBytes() - prev.replicaBytes());
    }

    private static long micros(long nanos) {
        return (nanos + 500) / 1000;
    }

    private static UUID parseId(String id) {
        try {
            return UUID.fromString(id);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static Duration positive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive: " + d);
        }
        return d;
    }

    /** Configures a {@link UsageReporter}; every setting has a default. */
    public static final class Builder {
        private final SnapshotSource source;
        private Clock clock = Clock.systemUTC();
        private Duration interval = DEFAULT_INTERVAL;
        private Duration sampleInterval = DEFAULT_SAMPLE_INTERVAL;
        private Duration maxAge = DEFAULT_MAX_AGE;
        private int maxReports = DEFAULT_MAX_REPORTS;
        private Consumer<UsageReport> sink = r -> { };
        private Sequences sequences;

        private Builder(SnapshotSource source) {
            this.source = source;
        }

        /** The clock that stamps intervals and ages reports (default: system UTC). */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Reporting interval (default 10 s). */
        public Builder interval(Duration interval) {
            this.interval = positive(interval, "interval");
            return this;
        }

        /** How often {@link #start} ticks and queue depth is sampled (default 1 s). */
        public Builder sampleInterval(Duration sampleInterval) {
            this.sampleInterval = positive(sampleInterval, "sampleInterval");
            return this;
        }

        /** Oldest an unacknowledged report may get before it is dropped as a gap (default 1 h). */
        public Builder maxAge(Duration maxAge) {
            this.maxAge = positive(maxAge, "maxAge");
            return this;
        }

        /** Most unacknowledged reports kept (default {@value UsageReporter#DEFAULT_MAX_REPORTS}), at least 1. */
        public Builder maxReports(int maxReports) {
            if (maxReports < 1) {
                throw new IllegalArgumentException("maxReports must be at least 1: " + maxReports);
            }
            this.maxReports = maxReports;
            return this;
        }

        /** Receives each new report (the agent sends it); called outside the reporter's lock. */
        public Builder sink(Consumer<UsageReport> sink) {
            this.sink = Objects.requireNonNull(sink, "sink");
            return this;
        }

        /** Where report numbers come from (default: 1, 2, 3, ... per reporter). */
        public Builder sequences(Sequences sequences) {
            this.sequences = Objects.requireNonNull(sequences, "sequences");
            return this;
        }

        /** Takes the baseline snapshot; the first report's interval starts now. */
        public UsageReporter build() {
            return new UsageReporter(this);
        }
    }
}
