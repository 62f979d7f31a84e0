package io.weir.protocol;

import org.jspecify.annotations.Nullable;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.Objects;
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
@JsonClassDescription("A tenant as a data node enforces it: one level of the foreground flow hierarchy.")
public record TenantConfig(
        @JsonPropertyDescription("Tenant id.") UUID id,
        @JsonPropertyDescription("Tenant name.") String name,
        @JsonPropertyDescription("Proportional share among tenants, 1-10000.") int weight,
        @JsonPropertyDescription("Aggregate IOPS limit over the tenant's volumes; null for unlimited.") @Nullable Long maxIops,
        @JsonPropertyDescription("Aggregate bytes/s limit; null for unlimited.") @Nullable Long maxBytesPerSec) {

    public TenantConfig {
        Objects.requireNonNull(id, "a tenant has no id");
        Objects.requireNonNull(name, () -> "tenant " + id + " has no name");
    }

    /** The tenant's QoS fields (it has no reservation and no burst), for the rules of {@link QosSettings}. */
    public QosSettings qosSettings() {
        return new QosSettings(weight, null, maxIops, null, maxBytesPerSec, null);
    }
}
