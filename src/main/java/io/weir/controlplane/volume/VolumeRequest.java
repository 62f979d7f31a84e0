package io.weir.controlplane.volume;

import io.swagger.v3.oas.annotations.media.ArraySchema;
import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.ResourceName;
import jakarta.validation.Valid;
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
        @Schema(description = "Size in bytes: positive and a multiple of 4096 (NBD clients expect block-aligned exports). "
                + "It may grow on update but never shrink.", example = "10737418240",
                requiredMode = Schema.RequiredMode.REQUIRED)
        @NotNull @Positive @BlockAligned Long sizeBytes,
        @Schema(description = "The QoS policy; left out, the built-in 'standard' policy. Must name an existing policy.")
        UUID policyId,
        @Schema(description = "Per-volume overrides of the policy; left out, or a null member, inherits from the policy.")
        @Valid VolumeOverrides overrides,
        @ArraySchema(arraySchema = @Schema(description = "Ids of the data nodes that serve the volume, without duplicates; "
                + "left out, the volume is not placed anywhere."), maxItems = VolumeRequest.MAX_NODES, uniqueItems = true)
        @Size(max = VolumeRequest.MAX_NODES) @UniqueElements List<@NotNull UUID> nodeIds) {

    /** Most nodes one volume may be placed on; far above any replication factor. */
    public static final int MAX_NODES = 64;

    static VolumeRequest from(Volume v) {
        return new VolumeRequest(v.getName(), v.getSizeBytes(), v.getPolicyId(), v.getOverrides(), v.getNodeIds());
    }

    VolumeOverrides overridesOrNone() {
        return overrides == null ? VolumeOverrides.NONE : overrides;
    }

    List<UUID> nodeIdsOrNone() {
        return nodeIds == null ? List.of() : nodeIds;
    }
}
