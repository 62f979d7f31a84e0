package io.weir.controlplane.taskshare;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.protocol.IoCost;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

/** The fixed cost of a request on the nodes that enforce a task-share set; see {@link IoCost}. */
@Schema(name = "IoCostRequest", description = "The fixed cost of one request in the nodes' cost model, in bytes added to its size: "
        + "weights share a saturated node in this cost (cost = perIoBytes + bytes, at least the policy's minChargeBytes).")
public record IoCostRequest(
        @Schema(description = "The fixed cost of a read (and CACHE, BLOCK_STATUS), in bytes, 0-67108864.", example = "30720",
                requiredMode = Schema.RequiredMode.REQUIRED)
        @NotNull @Min(0) @Max(IoCost.MAX_PER_IO_BYTES) Long readPerIoBytes,
        @Schema(description = "The fixed cost of a write (and WRITE_ZEROES, TRIM, FLUSH), in bytes, 0-67108864.", example = "157696",
                requiredMode = Schema.RequiredMode.REQUIRED)
        @NotNull @Min(0) @Max(IoCost.MAX_PER_IO_BYTES) Long writePerIoBytes) {

    IoCost toConfig() {
        return new IoCost(readPerIoBytes, writePerIoBytes);
    }
}
