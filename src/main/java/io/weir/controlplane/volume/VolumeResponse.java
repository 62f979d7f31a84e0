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
        @Schema(description = "What the data nodes enforce: the absolute numbers after scaling, each term (absolute "
                + "number, per-GiB rate, floor, capacity basis) the override if set, else the policy's; sources names the "
                + "term that produced each number; costModel is the policy's.", accessMode = Schema.AccessMode.READ_ONLY)
        EffectivePolicy effectivePolicy,
        @Schema(description = "Optimistic-lock version; the ETag is it and a digest of the representation (\"3.9f2c41d0\"), and If-Match compares the version.") long version,
        Instant createdAt,
        Instant updatedAt,
        @Schema(description = "Whether every node that serves the volume has applied its latest desired config, and so "
                + "enforces this effectivePolicy. Null when the volume is on no node, and in the answer to a write "
                + "(read the volume again to see it).", accessMode = Schema.AccessMode.READ_ONLY)
        @Nullable Boolean policyApplied,
        @Schema(description = "Set only for a volume placed on several data nodes by an earlier release, which did "
                + "not replicate: each of those nodes serves its own, unrelated copy. Says how to keep one. Such a "
                + "placement is kept as it is until a write names one node; no write may add a node to it or make it "
                + "replicated.", accessMode = Schema.AccessMode.READ_ONLY)
        @Nullable String placementWarning,
        @Schema(description = "Bytes allocated in the volume's file as its data node last reported them; null before "
                + "the first report. Per-GiB terms with capacityBasis used scale with it once it "
                + "moves past min(1 GiB, 5% of sizeBytes) from the figure in force (effectivePolicy.capacityBytes).",
                accessMode = Schema.AccessMode.READ_ONLY)
        @Nullable Long usedBytes,
        @Schema(description = "How many copies the volume keeps, 1 to 3, one per node of nodeIds (a placement from an "
                + "earlier release, see placementWarning, has 1 and several nodes).", accessMode = Schema.AccessMode.READ_ONLY)
        int replicas,
        @Schema(description = "The node that serves the NBD export and forwards writes to the copies in sync; it "
                + "changes when the control plane promotes a copy. Null when the volume is on no node, or is a "
                + "placement from an earlier release.", accessMode = Schema.AccessMode.READ_ONLY)
        @Nullable UUID primaryNodeId,
        @Schema(description = "The volume's epoch, from 1, raised by each promotion of a copy to primary.",
                accessMode = Schema.AccessMode.READ_ONLY)
        long epoch,
        @Schema(description = "Each copy and its state, the primary's first, then by node id.",
                accessMode = Schema.AccessMode.READ_ONLY)
        List<VolumeCopy> copies,
        @Schema(description = "True when the volume keeps several copies and fewer of them are in sync: writes "
                + "continue on the copies left in sync, and a lost primary can be replaced only by a copy in sync.",
                accessMode = Schema.AccessMode.READ_ONLY)
        boolean degraded,
        @Schema(description = "host:port where a client reaches the primary's NBD server (again after a promotion): "
                + "the address its node was registered with, else the listen address its data node last reported; "
                + "null when the volume has no primary or neither is known.", accessMode = Schema.AccessMode.READ_ONLY)
        @Nullable String primaryAddress) implements Versioned {

    /**
     * The response for {@code v}.
     *
     * @param copies its copies, primary first ({@link VolumeCopies#of})
     * @param primaryAddress where clients reach its primary ({@code NodeService#clientAddresses}), or null
     */
    static VolumeResponse from(Volume v, EffectivePolicy effective, Boolean policyApplied, List<VolumeCopy> copies,
            String primaryAddress) {
        boolean legacy = v.isLegacyPlacement();
        UUID primary = legacy ? null : v.getPrimaryNodeId();
        long inSync = copies.stream().filter(VolumeCopy::inSync).count();
        return new VolumeResponse(v.getId(), v.getTenantId(), v.getName(), v.getSizeBytes(), v.getPolicyId(),
                v.getOverrides(), v.getNodeIds(), effective, v.getVersion(), v.getCreatedAt(), v.getUpdatedAt(),
                policyApplied, legacy ? placementWarning(v.getNodeIds().size()) : null, v.getUsedBytes(), v.getReplicas(),
                primary, v.getEpoch(), List.copyOf(copies), v.isReplicated() && inSync < v.getReplicas(),
                primary == null ? null : primaryAddress);
    }

    /** This response with {@code policyApplied} set. */
    VolumeResponse withPolicyApplied(@Nullable Boolean applied) {
        return new VolumeResponse(id, tenantId, name, sizeBytes, policyId, overrides, nodeIds, effectivePolicy, version,
                createdAt, updatedAt, applied, placementWarning, usedBytes, replicas, primaryNodeId, epoch, copies, degraded,
                primaryAddress);
    }

    private static String placementWarning(int nodes) {
        return "placed on " + nodes + " data nodes by an earlier release, which did not replicate: each serves its own, "
                + "unrelated copy of the volume; keep the copy you need and set nodeIds to its node alone (replicas can "
                + "then be added)";
    }
}
