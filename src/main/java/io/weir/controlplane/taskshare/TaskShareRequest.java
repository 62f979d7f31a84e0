package io.weir.controlplane.taskshare;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.ResourceName;
import io.weir.controlplane.web.Weight;
import io.weir.protocol.TaskShareConfig;
import jakarta.validation.Valid;

/** One task's CPU share in a PUT body. */
@Schema(name = "TaskShareRequest", description = "One scheduler task and its CPU share.")
public record TaskShareRequest(
        @Schema(description = "Task name, unique within the set; 'foreground' is the client IO task.", example = "flush", requiredMode = Schema.RequiredMode.REQUIRED)
        @ResourceName String name,
        @Schema(description = "Static CPU share, 1-10000: the root scheduler runs the task with the lowest worker time (CPU time, plus time blocked in the store) / share.", defaultValue = "100")
        @Weight Integer share,
        @Schema(description = "Optional: make the share follow a utilization signal; null for a static share.")
        @Valid DynamicShareRequest dynamic) {

    TaskShareConfig toConfig() {
        return new TaskShareConfig(name, share == null ? Weight.DEFAULT : share, dynamic == null ? null : dynamic.toConfig());
    }
}
