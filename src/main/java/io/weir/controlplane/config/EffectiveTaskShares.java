package io.weir.controlplane.config;

import io.weir.protocol.TaskShareConfig;
import java.util.List;
import java.util.UUID;

/**
 * The task CPU shares a node enforces, and the usage reporting interval that comes with them: its
 * override if it has one, else the cluster default. Implemented by the taskshare feature.
 */
public interface EffectiveTaskShares {

    List<TaskShareConfig> effectiveFor(UUID nodeId);

    /** Seconds between the node's usage reports, from the same set as {@link #effectiveFor}. */
    int usageReportIntervalSecondsFor(UUID nodeId);
}
