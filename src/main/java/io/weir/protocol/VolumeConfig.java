package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * A volume placed on a data node: one flow of the foreground task, and one NBD export named
 * after the volume.
 *
 * @param id volume id
 * @param tenantId the tenant it belongs to
 * @param name volume name, unique within its tenant
 * @param sizeBytes export size
 * @param effectivePolicy the effective QoS policy: the policy combined with the volume's overrides,
 *     named as in the REST volume
 * @param replication its copies, primary and epoch when it has more than one copy; null (left out
 *     of the frame) for a volume of one copy, which the node serves alone
 */
@JsonClassDescription("A volume placed on the node: one flow of the foreground task and one NBD export named after it.")
public record VolumeConfig(
        @JsonPropertyDescription("Volume id.") UUID id,
        @JsonPropertyDescription("The tenant it belongs to.") UUID tenantId,
        @JsonPropertyDescription("Volume name, unique within its tenant; also the NBD export name.") String name,
        @JsonPropertyDescription("Export size in bytes.") long sizeBytes,
        @JsonPropertyDescription("The effective QoS policy: the volume's policy combined with its overrides, as in the REST volume.") EffectivePolicy effectivePolicy,
        @JsonPropertyDescription("Its copies, primary and epoch when it has more than one copy; absent for a volume of one copy.")
        @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable ReplicationConfig replication) {

    public VolumeConfig {
        Objects.requireNonNull(id, "a volume has no id");
        Objects.requireNonNull(tenantId, () -> "volume " + id + " has no tenantId");
        Objects.requireNonNull(name, () -> "volume " + id + " has no name");
        Objects.requireNonNull(effectivePolicy, () -> "volume " + id + " has no effectivePolicy");
    }

    /** A volume of one copy. */
    public VolumeConfig(UUID id, UUID tenantId, String name, long sizeBytes, EffectivePolicy effectivePolicy) {
        this(id, tenantId, name, sizeBytes, effectivePolicy, null);
    }

    /** Whether {@code nodeId} serves this volume's export: it has one copy, or {@code nodeId} is its primary. */
    public boolean servedBy(UUID nodeId) {
        return replication == null || replication.primaryNodeId().equals(nodeId);
    }
}
