package io.weir.controlplane.volume;

import io.swagger.v3.oas.annotations.media.ArraySchema;
import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.ResourceName;
import jakarta.validation.Valid;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.ReplicationConfig;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.Size;
import java.util.List;
import java.util.UUID;
import org.hibernate.validator.constraints.UniqueElements;

/**
 * The writable fields of a volume: the body of create and replace, and what a merge patch is
 * applied to. The tenant is fixed at creation (by the path) and cannot change.
 */
@Schema(name = "VolumeRequest", description = "A volume's writable fields.")
public record VolumeRequest(
        @Schema(description = "Name, unique within the tenant: 1-63 characters of [a-z0-9-]. It is also the NBD export name.",
                example = "db-01", requiredMode = Schema.RequiredMode.REQUIRED)
        @ResourceName String name,
        @Schema(description = "Size in bytes: positive, a multiple of 4096 (NBD clients expect block-aligned exports) and "
                + "at most 2^62, the largest export a data node serves. It may grow on update but never shrink.",
                example = "10737418240", maximum = "4611686018427387904", requiredMode = Schema.RequiredMode.REQUIRED)
        @NotNull @Positive @Max(AgentMessage.Export.MAX_SIZE_BYTES) @BlockAligned Long sizeBytes,
        @Schema(description = "The QoS policy; left out, the built-in 'standard' policy. Must name an existing policy.")
        UUID policyId,
        @Schema(description = "Per-volume overrides of the policy; left out, or a null member, inherits from the policy.")
        @Valid VolumeOverrides overrides,
        @ArraySchema(arraySchema = @Schema(description = "Ids of the distinct data nodes that hold the volume's copies, "
                + "one copy each (at most " + ReplicationConfig.MAX_COPIES + "); the first is the primary of a new "
                + "placement. Left out: with replicas, the control plane chooses the nodes; without, the volume is not "
                + "placed anywhere. An update keeps the primary: it may add copies (they start outOfSync and are "
                + "copied in full) or remove others, but removing the primary of a replicated volume is refused "
                + "with 409."), maxItems = VolumeRequest.MAX_NODES, uniqueItems = true)
        @Size(max = VolumeRequest.MAX_NODES) @UniqueElements List<@NotNull UUID> nodeIds,
        @Schema(description = "How many copies the volume keeps, on as many distinct nodes: 1 to "
                + ReplicationConfig.MAX_COPIES + ". With nodeIds it must equal their number; left out, it is their "
                + "number. Without nodeIds the control plane places the copies on the nodes available to the tenant "
                + "(those carrying every label of its node selector) that hold the fewest volumes, keeping the "
                + "volume's current nodes on an update; 409 when too few are available.",
                minimum = "1", maximum = "" + ReplicationConfig.MAX_COPIES, example = "2")
        @Min(1) @Max(ReplicationConfig.MAX_COPIES) Integer replicas) {

    /**
     * Most nodes the request may name: a placement of several nodes from an earlier release, which
     * an update may keep (or reduce), can hold more than {@link ReplicationConfig#MAX_COPIES}.
     */
    public static final int MAX_NODES = 64;

    /** The volume as a request, for a merge patch; replicas left out, so that it follows nodeIds. */
    static VolumeRequest from(Volume v) {
        return new VolumeRequest(v.getName(), v.getSizeBytes(), v.getPolicyId(), v.getOverrides(), v.getNodeIds(), null);
    }

    /** This request with {@code nodeIds} left out (an update that asks for replicas alone). */
    VolumeRequest withoutNodeIds() {
        return new VolumeRequest(name, sizeBytes, policyId, overrides, null, replicas);
    }

    VolumeOverrides overridesOrNone() {
        return overrides == null ? VolumeOverrides.NONE : overrides;
    }

    List<UUID> nodeIdsOrNone() {
        return nodeIds == null ? List.of() : nodeIds;
    }
}
