package io.weir.controlplane.policy;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.ResourceName;
import io.weir.controlplane.web.Weight;
import io.weir.protocol.QosSettings;
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
        minIops <= maxIops < burstIops and maxBytesPerSec < burstBytesPerSec; a burst needs its maximum.""")
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
        @Valid CostModel costModel) {

    static PolicyRequest from(QosPolicy p) {
        return new PolicyRequest(p.getName(), p.getDescription(), p.getWeight(), p.getMinIops(), p.getMaxIops(),
                p.getBurstIops(), p.getMaxBytesPerSec(), p.getBurstBytesPerSec(), new CostModel(p.getMinChargeBytes()));
    }

    /** The six QoS fields, for the rules of the one contract. */
    QosSettings qosSettings() {
        return new QosSettings(weightOrDefault(), minIops, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec);
    }

    int weightOrDefault() {
        return weight == null ? Weight.DEFAULT : weight;
    }

    int minChargeBytesOrDefault() {
        return costModel == null ? CostModel.DEFAULT_MIN_CHARGE_BYTES : costModel.minChargeBytesOrDefault();
    }
}
