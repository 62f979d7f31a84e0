package io.weir.controlplane.taskshare;

import io.swagger.v3.oas.annotations.media.ArraySchema;
import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.IoCost;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The body of a PUT of task shares: the whole set, in order, the usage reporting interval of the
 * nodes that enforce it and the fixed cost of a request in their cost model (a PUT replaces all
 * three; left out, the interval goes back to 10 s and the cost to {@link IoCost#DEFAULT}). It must name the {@code foreground}
 * task, and task names must be unique; {@link TaskShareValidation} checks those rules together
 * with the field constraints, so one answer lists every problem.
 */
@Schema(name = "TaskSharesRequest", description = "A whole set of task CPU shares.")
public record TaskSharesRequest(
        @ArraySchema(arraySchema = @Schema(description = "The tasks; must include 'foreground', names unique.", requiredMode = Schema.RequiredMode.REQUIRED),
                minItems = 1, maxItems = TaskSharesRequest.MAX_TASKS)
        @NotNull @Size(min = 1, max = MAX_TASKS) @Valid List<TaskShareRequest> tasks,
        @Schema(description = "Seconds between the usage reports of the nodes that enforce this set, 1-3600; "
                + "left out or null: 10.", defaultValue = "10", minimum = "1", maximum = "3600", example = "10")
        @Min(DesiredConfig.MIN_USAGE_REPORT_INTERVAL_SECONDS) @Max(DesiredConfig.MAX_USAGE_REPORT_INTERVAL_SECONDS)
        Integer usageReportIntervalSeconds,
        @Schema(description = "The fixed cost of a request on the nodes that enforce this set; left out or null: "
                + "the defaults measured on a data node (30720 and 157696 bytes).")
        @Valid @Nullable IoCostRequest ioCost) {

    /** Most tasks a set may hold; a scheduler has a handful. */
    public static final int MAX_TASKS = 64;

    /** A set with the default usage reporting interval and cost of a request. */
    public TaskSharesRequest(List<TaskShareRequest> tasks) {
        this(tasks, null, null);
    }

    /** A set with the default cost of a request. */
    public TaskSharesRequest(List<TaskShareRequest> tasks, Integer usageReportIntervalSeconds) {
        this(tasks, usageReportIntervalSeconds, null);
    }

    /** The cost of a request asked for, or the default when left out. */
    IoCost ioCostOrDefault() {
        return ioCost == null ? IoCost.DEFAULT : ioCost.toConfig();
    }

    /** The reporting interval asked for, or the default when left out. */
    int usageReportIntervalSecondsOrDefault() {
        return usageReportIntervalSeconds == null ? DesiredConfig.DEFAULT_USAGE_REPORT_INTERVAL_SECONDS
                : usageReportIntervalSeconds;
    }
}
