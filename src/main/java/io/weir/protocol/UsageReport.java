package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * What one data node's scheduler did over one reporting interval: the {@code usage} message an
 * agent sends to the control plane, which answers {@code usageAck} with the same sequence.
 *
 * <pre>{@code
 * {"type":"usage","protocolVersion":1,"sequence":7,"from":"2026-12-02T05:00:00Z","to":"2026-12-02T05:00:10Z",
 *  "volumes":[{"volumeId":"...","readOps":10,"writeOps":20,...}],"tasks":[...],"gaps":[]}
 * }</pre>
 * {@code sequence}, {@code from} and {@code to} are required; {@code volumes}, {@code tasks} and
 * {@code gaps} may be left out when empty. A report whose figures break the rules below is refused
 * by {@link AgentMessages#decode} as {@code malformed}; the receiver answers it alone (a
 * {@link AgentMessage.UsageAck} that says it was refused) and keeps the connection.
 *
 * <h2>Bounds</h2>
 * Every figure is finite, not negative and within a bound that storage and every query can hold
 * (sums of many reports are then kept without overflow by the receiver): a sequence from 1, an
 * interval of at most {@link #MAX_INTERVAL} that ends no earlier than it starts, counts up to
 * {@link #MAX_COUNT}, bytes up to {@link #MAX_BYTES}, latencies up to {@link #MAX_LATENCY_US},
 * nanoseconds up to {@link #MAX_NANOS}, a queue depth up to {@link #MAX_QUEUE_DEPTH}, a task share
 * up to {@link #MAX_SHARE}; task names of 1 to {@link #MAX_TASK_NAME} characters without control
 * characters ({@link WireText}); at most {@link #MAX_VOLUMES} volumes, {@link #MAX_TASKS} tasks and
 * {@link #MAX_GAPS} gaps; times from {@link #EARLIEST} to {@link #LATEST}. Each bound is far above
 * what a real scheduler reports (10 million IOPS for a whole day is below {@code MAX_COUNT}).
 * Against the receiver's clock, {@link #checkTimely} also asks that {@code to} be at most
 * {@link #MAX_CLOCK_SKEW} ahead.
 *
 * <h2>Delivery</h2>
 * Sequences are per agent and grow by one per report; they are never reused, not even by an agent
 * restarted with the same node token (the agent continues above every number it may have used
 * before, see {@code io.weir.agent.QosAgent}), because the control plane keeps the (node,
 * sequence) pairs it stored and would take a reused number for a resend. The agent keeps every report
 * until it is acknowledged (within a bound of age and count) and sends the unacknowledged ones
 * again after a reconnect, so the control plane may receive a report twice, late or out of order;
 * it counts each (node, sequence) once. When the agent's buffer overflows it drops the oldest
 * reports and says so in {@link #gaps}, which every later report repeats until one of them is
 * acknowledged: a loss is always reported, never hidden.
 *
 * <h2>Counts</h2>
 * Counts cover exactly the requests completed in [{@link #from}, {@link #to}): the agent takes
 * differences of the scheduler's cumulative counters between two snapshots, so consecutive
 * reports neither overlap nor leave anything out.
 *
 * @param sequence this report's number, per agent, from 1
 * @param from start of the interval (inclusive)
 * @param to end of the interval (exclusive)
 * @param volumes per-volume figures, one entry per volume the scheduler knew during the interval
 * @param tasks per-task figures
 * @param gaps reports the agent dropped unacknowledged (buffer overflow), repeated until acknowledged
 */
@JsonClassDescription("Usage of one data node over one reporting interval, sent by its agent; acknowledged with usageAck.")
public record UsageReport(
        @JsonPropertyDescription("Per-agent report number, from 1.") long sequence,
        @JsonPropertyDescription("Start of the interval (inclusive).") Instant from,
        @JsonPropertyDescription("End of the interval (exclusive).") Instant to,
        @JsonPropertyDescription("Per-volume figures.") List<VolumeUsage> volumes,
        @JsonPropertyDescription("Per-task figures.") List<TaskUsage> tasks,
        @JsonPropertyDescription("Reports dropped unacknowledged by the agent's buffer.") List<Gap> gaps)
        implements AgentMessage {

    /** Longest interval of one report: a day (an hour is the longest reporting interval). */
    public static final Duration MAX_INTERVAL = Duration.ofDays(1);

    /** How far ahead of the receiver's clock a report's {@code to} may be. */
    public static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(5);

    /** Earliest time a report may name. */
    public static final Instant EARLIEST = Instant.parse("2000-01-01T00:00:00Z");

    /** Latest time a report may name (the receiver's clock bounds it much more, {@link #checkTimely}). */
    public static final Instant LATEST = Instant.parse("2999-12-31T23:59:59Z");

    /** Largest count (ops, rejected submissions) in one report: 2^40, about 1.1 x 10^12. */
    public static final long MAX_COUNT = 1L << 40;

    /** Largest byte count in one report: 2^56 (64 PiB). */
    public static final long MAX_BYTES = 1L << 56;

    /** Longest latency: 2^36 µs, about 19 hours. */
    public static final long MAX_LATENCY_US = 1L << 36;

    /** Largest time in nanoseconds (throttled, CPU) in one report: 2^56 ns, about 2.3 years. */
    public static final long MAX_NANOS = 1L << 56;

    /** Largest mean queue depth: 2^32 requests. */
    public static final double MAX_QUEUE_DEPTH = 0x1p32;

    /** Largest effective task share (a configured share is at most 10,000). */
    public static final double MAX_SHARE = 1_000_000;

    /** Longest task name, in characters (what the control plane stores). */
    public static final int MAX_TASK_NAME = 63;

    /** Most volumes in one report. */
    public static final int MAX_VOLUMES = 16_384;

    /** Most tasks in one report. */
    public static final int MAX_TASKS = 256;

    /** Most gaps in one report (an agent keeps at most 64). */
    public static final int MAX_GAPS = 256;

    public UsageReport {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        if (sequence < 1) {
            throw new IllegalArgumentException("sequence must be at least 1: " + sequence);
        }
        checkTime("from", from);
        checkTime("to", to);
        if (to.isBefore(from)) {
            throw new IllegalArgumentException("interval ends before it starts: " + from + " .. " + to);
        }
        if (Duration.between(from, to).compareTo(MAX_INTERVAL) > 0) {
            throw new IllegalArgumentException("interval " + from + " .. " + to + " is longer than " + MAX_INTERVAL);
        }
        volumes = volumes == null ? List.of() : List.copyOf(volumes);
        tasks = tasks == null ? List.of() : List.copyOf(tasks);
        gaps = gaps == null ? List.of() : List.copyOf(gaps);
        checkSize("volumes", volumes.size(), MAX_VOLUMES);
        checkSize("tasks", tasks.size(), MAX_TASKS);
        checkSize("gaps", gaps.size(), MAX_GAPS);
    }

    /**
     * Checks the report against the receiver's clock: {@code to} at most {@link #MAX_CLOCK_SKEW}
     * after {@code now}. (How far back a report may reach is the receiver's retention: an older
     * one is acknowledged without being stored.)
     *
     * @throws IllegalArgumentException if it is too far ahead
     */
    public void checkTimely(Instant now) {
        if (to.isAfter(now.plus(MAX_CLOCK_SKEW))) {
            throw new IllegalArgumentException("to " + to + " is more than " + MAX_CLOCK_SKEW + " ahead of the receiver's clock ("
                    + now + ")");
        }
    }

    private static void checkTime(String field, Instant t) {
        if (t.isBefore(EARLIEST) || t.isAfter(LATEST)) {
            throw new IllegalArgumentException(field + " " + t + " is not from " + EARLIEST + " to " + LATEST);
        }
    }

    private static void checkSize(String field, int size, int max) {
        if (size > max) {
            throw new IllegalArgumentException(field + " has " + size + " entries; at most " + max + " are accepted");
        }
    }

    private static void check(String what, long value, long max) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(what + " " + value + " is not from 0 to " + max);
        }
    }

    private static void check(String what, double value, double max) {
        if (!(value >= 0 && value <= max)) {
            throw new IllegalArgumentException(what + " " + value + " is not a number from 0 to " + max);
        }
    }

    /**
     * One volume over the interval. Latencies are from submission to completion (queue wait plus
     * service), in microseconds, over the client requests completed in the interval (not those
     * counted in {@code replicaOps}); 0 when none was.
     *
     * @param volumeId the volume
     * @param readOps reads completed
     * @param writeOps writes completed
     * @param readBytes bytes read by those reads
     * @param writeBytes bytes written by those writes
     * @param latencyP50Us median latency
     * @param latencyP99Us 99th percentile latency
     * @param latencyMaxUs longest latency
     * @param queueDepth mean number of requests queued or in flight over the interval
     * @param throttledNanos time the volume had work but was held back by its own limits
     * @param rejected submissions refused because the volume's queue was full
     * @param cpuNanos CPU time charged to the volume's requests
     * @param queuedP50Us median time a request waited in the scheduler's queue before its service
     *     began, the queued part of {@code latencyP50Us}: when it is a large part, the node is
     *     saturated and weights decide who waits (0 from agents that do not report it)
     * @param queuedP99Us 99th percentile of the same, the queued part of {@code latencyP99Us}
     * @param replicaOps requests this node applied as a copy of the replicated volume for its
     *     primary (the clients' writes, trims, write-zeroes and flushes it forwarded, its own
     *     flushes, resync steps): counted here and not in {@code readOps} or {@code writeOps}, nor in
     *     the latencies, since the primary counted each client request once (0 from agents that do
     *     not report it). {@code queueDepth}, {@code throttledNanos}, {@code rejected} and
     *     {@code cpuNanos} include them: they are what the volume costs this node.
     * @param replicaBytes bytes of those requests
     */
    public record VolumeUsage(
            @JsonPropertyDescription("The volume.") UUID volumeId,
            @JsonPropertyDescription("Reads completed.") long readOps,
            @JsonPropertyDescription("Writes completed.") long writeOps,
            @JsonPropertyDescription("Bytes read.") long readBytes,
            @JsonPropertyDescription("Bytes written.") long writeBytes,
            @JsonPropertyDescription("Median latency, µs.") long latencyP50Us,
            @JsonPropertyDescription("99th percentile latency, µs.") long latencyP99Us,
            @JsonPropertyDescription("Longest latency, µs.") long latencyMaxUs,
            @JsonPropertyDescription("Mean requests queued or in flight.") double queueDepth,
            @JsonPropertyDescription("Time held back by limits, ns.") long throttledNanos,
            @JsonPropertyDescription("Submissions refused (queue full).") long rejected,
            @JsonPropertyDescription("CPU time charged, ns.") long cpuNanos,
            @JsonPropertyDescription("Median time queued at the scheduler before service, µs: the queued part of latencyP50Us.")
            @JsonSetter(nulls = Nulls.AS_EMPTY) long queuedP50Us,
            @JsonPropertyDescription("99th percentile time queued at the scheduler before service, µs: the queued part of latencyP99Us.")
            @JsonSetter(nulls = Nulls.AS_EMPTY) long queuedP99Us,
            @JsonPropertyDescription("Requests applied as a copy of the replicated volume for its primary; not in readOps or writeOps, which count each client request once, on the primary.")
            @JsonSetter(nulls = Nulls.AS_EMPTY) long replicaOps,
            @JsonPropertyDescription("Bytes of the requests applied as a copy for the primary.")
            @JsonSetter(nulls = Nulls.AS_EMPTY) long replicaBytes) {

        /** Figures without the queued times and replica figures (all 0). */
        public VolumeUsage(UUID volumeId, long readOps, long writeOps, long readBytes, long writeBytes,
                long latencyP50Us, long latencyP99Us, long latencyMaxUs, double queueDepth, long throttledNanos,
                long rejected, long cpuNanos) {
            this(volumeId, readOps, writeOps, readBytes, writeBytes, latencyP50Us, latencyP99Us, latencyMaxUs,
                    queueDepth, throttledNanos, rejected, cpuNanos, 0, 0, 0, 0);
        }

        /** Figures without the replica figures (both 0). */
        public VolumeUsage(UUID volumeId, long readOps, long writeOps, long readBytes, long writeBytes,
                long latencyP50Us, long latencyP99Us, long latencyMaxUs, double queueDepth, long throttledNanos,
                long rejected, long cpuNanos, long queuedP50Us, long queuedP99Us) {
            this(volumeId, readOps, writeOps, readBytes, writeBytes, latencyP50Us, latencyP99Us, latencyMaxUs,
                    queueDepth, throttledNanos, rejected, cpuNanos, queuedP50Us, queuedP99Us, 0, 0);
        }

        public VolumeUsage {
            Objects.requireNonNull(volumeId, "volumeId");
            String of = " of volume " + volumeId;
            check("readOps" + of, readOps, MAX_COUNT);
            check("writeOps" + of, writeOps, MAX_COUNT);
            check("readBytes" + of, readBytes, MAX_BYTES);
            check("writeBytes" + of, writeBytes, MAX_BYTES);
            check("latencyP50Us" + of, latencyP50Us, MAX_LATENCY_US);
            check("latencyP99Us" + of, latencyP99Us, MAX_LATENCY_US);
            check("latencyMaxUs" + of, latencyMaxUs, MAX_LATENCY_US);
            check("queueDepth" + of, queueDepth, MAX_QUEUE_DEPTH);
            check("throttledNanos" + of, throttledNanos, MAX_NANOS);
            check("rejected" + of, rejected, MAX_COUNT);
            check("cpuNanos" + of, cpuNanos, MAX_NANOS);
            check("queuedP50Us" + of, queuedP50Us, MAX_LATENCY_US);
            check("queuedP99Us" + of, queuedP99Us, MAX_LATENCY_US);
            check("replicaOps" + of, replicaOps, MAX_COUNT);
            check("replicaBytes" + of, replicaBytes, MAX_BYTES);
        }

        /** Client reads and writes completed (not {@code replicaOps}). */
        public long ops() {
            return readOps + writeOps;
        }
    }

    /**
     * One scheduler task (foreground, gc, flush, ...) over the interval.
     *
     * @param name the task
     * @param ops requests the task completed
     * @param cpuNanos CPU time charged to the task
     * @param workerNanos worker time charged to the task: its CPU time plus the time its requests
     *     held a worker blocked (in a store slower than the CPU, say), which is what the tasks'
     *     shares divide; equal to {@code cpuNanos} when the CPU is the bottleneck (0 from agents
     *     that do not report it)
     * @param effectiveShare the task's share at the end of the interval (a dynamic share
     *     follows its utilization signal, so it may differ from the configured one)
     */
    public record TaskUsage(
            @JsonPropertyDescription("The task.") String name,
            @JsonPropertyDescription("Requests completed.") long ops,
            @JsonPropertyDescription("CPU time charged, ns.") long cpuNanos,
            @JsonPropertyDescription("Worker time charged, ns: CPU time plus time blocked holding a worker; what task shares divide.")
            @JsonSetter(nulls = Nulls.AS_EMPTY) long workerNanos,
            @JsonPropertyDescription("Share in force at the end of the interval.") double effectiveShare) {

        public TaskUsage {
            Objects.requireNonNull(name, "name");
            WireText.check("task name", name, MAX_TASK_NAME);
            if (name.isEmpty()) {
                throw new IllegalArgumentException("task name is empty");
            }
            check("ops of task " + name, ops, MAX_COUNT);
            check("cpuNanos of task " + name, cpuNanos, MAX_NANOS);
            check("workerNanos of task " + name, workerNanos, MAX_NANOS);
            check("effectiveShare of task " + name, effectiveShare, MAX_SHARE);
        }
    }

    /**
     * A run of consecutive reports the agent dropped without acknowledgement.
     *
     * @param firstSequence first dropped sequence
     * @param lastSequence last dropped sequence (inclusive)
     * @param from start of the first dropped report's interval
     * @param to end of the last dropped report's interval
     */
    public record Gap(
            @JsonPropertyDescription("First dropped sequence.") long firstSequence,
            @JsonPropertyDescription("Last dropped sequence (inclusive).") long lastSequence,
            @JsonPropertyDescription("Start of the first dropped interval.") Instant from,
            @JsonPropertyDescription("End of the last dropped interval.") Instant to) {

        public Gap {
            Objects.requireNonNull(from, "from");
            Objects.requireNonNull(to, "to");
            if (firstSequence < 1 || lastSequence < firstSequence) {
                throw new IllegalArgumentException("bad gap " + firstSequence + ".." + lastSequence);
            }
            checkTime("gap from", from);
            checkTime("gap to", to);
        }

        /** How many reports were dropped. */
        public long count() {
            return lastSequence - firstSequence + 1;
        }
    }
}
