package io.weir.controlplane.taskshare;

import io.weir.controlplane.config.EffectiveTaskShares;
import io.weir.protocol.TaskShareConfig;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** {@link EffectiveTaskShares} from the stored sets: the node's override, else the cluster default. */
@Component
@Transactional(readOnly = true)
class StoredEffectiveTaskShares implements EffectiveTaskShares {

    private final TaskShareService service;

    StoredEffectiveTaskShares(TaskShareService service) {
        this.service = service;
    }

    /** One query for the overrides of all of {@code nodeIds}, one for the default if any lacks one. */
    @Override
    public Map<UUID, NodeTaskShares> effectiveForEach(Collection<UUID> nodeIds) {
        Map<UUID, TaskShareSet> overrides = service.overrides(nodeIds);
        NodeTaskShares fallback = overrides.size() < nodeIds.size() ? of(service.clusterDefault()) : null;
        Map<UUID, NodeTaskShares> result = new HashMap<>();
        for (UUID node : nodeIds) {
            TaskShareSet own = overrides.get(node);
            result.put(node, own != null ? of(own) : fallback);
        }
        return result;
    }

    @Override
    public List<TaskShareConfig> effectiveFor(UUID nodeId) {
        return of(service.effectiveSet(nodeId)).tasks();
    }

    @Override
    public int usageReportIntervalSecondsFor(UUID nodeId) {
        return service.effectiveSet(nodeId).getUsageReportIntervalSeconds();
    }

    private static NodeTaskShares of(TaskShareSet set) {
        return new NodeTaskShares(set.getTasks(), set.getUsageReportIntervalSeconds(), set.getIoCost());
    }
}
