package io.weir.controlplane.taskshare;

import io.swagger.v3.oas.annotations.media.ArraySchema;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;

/**
 * The body of a PUT of task shares: the whole set, in order. It must name the {@code foreground}
 * task, and task names must be unique; {@link TaskShareValidation} checks those rules together
 * with the field constraints, so one answer lists every problem.
 */
@Schema(name = "TaskSharesRequest", description = "A whole set of task CPU shares.")
public record TaskSharesRequest(
        @ArraySchema(arraySchema = @Schema(description = "The tasks; must include 'foreground', names unique.", requiredMode = Schema.RequiredMode.REQUIRED),
                minItems = 1, maxItems = TaskSharesRequest.MAX_TASKS)
        @NotNull @Size(min = 1, max = MAX_TASKS) @Valid List<TaskShareRequest> tasks) {

    /** Most tasks a set may hold; a scheduler has a handful. */
    public static final int MAX_TASKS = 64;
}
