package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.UUID;

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
 */
@JsonClassDescription("A volume placed on the node: one flow of the foreground task and one NBD export named after it.")
public record VolumeConfig(
        @JsonPropertyDescription("Volume id.") UUID id,
        @JsonPropertyDescription("The tenant it belongs to.") UUID tenantId,
        @JsonPropertyDescription("Volume name, unique within its tenant; also the NBD export name.") String name,
        @JsonPropertyDescription("Export size in bytes.") long sizeBytes,
        @JsonPropertyDescription("The effective QoS policy: the volume's policy combined with its overrides, as in the REST volume.") EffectivePolicy effectivePolicy) {
}
