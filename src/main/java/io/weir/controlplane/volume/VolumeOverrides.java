package io.weir.controlplane.volume;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.Weight;
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
        maxBytesPerSec < burstBytesPerSec, and a burst needs its maximum.""")
public record VolumeOverrides(
        @Schema(description = "Weight among the tenant's volumes, 1-10000; null inherits the policy's.")
        @Weight Integer weight,
        @Schema(description = "Reservation in IOPS; null inherits the policy's.")
        @Positive Long minIops,
        @Schema(description = "IOPS limit; null inherits the policy's.")
        @Positive Long maxIops,
        @Schema(description = "Burst IOPS ceiling; null inherits the policy's.")
        @Positive Long burstIops,
        @Schema(description = "Bytes/s limit; null inherits the policy's.")
        @Positive Long maxBytesPerSec,
        @Schema(description = "Burst bytes/s ceiling; null inherits the policy's.")
        @Positive Long burstBytesPerSec) {

    /** No overrides: everything comes from the policy. */
    static final VolumeOverrides NONE = new VolumeOverrides(null, null, null, null, null, null);

    /** Whether the member with this JSON name is set. */
    boolean isSet(String member) {
        return switch (member) {
            case "weight" -> weight != null;
            case "minIops" -> minIops != null;
            case "maxIops" -> maxIops != null;
            case "burstIops" -> burstIops != null;
            case "maxBytesPerSec" -> maxBytesPerSec != null;
            case "burstBytesPerSec" -> burstBytesPerSec != null;
            default -> false;
        };
    }
}
