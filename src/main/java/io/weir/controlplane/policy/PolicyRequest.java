package io.weir.controlplane.policy;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.ResourceName;
import io.weir.controlplane.web.Weight;
import io.weir.protocol.CapacityQos;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.Size;

/**
 * The writable fields of a QoS policy: the body of create and replace, and what a merge patch is
 * applied to. {@code builtIn} is read-only and therefore not part of it.
 */
@ConsistentLimits
@Schema(name = "PolicyRequest", description = """
        A QoS policy's writable fields. A limit of null means unlimited. When set, \
        minIops <= maxIops < burstIops and maxBytesPerSec < burstBytesPerSec; a burst needs its maximum. \
        Per-GiB terms scale a number with the volume's capacity: X = min(X, max(XFloor, round(XPerGiB x GiB))), \
        and the result must obey the same rules at every capacity.""")
public record PolicyRequest(
        @Schema(description = "Unique name, 1-63 characters of [a-z0-9-].", example = "gold", requiredMode = Schema.RequiredMode.REQUIRED)
        @ResourceName String name,
        @Schema(description = "Free-form text for people.", example = "Databases of the payments team.")
        @Size(max = 1024) String description,
        @Schema(description = "Proportional share among the volumes of a tenant, 1-10000.", defaultValue = "100")
        @Weight Integer weight,
        @Schema(description = "Reservation (mClock minimum): IOPS served ahead of weight-based choice; null for none.")
        @Positive Long minIops,
        @Schema(description = "IOPS limit; null means unlimited.")
        @Positive Long maxIops,
        @Schema(description = "IOPS that banked burst credit may reach; greater than maxIops, and requires it. Null for no bursting.")
        @Positive Long burstIops,
        @Schema(description = "Throughput limit in bytes/s; null means unlimited.")
        @Positive Long maxBytesPerSec,
        @Schema(description = "Bytes/s that banked burst credit may reach; greater than maxBytesPerSec, and requires it. Null for no bursting.")
        @Positive Long burstBytesPerSec,
        @Schema(description = "IO cost model; left out, minChargeBytes is 4096.")
        @Valid PolicyCostModel costModel,
        @Schema(description = "Reservation per GiB of capacity: minIops becomes the cap of minIopsPerGiB x GiB, "
                + "minIopsFloor its floor; null: minIops is absolute. Must not exceed maxIopsPerGiB.", example = "10")
        @Positive Double minIopsPerGiB,
        @Schema(description = "IOPS limit per GiB of capacity: min(maxIops, max(maxIopsFloor, round(maxIopsPerGiB x GiB))); "
                + "null: maxIops is absolute.", example = "50")
        @Positive Double maxIopsPerGiB,
        @Schema(description = "Burst IOPS per GiB of capacity, bounded by burstIopsFloor and burstIops as maxIopsPerGiB is; "
                + "null: burstIops is absolute.")
        @Positive Double burstIopsPerGiB,
        @Schema(description = "Throughput limit in bytes/s per GiB of capacity, bounded by maxBytesPerSecFloor and "
                + "maxBytesPerSec; null: maxBytesPerSec is absolute.")
        @Positive Double maxBytesPerSecPerGiB,
        @Schema(description = "Floor of minIopsPerGiB: the least reservation a small volume gets; needs minIopsPerGiB, "
                + "at most minIops.")
        @Positive Long minIopsFloor,
        @Schema(description = "Floor of maxIopsPerGiB (as EBS gp2's 100 IOPS): the least limit a small or empty volume gets; "
                + "needs maxIopsPerGiB, at most maxIops. Left out: 1.", example = "100")
        @Positive Long maxIopsFloor,
        @Schema(description = "Floor of burstIopsPerGiB; needs it, at most burstIops.")
        @Positive Long burstIopsFloor,
        @Schema(description = "Floor of maxBytesPerSecPerGiB; needs it, at most maxBytesPerSec.")
        @Positive Long maxBytesPerSecFloor,
        @Schema(description = "The capacity the per-GiB terms scale with: allocated (the volume's size) or used (the bytes "
                + "the data node reports allocated, followed past a hysteresis of min(1 GiB, 5% of the size)). "
                + "Left out: allocated.")
        CapacityQos.CapacityBasis capacityBasis) {

    static PolicyRequest from(QosPolicy p) {
        CapacityQos t = p.terms();
        return new PolicyRequest(p.getName(), p.getDescription(), p.getWeight(), t.minIops().absolute(),
                t.maxIops().absolute(), t.burstIops().absolute(), t.maxBytesPerSec().absolute(),
                t.burstBytesPerSec().absolute(), new PolicyCostModel(p.getMinChargeBytes()),
                t.minIops().perGiB(), t.maxIops().perGiB(), t.burstIops().perGiB(), t.maxBytesPerSec().perGiB(),
                t.minIops().floor(), t.maxIops().floor(), t.burstIops().floor(), t.maxBytesPerSec().floor(),
                t.capacityBasis());
    }

    /** The QoS terms, absolute and per GiB, for the rules of the one contract ({@link CapacityQos#violations()}). */
    CapacityQos terms() {
        return new CapacityQos(weightOrDefault(), new CapacityQos.Term(minIops, minIopsPerGiB, minIopsFloor),
                new CapacityQos.Term(maxIops, maxIopsPerGiB, maxIopsFloor),
                new CapacityQos.Term(burstIops, burstIopsPerGiB, burstIopsFloor),
                new CapacityQos.Term(maxBytesPerSec, maxBytesPerSecPerGiB, maxBytesPerSecFloor),
                CapacityQos.Term.of(burstBytesPerSec), capacityBasis);
    }

    int weightOrDefault() {
        return weight == null ? Weight.DEFAULT : weight;
    }

    int minChargeBytesOrDefault() {
        return costModel == null ? PolicyCostModel.DEFAULT_MIN_CHARGE_BYTES : costModel.minChargeBytesOrDefault();
    }
}
