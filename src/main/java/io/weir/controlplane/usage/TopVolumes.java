package io.weir.controlplane.usage;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** The volumes that did the most over [from, to), by one measure. */
@Schema(name = "TopVolumes", description = "The busiest volumes over [from, to) by iops, bytes, latency or throttled time.")
record TopVolumes(
        Instant from,
        Instant to,
        @Schema(example = "PT1M") String step,
        @Schema(example = "1m") String resolution,
        @Schema(description = "The measure ranked by.", allowableValues = {"iops", "bytes", "latency", "throttled"}) String by,
        List<Entry> volumes) {

    /** One volume's totals over the range. */
    @Schema(name = "TopVolume")
    record Entry(
            UUID volumeId,
            @Schema(description = "Null if the volume was unknown when reported.") @Nullable UUID tenantId,
            @Schema(description = "Null if the volume no longer exists.") @Nullable String volumeName,
            long readOps,
            long writeOps,
            long readBytes,
            long writeBytes,
            double iops,
            double bytesPerSec,
            @Schema(description = "Ops-weighted mean of the reported 99th percentile latencies, µs; null without ops.") @Nullable Long latencyP99Us,
            double throttledMs) {
    }
}
