package io.weir.controlplane.policy;

import org.jspecify.annotations.Nullable;

import io.weir.controlplane.web.Versioned;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.UUID;

@Schema(name = "Policy", description = "A QoS policy: a named template of weight, reservation, limits, burst and cost model.")
public record PolicyResponse(
        UUID id,
        String name,
        @Nullable String description,
        @Schema(description = "True for the seeded policies (best-effort, standard, premium). Read-only; built-ins are editable "
                + "and deletable like any other policy.", accessMode = Schema.AccessMode.READ_ONLY)
        boolean builtIn,
        int weight,
        @Schema(description = "Reservation; null for none.") @Nullable Long minIops,
        @Schema(description = "IOPS limit; null means unlimited.") @Nullable Long maxIops,
        @Schema(description = "Burst IOPS ceiling; null for no bursting.") @Nullable Long burstIops,
        @Schema(description = "Bytes/s limit; null means unlimited.") @Nullable Long maxBytesPerSec,
        @Schema(description = "Burst bytes/s ceiling; null for no bursting.") @Nullable Long burstBytesPerSec,
        CostModel costModel,
        @Schema(description = "Optimistic-lock version; also sent as the ETag.") long version,
        Instant createdAt,
        Instant updatedAt) implements Versioned {

    static PolicyResponse from(QosPolicy p) {
        return new PolicyResponse(p.getId(), p.getName(), p.getDescription(), p.isBuiltIn(), p.getWeight(),
                p.getMinIops(), p.getMaxIops(), p.getBurstIops(), p.getMaxBytesPerSec(), p.getBurstBytesPerSec(),
                new CostModel(p.getMinChargeBytes()), p.getVersion(), p.getCreatedAt(), p.getUpdatedAt());
    }
}
