package io.weir.controlplane.tenant;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.ResourceName;
import io.weir.controlplane.web.Weight;
import io.weir.controlplane.node.NodeLabels;
import io.weir.protocol.CapacityQos;
import io.weir.protocol.QosSettings;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.Size;
import java.util.Map;
import java.util.TreeMap;

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
        @Positive Long maxBytesPerSec,
        @Schema(description = "The labels a data node must carry for this tenant's tenant-admins to place volumes on it "
                + "(all of them must match); absent or empty: no node. Admins place anywhere. Keys and values as node "
                + "labels. Admins only, like every tenant field.", example = "{\"pool\":\"acme\"}")
        @NodeLabels Map<String, String> nodeSelector,
        @Schema(description = "IOPS limit per GiB of the sum of the tenant's volumes: "
                + "min(maxIops, max(maxIopsFloor, round(maxIopsPerGiB x GiB))); null: maxIops is absolute. Reservations "
                + "on a node must fit under maxIopsFloor (the least it can be).")
        @Positive Double maxIopsPerGiB,
        @Schema(description = "Bytes/s limit per GiB of the sum of the tenant's volumes, bounded by maxBytesPerSecFloor and "
                + "maxBytesPerSec; null: maxBytesPerSec is absolute.")
        @Positive Double maxBytesPerSecPerGiB,
        @Schema(description = "Floor of maxIopsPerGiB; needs it, at most maxIops. Left out: 1.")
        @Positive Long maxIopsFloor,
        @Schema(description = "Floor of maxBytesPerSecPerGiB; needs it, at most maxBytesPerSec. Left out: 1.")
        @Positive Long maxBytesPerSecFloor,
        @Schema(description = "What the per-GiB terms scale with: allocated (the sum of the volumes' sizes) or used (the sum "
                + "of their used bytes in force). Left out: allocated.")
        CapacityQos.CapacityBasis capacityBasis) {

    static TenantRequest from(Tenant t) {
        CapacityQos terms = t.terms();
        return new TenantRequest(t.getName(), t.getDisplayName(), t.getWeight(), terms.maxIops().absolute(),
                terms.maxBytesPerSec().absolute(), new TreeMap<>(t.getNodeSelector()), terms.maxIops().perGiB(),
                terms.maxBytesPerSec().perGiB(), terms.maxIops().floor(), terms.maxBytesPerSec().floor(),
                terms.capacityBasis());
    }

    /**
     * The tenant's QoS fields (no reservation, no burst). Their rules on one flow are the field
     * constraints above; the rule across flows ({@link QosSettings#checkReservations}) is checked
     * against the tenant's volumes when the tenant changes.
     */
    QosSettings qosSettings() {
        return new QosSettings(weightOrDefault(), null, maxIops, null, maxBytesPerSec, null);
    }

    /** The tenant's terms, absolute and per GiB, for the rules of {@link CapacityQos#violations()}. */
    CapacityQos terms() {
        return new CapacityQos(weightOrDefault(), CapacityQos.Term.NONE, new CapacityQos.Term(maxIops, maxIopsPerGiB,
                maxIopsFloor), CapacityQos.Term.NONE, new CapacityQos.Term(maxBytesPerSec, maxBytesPerSecPerGiB,
                maxBytesPerSecFloor), CapacityQos.Term.NONE, capacityBasis);
    }

    int weightOrDefault() {
        return weight == null ? Weight.DEFAULT : weight;
    }
}
