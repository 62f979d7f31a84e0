package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
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
 * {@code gaps} may be left out when empty. A report whose figures break the rules below (a
 * sequence below 1, an interval that ends before it starts, a negative count, a volume without an
 * id) is refused by {@link AgentMessages#decode} as {@code malformed}.
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

    public UsageReport {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        if (sequence < 1) {
            throw new IllegalArgumentException("sequence must be at least 1: " + sequence);
        }
        if (to.isBefore(from)) {
            throw new IllegalArgumentException("interval ends before it starts: " + from + " .. " + to);
        }
        volumes = volumes == null ? List.of() : List.copyOf(volumes);
        tasks = tasks == null ? List.of() : List.copyOf(tasks);
        gaps = gaps == null ? List.of() : List.copyOf(gaps);
    }

    /**
     * One volume over the interval. Latencies are from submission to completion (queue wait plus
     * service), in microseconds, over the requests completed in the interval; 0 when none was.
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
            @JsonPropertyDescription("CPU time charged, ns.") long cpuNanos) {

        public VolumeUsage {
            Objects.requireNonNull(volumeId, "volumeId");
            if (readOps < 0 || writeOps < 0 || readBytes < 0 || writeBytes < 0 || throttledNanos < 0 || rejected < 0
                    || cpuNanos < 0 || latencyP50Us < 0 || latencyP99Us < 0 || latencyMaxUs < 0
                    || !(queueDepth >= 0)) {
                throw new IllegalArgumentException("negative usage figure for volume " + volumeId);
            }
        }

        /** Reads and writes completed. */
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
     * @param effectiveShare the task's CPU share at the end of the interval (a dynamic share
     *     follows its utilization signal, so it may differ from the configured one)
     */
    public record TaskUsage(
            @JsonPropertyDescription("The task.") String name,
            @JsonPropertyDescription("Requests completed.") long ops,
            @JsonPropertyDescription("CPU time charged, ns.") long cpuNanos,
            @JsonPropertyDescription("CPU share in force at the end of the interval.") double effectiveShare) {

        public TaskUsage {
            Objects.requireNonNull(name, "name");
            if (ops < 0 || cpuNanos < 0) {
                throw new IllegalArgumentException("negative usage figure for task " + name);
            }
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
        }

        /** How many reports were dropped. */
        public long count() {
            return lastSequence - firstSequence + 1;
        }
    }
}
