package io.weir.controlplane.volume;

import io.weir.controlplane.web.Versioned;
import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.protocol.EffectivePolicy;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

@Schema(name = "Volume", description = "A volume: one flow of its tenant, with a policy, overrides and placement.")
public record VolumeResponse(
        UUID id,
        UUID tenantId,
        String name,
        @Schema(description = "Size in bytes, a multiple of 4096.") long sizeBytes,
        UUID policyId,
        @Schema(description = "Per-volume overrides; a null member inherits from the policy.") VolumeOverrides overrides,
        @Schema(description = "Ids of the data nodes that serve the volume, sorted.") List<UUID> nodeIds,
        @Schema(description = "What the data nodes enforce: each override if set, else the policy's value; "
                + "costModel is the policy's.", accessMode = Schema.AccessMode.READ_ONLY)
        EffectivePolicy effectivePolicy,
        @Schema(description = "Optimistic-lock version; also sent as the ETag.") long version,
        Instant createdAt,
        Instant updatedAt,
        @Schema(description = "Whether every node that serves the volume has applied its latest desired config, and so "
                + "enforces this effectivePolicy. Null when the volume is on no node, and in the answer to a write "
                + "(read the volume again to see it).", accessMode = Schema.AccessMode.READ_ONLY)
        @Nullable Boolean policyApplied,
        @Schema(description = "Set only for a volume placed on several data nodes, which an earlier release allowed: "
                + "the nodes do not replicate, so each serves its own, unrelated copy. Says how to keep one. Such a "
                + "placement is kept as it is until a write names one node; no write may add a node to it.",
                accessMode = Schema.AccessMode.READ_ONLY)
        @Nullable String placementWarning) implements Versioned {

    static VolumeResponse from(Volume v, EffectivePolicy effective) {
        return from(v, effective, null);
    }

    static VolumeResponse from(Volume v, EffectivePolicy effective, Boolean policyApplied) {
        return new VolumeResponse(v.getId(), v.getTenantId(), v.getName(), v.getSizeBytes(), v.getPolicyId(),
                v.getOverrides(), v.getNodeIds(), effective, v.getVersion(), v.getCreatedAt(), v.getUpdatedAt(),
                policyApplied, placementWarning(v.getNodeIds().size()));
    }

    private static @Nullable String placementWarning(int nodes) {
        return nodes < 2 ? null : "placed on " + nodes + " data nodes, which do not replicate: each serves its own, "
                + "unrelated copy of the volume; keep the copy you need and set nodeIds to its node alone";
    }
}
