package io.weir.controlplane.config;

import io.weir.protocol.TaskShareConfig;
import java.util.List;
import java.util.UUID;

/** The task CPU shares a node enforces: its override if it has one, else the cluster default. Implemented by the taskshare feature. */
public interface EffectiveTaskShares {

    List<TaskShareConfig> effectiveFor(UUID nodeId);
}
