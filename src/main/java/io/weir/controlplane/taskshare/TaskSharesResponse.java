package io.weir.controlplane.taskshare;

import org.jspecify.annotations.Nullable;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.ETags;
import io.weir.protocol.IoCost;
import io.weir.protocol.TaskShareConfig;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * A set of task CPU shares as the API shows it.
 *
 * @param nodeId the node asked about; null for the cluster default
 * @param source where the tasks come from: {@value #CLUSTER_DEFAULT} or {@value #NODE_OVERRIDE}
 * @param tasks the tasks in order
 * @param usageReportIntervalSeconds seconds between the usage reports of the nodes that enforce the set
 * @param ioCost the fixed cost of a request on the nodes that enforce the set
 * @param version the version of the set shown (the cluster default's when a node has no
 *     override); the ETag derives from it ({@link #etag()})
 * @param updatedAt when that set last changed
 */
@Schema(name = "TaskShares", description = "Task CPU shares: the cluster default, or what one node enforces.")
public record TaskSharesResponse(
        @Schema(description = "The node asked about; null for the cluster default.") @Nullable UUID nodeId,
        @Schema(description = "Where the tasks come from.", allowableValues = {CLUSTER_DEFAULT, NODE_OVERRIDE}) String source,
        List<TaskShareConfig> tasks,
        @Schema(description = "Seconds between the usage reports of the nodes that enforce this set.") int usageReportIntervalSeconds,
        @Schema(description = "The fixed cost of a request in the cost model of the nodes that enforce this set.") IoCost ioCost,
        @Schema(description = "Optimistic-lock version of the set shown; the ETag derives from it and the source.") long version,
        Instant updatedAt) {

    public static final String CLUSTER_DEFAULT = "cluster-default";
    public static final String NODE_OVERRIDE = "node-override";

    /**
     * The ETag: the version for the cluster default's own resource; for a node, qualified by the
     * source, since the override and the cluster default are different rows whose versions can
     * be equal.
     */
    String etag() {
        return nodeId == null ? ETags.of(version) : ETags.of(source, version);
    }

    static TaskSharesResponse from(TaskShareSet set, UUID nodeId) {
        return new TaskSharesResponse(nodeId, set.getNodeId() == null ? CLUSTER_DEFAULT : NODE_OVERRIDE,
                set.getTasks(), set.getUsageReportIntervalSeconds(), set.getIoCost(), set.getVersion(), set.getUpdatedAt());
    }
}
