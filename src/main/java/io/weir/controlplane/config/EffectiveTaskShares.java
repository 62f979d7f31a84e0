package io.weir.controlplane.config;

import io.weir.protocol.IoCost;
import io.weir.protocol.TaskShareConfig;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The task CPU shares a node enforces, and the usage reporting interval and cost of a request that
 * come with them: its override if it has one, else the cluster default. Implemented by the
 * taskshare feature.
 */
public interface EffectiveTaskShares {

    /** What one node enforces: the tasks' shares, the seconds between its usage reports, the cost of a request. */
    record NodeTaskShares(List<TaskShareConfig> tasks, int usageReportIntervalSeconds, IoCost ioCost) {
    }

    /** The effective set of each of {@code nodeIds}, read together. */
    Map<UUID, NodeTaskShares> effectiveForEach(Collection<UUID> nodeIds);

    List<TaskShareConfig> effectiveFor(UUID nodeId);

    /** Seconds between the node's usage reports, from the same set as {@link #effectiveFor}. */
    int usageReportIntervalSecondsFor(UUID nodeId);
}
