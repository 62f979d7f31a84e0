package io.weir.controlplane.policy;

import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;

/**
 * How the scheduler charges an IO against a flow's counter (the "second currency"): by the bytes
 * it moves, but never less than {@code minChargeBytes}, so that a flood of tiny IOs is not free.
 *
 * @param minChargeBytes the least an IO is charged, 0-16777216 bytes; default 4096
 */
@Schema(name = "CostModel", description = "How an IO is charged against its flow: its bytes, but at least minChargeBytes.")
public record PolicyCostModel(
        @Schema(description = "The least an IO is charged, in bytes (0-16777216). 0 charges IOs by size alone.",
                defaultValue = "4096", minimum = "0", maximum = "16777216")
        @Min(0) @Max(PolicyCostModel.MAX_MIN_CHARGE_BYTES) Integer minChargeBytes) {

    /** Charge of the smallest IO when a policy gives none: one 4 KiB page. */
    public static final int DEFAULT_MIN_CHARGE_BYTES = 4096;

    /** Largest allowed minimum charge: 16 MiB, far above any single IO a client sends. */
    public static final int MAX_MIN_CHARGE_BYTES = 16 * 1024 * 1024;

    int minChargeBytesOrDefault() {
        return minChargeBytes == null ? DEFAULT_MIN_CHARGE_BYTES : minChargeBytes;
    }
}
