package io.weir.controlplane.usage;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/** How one node's CPU and workers went to its scheduler tasks over [from, to). */
@Schema(name = "TaskUsageSeries", description = "CPU time and worker time of a node's scheduler tasks, one point per step over [from, to).")
record TaskUsageSeries(
        UUID nodeId,
        Instant from,
        Instant to,
        @Schema(example = "PT1M") String step,
        @Schema(example = "1m") String resolution,
        List<TaskSeries> tasks,
        List<UsageSeries.UsageGap> gaps) {

    /** One task's points. */
    @Schema(name = "TaskSeries")
    record TaskSeries(@Schema(example = "foreground") String name, List<TaskPoint> points) {
    }

    /**
     * One task over [ts, ts + step).
     *
     * @param cpuFraction this task's part of the CPU charged to all tasks of the node in the point
     * @param workerMs worker time charged: CPU time plus the time the task's requests held a
     *     worker blocked (in a store slower than the CPU, say); where a report carries none (an
     *     agent from before it was reported), its CPU time, which worker time is never below
     * @param workerFraction this task's part of the worker time charged to all tasks of the node
     *     in the point: the split the shares govern while the tasks have work
     * @param share time-weighted mean of the task's share in force; null without reports
     */
    @Schema(name = "TaskPoint")
    record TaskPoint(
            Instant ts,
            @Schema(description = "Requests completed.") long ops,
            @Schema(description = "CPU time charged, ms.") double cpuMs,
            @Schema(description = "This task's part of the node's charged CPU in the point (0..1).") double cpuFraction,
            @Schema(description = "Worker time charged, ms: CPU time plus time blocked holding a worker (the CPU time "
                    + "where a report carries none).") double workerMs,
            @Schema(description = "This task's part of the node's charged worker time in the point (0..1): the split "
                    + "task shares govern while the tasks have work.") double workerFraction,
            @Schema(description = "Mean share in force; null without reports.") Double share) {
    }
}
