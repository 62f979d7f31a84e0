package io.weir.protocol;

import org.jspecify.annotations.Nullable;

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
 * @param capacityBasis the capacity the per-GiB terms scaled with ({@link CapacityQos}); null when
 *     no number scales
 * @param capacityBytes that capacity in bytes; null when no number scales
 * @param sources which term produced each of the five numbers; left out (older snapshots), each
 *     set number is {@code absolute}
 */
@JsonClassDescription("The QoS a volume gets once its policy and per-volume overrides are combined: what the data node enforces for its flow.")
public record EffectivePolicy(
        @JsonPropertyDescription("Proportional share among the tenant's volumes, 1-10000.") int weight,
        @JsonPropertyDescription("Reservation (minimum IOPS) served before weight-based sharing; null for none.") @Nullable Long minIops,
        @JsonPropertyDescription("IOPS limit; null for unlimited.") @Nullable Long maxIops,
        @JsonPropertyDescription("IOPS that banked burst credit may reach; null for no bursting.") @Nullable Long burstIops,
        @JsonPropertyDescription("Throughput limit in bytes/s; null for unlimited.") @Nullable Long maxBytesPerSec,
        @JsonPropertyDescription("Throughput that banked burst credit may reach; null for no bursting.") @Nullable Long burstBytesPerSec,
        @JsonPropertyDescription("Cost model, always the policy's: every IO is charged at least minChargeBytes.") EffectiveCostModel costModel,
        @JsonPropertyDescription("The capacity the per-GiB terms were scaled with: allocated (the size) or used (bytes the "
                + "data node reports allocated); null when no number scales.") CapacityQos.@Nullable CapacityBasis capacityBasis,
        @JsonPropertyDescription("That capacity in bytes; null when no number scales.") @Nullable Long capacityBytes,
        @JsonPropertyDescription("Which term produced each number: absolute, perGiB, floor or cap.") Sources sources) {

    public EffectivePolicy {
        if (sources == null) {
            sources = new Sources(absolute(minIops), absolute(maxIops), absolute(burstIops), absolute(maxBytesPerSec),
                    absolute(burstBytesPerSec));
        }
    }

    /** Absolute numbers only: nothing scales, each set number's source is {@code absolute}. */
    public EffectivePolicy(int weight, Long minIops, Long maxIops, Long burstIops, Long maxBytesPerSec,
            Long burstBytesPerSec, EffectiveCostModel costModel) {
        this(weight, minIops, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec, costModel, null, null, null);
    }

    /** The numbers in force of capacity-based terms ({@link CapacityQos#resolve}). */
    public static EffectivePolicy of(CapacityQos terms, CapacityQos.InForce inForce, EffectiveCostModel costModel) {
        QosSettings s = inForce.settings();
        boolean scales = terms.scales();
        java.util.List<CapacityQos.Source> src = inForce.sources();
        return new EffectivePolicy(s.weight(), s.minIops(), s.maxIops(), s.burstIops(), s.maxBytesPerSec(),
                s.burstBytesPerSec(), costModel, scales ? terms.basis() : null, scales ? inForce.capacityBytes() : null,
                new Sources(src.get(0), src.get(1), src.get(2), src.get(3), src.get(4)));
    }

    /**
     * Which term produced each number ({@link CapacityQos.Source}); null where the number is none.
     *
     * @param minIops source of the reservation
     * @param maxIops source of the IOPS limit
     * @param burstIops source of the IOPS burst ceiling
     * @param maxBytesPerSec source of the throughput limit
     * @param burstBytesPerSec source of the throughput burst ceiling
     */
    @JsonClassDescription("Which term produced each number of an effective policy: absolute (no per-GiB term), perGiB "
            + "(the rate times the capacity), floor, or cap (the absolute field bounding the rate); null where there is none.")
    public record Sources(
            CapacityQos.@Nullable Source minIops,
            CapacityQos.@Nullable Source maxIops,
            CapacityQos.@Nullable Source burstIops,
            CapacityQos.@Nullable Source maxBytesPerSec,
            CapacityQos.@Nullable Source burstBytesPerSec) {
    }

    private static CapacityQos.Source absolute(Long value) {
        return value == null ? null : CapacityQos.Source.absolute;
    }

    /** The six QoS fields, for the rules of the one contract ({@link QosSettings#violations()}). */
    public QosSettings qosSettings() {
        return new QosSettings(weight, minIops, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec);
    }
}
