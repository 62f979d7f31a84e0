package io.weir.protocol;

import java.util.UUID;

/**
 * A volume placed on a data node: one flow of the foreground task, and one NBD export named
 * after the volume.
 *
 * @param id volume id
 * @param tenantId the tenant it belongs to
 * @param name volume name, unique within its tenant
 * @param sizeBytes export size
 * @param policy the effective QoS policy
 */
public record VolumeConfig(UUID id, UUID tenantId, String name, long sizeBytes, EffectivePolicy policy) {
}
