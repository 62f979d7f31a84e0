package io.weir.controlplane.tenant;

import org.jspecify.annotations.Nullable;

import io.weir.controlplane.web.Versioned;
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
        @Schema(description = "Optimistic-lock version; also sent as the ETag.") long version,
        Instant createdAt,
        Instant updatedAt) implements Versioned {

    static TenantResponse from(Tenant t) {
        return new TenantResponse(t.getId(), t.getName(), t.getDisplayName(), t.getWeight(), t.getMaxIops(),
                t.getMaxBytesPerSec(), new TreeMap<>(t.getNodeSelector()), t.getVersion(), t.getCreatedAt(),
                t.getUpdatedAt());
    }
}
