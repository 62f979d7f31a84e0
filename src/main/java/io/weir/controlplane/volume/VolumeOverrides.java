package io.weir.controlplane.volume;

import org.jspecify.annotations.Nullable;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.Weight;
import io.weir.protocol.CapacityQos;
import jakarta.validation.constraints.Positive;

/**
 * Per-volume replacements for members of the volume's policy. A null (or absent) member inherits
 * the policy's value; a set member replaces it. An override can tighten or loosen a limit the
 * policy sets, or set one the policy leaves unlimited, but it cannot make a policy limit
 * unlimited: null always means "inherit". To drop a limit, choose a policy without it.
 *
 * @param weight proportional share among the tenant's volumes, 1-10000
 * @param minIops reservation (mClock minimum)
 * @param maxIops IOPS limit
 * @param burstIops IOPS that burst credit may reach
 * @param maxBytesPerSec bytes/s limit
 * @param burstBytesPerSec bytes/s that burst credit may reach
 */
@Schema(name = "VolumeOverrides", description = """
        Per-volume replacements for members of the policy. A null or absent member INHERITS the policy's value \
        (it does not mean unlimited); in a merge patch, setting a member to null resets it to the policy's value. \
        The combined (effective) values must satisfy minIops <= maxIops < burstIops and \
        maxBytesPerSec < burstBytesPerSec, and a burst needs its maximum, at every capacity when per-GiB terms scale them.""")
public record VolumeOverrides(
        @Schema(description = "Weight among the tenant's volumes, 1-10000; null inherits the policy's.")
        @Weight @Nullable Integer weight,
        @Schema(description = "Reservation in IOPS; null inherits the policy's.")
        @Positive @Nullable Long minIops,
        @Schema(description = "IOPS limit; null inherits the policy's.")
        @Positive @Nullable Long maxIops,
        @Schema(description = "Burst IOPS ceiling; null inherits the policy's.")
        @Positive @Nullable Long burstIops,
        @Schema(description = "Bytes/s limit; null inherits the policy's.")
        @Positive @Nullable Long maxBytesPerSec,
        @Schema(description = "Burst bytes/s ceiling; null inherits the policy's.")
        @Positive @Nullable Long burstBytesPerSec,
        @Schema(description = "Reservation per GiB of capacity (see the policy's); null inherits the policy's.")
        @Positive @Nullable Double minIopsPerGiB,
        @Schema(description = "IOPS limit per GiB of capacity; null inherits the policy's.")
        @Positive @Nullable Double maxIopsPerGiB,
        @Schema(description = "Burst IOPS per GiB of capacity; null inherits the policy's.")
        @Positive @Nullable Double burstIopsPerGiB,
        @Schema(description = "Bytes/s limit per GiB of capacity; null inherits the policy's.")
        @Positive @Nullable Double maxBytesPerSecPerGiB,
        @Schema(description = "Floor of minIopsPerGiB; null inherits the policy's.")
        @Positive @Nullable Long minIopsFloor,
        @Schema(description = "Floor of maxIopsPerGiB; null inherits the policy's.")
        @Positive @Nullable Long maxIopsFloor,
        @Schema(description = "Floor of burstIopsPerGiB; null inherits the policy's.")
        @Positive @Nullable Long burstIopsFloor,
        @Schema(description = "Floor of maxBytesPerSecPerGiB; null inherits the policy's.")
        @Positive @Nullable Long maxBytesPerSecFloor,
        @Schema(description = "The capacity the per-GiB terms scale with: allocated or used; null inherits the policy's.")
        CapacityQos.@Nullable CapacityBasis capacityBasis) {

    /** No overrides: everything comes from the policy. */
    static final VolumeOverrides NONE = new VolumeOverrides(null, null, null, null, null, null, null, null, null, null,
            null, null, null, null, null);

    /** The overrides of {@code weight} (null: inherit) and of the members of {@code terms} set (its weight unused). */
    static VolumeOverrides of(@Nullable Integer weight, CapacityQos terms) {
        return new VolumeOverrides(weight, terms.minIops().absolute(), terms.maxIops().absolute(),
                terms.burstIops().absolute(), terms.maxBytesPerSec().absolute(), terms.burstBytesPerSec().absolute(),
                terms.minIops().perGiB(), terms.maxIops().perGiB(), terms.burstIops().perGiB(),
                terms.maxBytesPerSec().perGiB(), terms.minIops().floor(), terms.maxIops().floor(),
                terms.burstIops().floor(), terms.maxBytesPerSec().floor(), terms.capacityBasis());
    }

    /** The overridden QoS terms (weight 0 when not overridden), member by member. */
    CapacityQos terms() {
        return new CapacityQos(weight == null ? 0 : weight, new CapacityQos.Term(minIops, minIopsPerGiB, minIopsFloor),
                new CapacityQos.Term(maxIops, maxIopsPerGiB, maxIopsFloor),
                new CapacityQos.Term(burstIops, burstIopsPerGiB, burstIopsFloor),
                new CapacityQos.Term(maxBytesPerSec, maxBytesPerSecPerGiB, maxBytesPerSecFloor),
                CapacityQos.Term.of(burstBytesPerSec), capacityBasis);
    }

    /** Whether the member with this JSON name is set. */
    boolean isSet(String member) {
        return switch (member) {
            case "weight" -> weight != null;
            case "minIops" -> minIops != null;
            case "maxIops" -> maxIops != null;
            case "burstIops" -> burstIops != null;
            case "maxBytesPerSec" -> maxBytesPerSec != null;
            case "burstBytesPerSec" -> burstBytesPerSec != null;
            case "minIopsPerGiB" -> minIopsPerGiB != null;
            case "maxIopsPerGiB" -> maxIopsPerGiB != null;
            case "burstIopsPerGiB" -> burstIopsPerGiB != null;
            case "maxBytesPerSecPerGiB" -> maxBytesPerSecPerGiB != null;
            case "minIopsFloor" -> minIopsFloor != null;
            case "maxIopsFloor" -> maxIopsFloor != null;
            case "burstIopsFloor" -> burstIopsFloor != null;
            case "maxBytesPerSecFloor" -> maxBytesPerSecFloor != null;
            case "capacityBasis" -> capacityBasis != null;
            default -> false;
        };
    }
}
