package io.weir.protocol;

import java.util.UUID;

/**
 * A tenant as a data node enforces it: one level of the foreground flow hierarchy.
 *
 * @param id tenant id
 * @param name tenant name
 * @param weight proportional share among tenants, 1-10000
 * @param maxIops aggregate IOPS limit over the tenant's volumes, null for unlimited
 * @param maxBytesPerSec aggregate bytes/s limit, null for unlimited
 */
public record TenantConfig(UUID id, String name, int weight, Long maxIops, Long maxBytesPerSec) {
}
