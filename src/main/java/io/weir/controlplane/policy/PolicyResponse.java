package io.weir.controlplane.policy;

import org.jspecify.annotations.Nullable;

import io.weir.controlplane.web.Versioned;
import io.weir.protocol.CapacityQos;
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
        PolicyCostModel costModel,
        @Schema(description = "Reservation per GiB of capacity; null: minIops is absolute.") @Nullable Double minIopsPerGiB,
        @Schema(description = "IOPS limit per GiB of capacity; null: maxIops is absolute.") @Nullable Double maxIopsPerGiB,
        @Schema(description = "Burst IOPS per GiB of capacity; null: burstIops is absolute.") @Nullable Double burstIopsPerGiB,
        @Schema(description = "Bytes/s limit per GiB of capacity; null: maxBytesPerSec is absolute.") @Nullable Double maxBytesPerSecPerGiB,
        @Schema(description = "Floor of minIopsPerGiB; null: 1.") @Nullable Long minIopsFloor,
        @Schema(description = "Floor of maxIopsPerGiB; null: 1.") @Nullable Long maxIopsFloor,
        @Schema(description = "Floor of burstIopsPerGiB; null: 1.") @Nullable Long burstIopsFloor,
        @Schema(description = "Floor of maxBytesPerSecPerGiB; null: 1.") @Nullable Long maxBytesPerSecFloor,
        @Schema(description = "The capacity the per-GiB terms scale with: allocated or used; null: allocated.")
        CapacityQos.@Nullable CapacityBasis capacityBasis,
        @Schema(description = "Optimistic-lock version; also sent as the ETag.") long version,
        Instant createdAt,
        Instant updatedAt) implements Versioned {

    static PolicyResponse from(QosPolicy p) {
        CapacityQos t = p.terms();
        return new PolicyResponse(p.getId(), p.getName(), p.getDescription(), p.isBuiltIn(), p.getWeight(),
                t.minIops().absolute(), t.maxIops().absolute(), t.burstIops().absolute(), t.maxBytesPerSec().absolute(),
                t.burstBytesPerSec().absolute(),
                new PolicyCostModel(p.getMinChargeBytes()), t.minIops().perGiB(), t.maxIops().perGiB(), t.burstIops().perGiB(),
                t.maxBytesPerSec().perGiB(), t.minIops().floor(), t.maxIops().floor(), t.burstIops().floor(),
                t.maxBytesPerSec().floor(), t.capacityBasis(), p.getVersion(), p.getCreatedAt(), p.getUpdatedAt());
    }
}
