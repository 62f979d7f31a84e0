package io.weir.controlplane.tenant;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.ResourceName;
import io.weir.controlplane.web.Weight;
import io.weir.protocol.QosSettings;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.Size;

/**
 * The writable fields of a tenant: the body of create and replace, and what a merge patch is
 * applied to.
 */
@Schema(name = "TenantRequest", description = "A tenant's writable fields.")
public record TenantRequest(
        @Schema(description = "Unique name, 1-63 characters of [a-z0-9-].", example = "acme", requiredMode = Schema.RequiredMode.REQUIRED)
        @ResourceName String name,
        @Schema(description = "Free-form name for people.", example = "ACME Corp.")
        @Size(max = 255) String displayName,
        @Schema(description = "Proportional share among tenants, 1-10000.", defaultValue = "100")
        @Weight Integer weight,
        @Schema(description = "Aggregate IOPS limit over the tenant's volumes; null means unlimited.")
        @Positive Long maxIops,
        @Schema(description = "Aggregate bytes/s limit over the tenant's volumes; null means unlimited.")
        @Positive Long maxBytesPerSec) {

    static TenantRequest from(Tenant t) {
        return new TenantRequest(t.getName(), t.getDisplayName(), t.getWeight(), t.getMaxIops(), t.getMaxBytesPerSec());
    }

    /**
     * The tenant's QoS fields (no reservation, no burst). Their rules on one flow are the field
     * constraints above; the rule across flows ({@link QosSettings#checkReservations}) is checked
     * against the tenant's volumes when the tenant changes.
     */
    QosSettings qosSettings() {
        return new QosSettings(weightOrDefault(), null, maxIops, null, maxBytesPerSec, null);
    }

    int weightOrDefault() {
        return weight == null ? Weight.DEFAULT : weight;
    }
}
