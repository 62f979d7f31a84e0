package io.weir.controlplane.tenant;

import org.jspecify.annotations.Nullable;

import io.weir.controlplane.web.Versioned;
import io.weir.protocol.CapacityQos;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;

@Schema(name = "Tenant", description = "A tenant: a folder of volumes sharing a weight and aggregate limits.")
public record TenantResponse(
        UUID id,
        String name,
        @Nullable String displayName,
        int weight,
        @Schema(description = "Aggregate IOPS limit; null means unlimited.") @Nullable Long maxIops,
        @Schema(description = "Aggregate bytes/s limit; null means unlimited.") @Nullable Long maxBytesPerSec,
        @Schema(description = "The labels a node must carry for this tenant's tenant-admins to place volumes on it; "
                + "empty: no node.") SortedMap<String, String> nodeSelector,
        @Schema(description = "IOPS limit per GiB of the sum of the tenant's volumes; null: maxIops is absolute.") @Nullable Double maxIopsPerGiB,
        @Schema(description = "Bytes/s limit per GiB of that sum; null: maxBytesPerSec is absolute.") @Nullable Double maxBytesPerSecPerGiB,
        @Schema(description = "Floor of maxIopsPerGiB; null: 1.") @Nullable Long maxIopsFloor,
        @Schema(description = "Floor of maxBytesPerSecPerGiB; null: 1.") @Nullable Long maxBytesPerSecFloor,
        @Schema(description = "What the per-GiB terms scale with: allocated or used; null: allocated.")
        CapacityQos.@Nullable CapacityBasis capacityBasis,
        @Schema(description = "The limits the data nodes enforce for the tenant now, after scaling, and the term that "
                + "produced each.", accessMode = Schema.AccessMode.READ_ONLY) EffectiveLimits effectiveLimits,
        @Schema(description = "Optimistic-lock version; the ETag is it and a digest of the representation (\"3.9f2c41d0\"), and If-Match compares the version.") long version,
        Instant createdAt,
        Instant updatedAt) implements Versioned {

    static TenantResponse from(Tenant t, TenantCapacity.Capacity capacity) {
        CapacityQos terms = t.terms();
        CapacityQos.InForce inForce = terms.resolve(capacity.of(terms.basis()));
        EffectiveLimits limits = new EffectiveLimits(inForce.settings().maxIops(), inForce.sources().get(1),
                inForce.settings().maxBytesPerSec(), inForce.sources().get(3), terms.scales() ? terms.basis() : null,
                terms.scales() ? inForce.capacityBytes() : null);
        return new TenantResponse(t.getId(), t.getName(), t.getDisplayName(), t.getWeight(), terms.maxIops().absolute(),
                terms.maxBytesPerSec().absolute(), new TreeMap<>(t.getNodeSelector()), terms.maxIops().perGiB(),
                terms.maxBytesPerSec().perGiB(), terms.maxIops().floor(), terms.maxBytesPerSec().floor(),
                terms.capacityBasis(), limits, t.getVersion(), t.getCreatedAt(), t.getUpdatedAt());
    }

    /**
     * A tenant's limits in force.
     *
     * @param maxIops the IOPS limit, null for unlimited
     * @param maxIopsSource the term that produced it
     * @param maxBytesPerSec the bytes/s limit, null for unlimited
     * @param maxBytesPerSecSource the term that produced it
     * @param capacityBasis the capacity the per-GiB terms scaled with; null when nothing scales
     * @param capacityBytes that capacity (over the tenant's volumes); null when nothing scales
     */
    @Schema(name = "TenantEffectiveLimits", description = "A tenant's limits as the data nodes enforce them now.")
    public record EffectiveLimits(
            @Schema(description = "IOPS limit in force; null for unlimited.") @Nullable Long maxIops,
            @Schema(description = "Which term produced maxIops: absolute, perGiB, floor or cap.") CapacityQos.@Nullable Source maxIopsSource,
            @Schema(description = "Bytes/s limit in force; null for unlimited.") @Nullable Long maxBytesPerSec,
            @Schema(description = "Which term produced maxBytesPerSec.") CapacityQos.@Nullable Source maxBytesPerSecSource,
            @Schema(description = "What the per-GiB terms scaled with; null when nothing scales.") CapacityQos.@Nullable CapacityBasis capacityBasis,
            @Schema(description = "That capacity in bytes, summed over the tenant's volumes; null when nothing scales.") @Nullable Long capacityBytes) {
    }
}
