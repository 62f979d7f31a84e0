package io.weir.controlplane.taskshare;

import io.weir.controlplane.config.EffectiveTaskShares;
import io.weir.protocol.TaskShareConfig;
import java.util.List;
import java.util.UUID;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** {@link EffectiveTaskShares} from the stored sets: the node's override, else the cluster default. */
@Component
class StoredEffectiveTaskShares implements EffectiveTaskShares {

    private final TaskShareService service;

    StoredEffectiveTaskShares(TaskShareService service) {
        this.service = service;
    }

    @Override
    @Transactional(readOnly = true)
    public List<TaskShareConfig> effectiveFor(UUID nodeId) {
        return service.effectiveSet(nodeId).getTasks();
    }

    @Override
    @Transactional(readOnly = true)
    public int usageReportIntervalSecondsFor(UUID nodeId) {
        return service.effectiveSet(nodeId).getUsageReportIntervalSeconds();
    }
}
