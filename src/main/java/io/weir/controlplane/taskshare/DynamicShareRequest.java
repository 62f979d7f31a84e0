package io.weir.controlplane.taskshare;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.Weight;
import io.weir.protocol.TaskShareConfig.Curve;
import io.weir.protocol.TaskShareConfig.DynamicShare;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.NotNull;

/** A share that follows the node's utilization signal u in [0, 1]; see {@link DynamicShare}. */
@Schema(name = "DynamicShareRequest", description = "A share that follows a utilization signal u in [0, 1]: low while u < t1, high while u > t2, ramping between.")
public record DynamicShareRequest(
        @Schema(description = "Threshold below which the share is low; 0 <= t1 < t2.", example = "0.5", requiredMode = Schema.RequiredMode.REQUIRED)
        @NotNull @DecimalMin("0") @DecimalMax("1") Double t1,
        @Schema(description = "Threshold above which the share is high; t1 < t2 <= 1.", example = "0.9", requiredMode = Schema.RequiredMode.REQUIRED)
        @NotNull @DecimalMin("0") @DecimalMax("1") Double t2,
        @Schema(description = "Share at or below t1, 1-10000.", example = "50", requiredMode = Schema.RequiredMode.REQUIRED)
        @NotNull @Weight Integer low,
        @Schema(description = "Share at or above t2, 1-10000.", example = "500", requiredMode = Schema.RequiredMode.REQUIRED)
        @NotNull @Weight Integer high,
        @Schema(description = "Shape of the ramp between t1 and t2.", requiredMode = Schema.RequiredMode.REQUIRED)
        @NotNull Curve curve) {

    DynamicShare toConfig() {
        return new DynamicShare(t1, t2, low, high, curve);
    }
}
