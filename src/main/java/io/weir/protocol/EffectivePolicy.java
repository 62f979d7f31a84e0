package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
/**
 * The QoS a volume gets after its policy and its per-volume overrides are combined: what the
 * scheduler on a data node enforces for that volume's flow. Its six QoS fields obey the rules of
 * {@link QosSettings}.
 *
 * @param weight proportional share among the tenant's volumes, 1-10000
 * @param minIops reservation (mClock minimum), null for none
 * @param maxIops IOPS limit, null for unlimited
 * @param burstIops IOPS that banked burst credit may reach, null for no bursting
 * @param maxBytesPerSec throughput limit, null for unlimited
 * @param burstBytesPerSec throughput that banked burst credit may reach, null for no bursting
 * @param costModel how an IO is charged: at least {@code minChargeBytes} (small IOs cost like
 *     4 KiB by default); always the policy's
 */
@JsonClassDescription("The QoS a volume gets once its policy and per-volume overrides are combined: what the data node enforces for its flow.")
public record EffectivePolicy(
        @JsonPropertyDescription("Proportional share among the tenant's volumes, 1-10000.") int weight,
        @JsonPropertyDescription("Reservation (minimum IOPS) served before weight-based sharing; null for none.") Long minIops,
        @JsonPropertyDescription("IOPS limit; null for unlimited.") Long maxIops,
        @JsonPropertyDescription("IOPS that banked burst credit may reach; null for no bursting.") Long burstIops,
        @JsonPropertyDescription("Throughput limit in bytes/s; null for unlimited.") Long maxBytesPerSec,
        @JsonPropertyDescription("Throughput that banked burst credit may reach; null for no bursting.") Long burstBytesPerSec,
        @JsonPropertyDescription("Cost model, always the policy's: every IO is charged at least minChargeBytes.") CostModel costModel) {

    /** The six QoS fields, for the rules of the one contract ({@link QosSettings#violations()}). */
    public QosSettings qosSettings() {
        return new QosSettings(weight, minIops, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec);
    }
}
