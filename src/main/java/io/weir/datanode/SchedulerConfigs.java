package io.weir.datanode;

import io.weir.agent.ConfigTranslator;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.TaskShareConfig;
import io.weir.protocol.TenantConfig;
import io.weir.protocol.VolumeConfig;
import io.weir.scheduler.CostModel;
import io.weir.scheduler.SchedulerConfig;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.HashMap;
import java.util.Map;

/**
 * A minimal {@link DesiredConfig} to {@link SchedulerConfig} translation, used only where the data
 * node applies a config itself ({@code --config-file}, {@link DataNode#apply}). Where the agent
 * delivers configs, the agent's translator applies them to the executor and this class is not
 * used. Scheduler ids are the UUID strings of tenants and volumes; {@code null} limits are 0
 * (unlimited); no tasks means the default task set; a volume's cost model is the agent's
 * ({@link ConfigTranslator#costModel}: the config's fixed cost of a request plus its bytes) and
 * its tasks are the agent's ({@link ConfigTranslator#task}).
 */
final class SchedulerConfigs {

    private SchedulerConfigs() {
    }

    static SchedulerConfig from(DesiredConfig c) {
        SchedulerConfig.Builder b = SchedulerConfig.builder();
        if (c.tasks().isEmpty()) {
            b.defaultTasks();
        }
        for (TaskShareConfig t : c.tasks()) {
            b.task(ConfigTranslator.task(t));
        }
        for (TenantConfig t : c.tenants()) {
            b.tenant(TenantSpec.of(t.id().toString()).withWeight(t.weight()).withMaxIops(orZero(t.maxIops()))
                    .withMaxBytesPerSec(orZero(t.maxBytesPerSec())));
        }
        Map<Long, CostModel> costModels = new HashMap<>();
        for (VolumeConfig v : c.volumes()) {
            EffectivePolicy p = v.effectivePolicy();
            VolumeSpec s = VolumeSpec.of(v.id().toString(), v.tenantId().toString());
            if (p != null) {
                s = s.withWeight(p.weight()).withMinIops(orZero(p.minIops())).withMaxIops(orZero(p.maxIops()))
                        .withBurstIops(orZero(p.burstIops())).withMaxBytesPerSec(orZero(p.maxBytesPerSec()))
                        .withBurstBytesPerSec(orZero(p.burstBytesPerSec()));
                s = s.withCostModel(ConfigTranslator.costModel(c.ioCost(), p, costModels));
            }
            b.volume(s);
        }
        return b.build();
    }

    private static long orZero(Long v) {
        return v == null ? 0 : v;
    }
}
