package io.weir.controlplane.usage;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * A usage series of one volume or one tenant (summed over its volumes).
 *
 * @param volumeId the volume (volume series), else null
 * @param tenantId the tenant (tenant series), or the volume's tenant
 * @param from first point's start
 * @param to last point's end
 * @param step width of each point, ISO-8601
 * @param resolution the stored level the points were read from: raw, 1m or 1h
 * @param points one per step, without holes
 * @param gaps reports dropped by the agents of the nodes involved, overlapping the range
 */
@Schema(name = "UsageSeries", description = "Usage of a volume or a tenant: one point per step over [from, to).")
record UsageSeries(
        @Schema(description = "The volume, for a volume series; null for a tenant series or a total.") @Nullable UUID volumeId,
        @Schema(description = "The tenant (of the volume, for a volume series); for a total, the caller's tenant, null "
                + "for a caller bound to no tenant.") @Nullable UUID tenantId,
        @Schema(description = "Start of the first point (the requested from, rounded down to the step).") Instant from,
        @Schema(description = "End of the last point (the requested to, rounded up to the step).") Instant to,
        @Schema(description = "Width of each point, ISO-8601.", example = "PT1M") String step,
        @Schema(description = "Stored level read: raw, 1m or 1h.", example = "1m") String resolution,
        List<UsagePoint> points,
        @Schema(description = "Reports the agents of the nodes involved dropped unacknowledged, overlapping the range: usage there is incomplete.")
        List<UsageGap> gaps) {

    /**
     * Usage over [ts, ts + step).
     *
     * @param latencyP50Us ops-weighted mean of the reported medians; null without ops
     * @param latencyP99Us ops-weighted mean of the reported 99th percentiles; null without ops
     * @param latencyMaxUs largest latency reported; null without ops
     * @param queueDepth time-weighted mean of requests queued or in flight
     * @param queuedP50Us ops-weighted mean of the reported medians of the time queued at the
     *     scheduler (the queued part of {@code latencyP50Us}); null without ops
     * @param queuedP99Us the same of the 99th percentiles
     * @param replicaOps requests the copies of a replicated volume applied for its primary, not in
     *     {@code readOps} or {@code writeOps} (the primary counts each client request once)
     * @param replicaBytes bytes of those requests
     */
    @Schema(name = "UsagePoint", description = "Usage over [ts, ts + step); ops and bytes are counts within it.")
    record UsagePoint(
            @Schema(description = "Start of the point.") Instant ts,
            @Schema(description = "Reads completed.") long readOps,
            @Schema(description = "Writes completed.") long writeOps,
            @Schema(description = "Bytes read.") long readBytes,
            @Schema(description = "Bytes written.") long writeBytes,
            @Schema(description = "(readOps + writeOps) per second of the step.") double iops,
            @Schema(description = "(readBytes + writeBytes) per second of the step.") double bytesPerSec,
            @Schema(description = "Ops-weighted mean of the reported median latencies, µs; null without ops.") @Nullable Long latencyP50Us,
            @Schema(description = "Ops-weighted mean of the reported 99th percentile latencies, µs; null without ops.") @Nullable Long latencyP99Us,
            @Schema(description = "Largest latency reported, µs; null without ops.") @Nullable Long latencyMaxUs,
            @Schema(description = "Time-weighted mean of requests queued or in flight.") double queueDepth,
            @Schema(description = "Time held back by QoS limits, ms (summed over volumes for a tenant).") double throttledMs,
            @Schema(description = "Submissions refused because a queue was full.") long rejected,
            @Schema(description = "CPU time charged to the IO, ms.") double cpuMs,
            @Schema(description = "Ops-weighted mean of the reported median times queued at the scheduler before service, µs: the queued part of latencyP50Us, large when the node is saturated and weights decide who waits; null without ops.") @Nullable Long queuedP50Us,
            @Schema(description = "Ops-weighted mean of the reported 99th percentile times queued at the scheduler, µs: the queued part of latencyP99Us; null without ops.") @Nullable Long queuedP99Us,
            @Schema(description = "Requests the copies of a replicated volume applied for its primary (its clients' writes, trims, write-zeroes and flushes, the primary's own flushes, resync steps). Not in readOps or writeOps, which count each client request once, on the primary; cpuMs, queueDepth, throttledMs and rejected include the copies' work.") long replicaOps,
            @Schema(description = "Bytes of the requests the copies applied for the primary.") long replicaBytes) {
    }

    /** Reports one node's agent dropped unacknowledged. */
    @Schema(name = "UsageGap", description = "Reports a node's agent dropped unacknowledged: usage in [from, to) from that node is missing.")
    record UsageGap(UUID nodeId, long firstSequence, long lastSequence, Instant from, Instant to) {
    }
}
