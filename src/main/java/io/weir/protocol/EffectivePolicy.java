package io.weir.protocol;

/**
 * The QoS a volume gets after its policy and its per-volume overrides are combined: what the
 * scheduler on a data node enforces for that volume's flow.
 *
 * @param weight proportional share among the tenant's volumes, 1-10000
 * @param minIops reservation (mClock minimum), null for none
 * @param maxIops IOPS limit, null for unlimited
 * @param burstIops IOPS that banked burst credit may reach, null for no bursting
 * @param maxBytesPerSec throughput limit, null for unlimited
 * @param burstBytesPerSec throughput that banked burst credit may reach, null for no bursting
 * @param minChargeBytes cost model: an IO is charged at least this many bytes (small IOs cost
 *     like 4 KiB by default)
 */
public record EffectivePolicy(
        int weight,
        Long minIops,
        Long maxIops,
        Long burstIops,
        Long maxBytesPerSec,
        Long burstBytesPerSec,
        int minChargeBytes) {
}
