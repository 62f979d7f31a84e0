package io.weir.agent;

import io.weir.protocol.DesiredConfig;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.IoCost;
import io.weir.protocol.TaskShareConfig;
import io.weir.protocol.TenantConfig;
import io.weir.protocol.VolumeConfig;
import io.weir.scheduler.CostModel;
import io.weir.scheduler.SchedulerConfig;
import io.weir.scheduler.SchedulerConfig.Curve;
import io.weir.scheduler.SchedulerConfig.DynamicShare;
import io.weir.scheduler.SchedulerConfig.TaskSpec;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.HashMap;
import java.util.Map;

/**
 * The one translation from the wire's {@link DesiredConfig} to the scheduler's
 * {@link SchedulerConfig}: what an agent hands to {@code QosExecutor.reconfigure}.
 *
 * <ul>
 *   <li>Ids become their UUID strings: a tenant's id is {@code tenant.id().toString()}, a volume's
 *       is {@code volume.id().toString()} (resolve it with {@code scheduler.volume(id)}).</li>
 *   <li>{@code null} limits (none, unlimited, no bursting) become the scheduler's {@code 0}.</li>
 *   <li>A tenant has no burst on the wire: it gets none. A volume's cost model is
 *       {@link CostModel#linear} with the node's {@link DesiredConfig#ioCost() fixed
 *       cost of a request} and the policy's {@code minChargeBytes} (one instance per distinct
 *       floor, shared by the volumes).</li>
 *   <li>Task shares and dynamic curves are copied; an empty task list gives the scheduler's
 *       default (a lone foreground task).</li>
 *   <li>Every volume's queue is bounded by the capacity given (default
 *       {@link SchedulerConfig#DEFAULT_QUEUE_CAPACITY}).</li>
 * </ul>
 * The scheduler validates the result with the same rules ({@code io.weir.protocol.QosSettings})
 * that the control plane checks before it stores a change, so a snapshot the control plane
 * serves translates without error; a snapshot that does not (a bug, or a config from a newer
 * control plane) throws, and the agent keeps its previous config and answers {@code nack}.
 */
public final class ConfigTranslator {

    private ConfigTranslator() {
    }

    /**
     * Translates with the default queue capacity per volume.
     *
     * @throws IllegalArgumentException if the snapshot breaks a rule of the scheduler; the message
     *     names the tenant or volume
     */
    public static SchedulerConfig translate(DesiredConfig config) {
        return translate(config, SchedulerConfig.DEFAULT_QUEUE_CAPACITY);
    }

    /**
     * Translates, bounding every volume's queue at {@code volumeQueueCapacity}.
     *
     * @throws IllegalArgumentException if the snapshot breaks a rule of the scheduler; the message
     *     names the tenant or volume
     */
    public static SchedulerConfig translate(DesiredConfig config, int volumeQueueCapacity) {
        SchedulerConfig.Builder builder = SchedulerConfig.builder();
        for (TaskShareConfig task : config.tasks()) {
            builder.task(task(task));
        }
        for (TenantConfig tenant : config.tenants()) {
            builder.tenant(new TenantSpec(tenant.id().toString(), tenant.weight(), zero(tenant.maxIops()), 0,
                    zero(tenant.maxBytesPerSec()), 0));
        }
        Map<Long, CostModel> costModels = new HashMap<>();
        for (VolumeConfig volume : config.volumes()) {
            EffectivePolicy p = volume.effectivePolicy();
            if (p == null) {
                throw new IllegalArgumentException("volume '" + volume.id() + "' has no effective policy");
            }
            builder.volume(new VolumeSpec(volume.id().toString(), volume.tenantId().toString(), p.weight(),
                    zero(p.minIops()), zero(p.maxIops()), zero(p.burstIops()), zero(p.maxBytesPerSec()),
                    zero(p.burstBytesPerSec()), costModel(config.ioCost(), p, costModels), volumeQueueCapacity));
        }
        return builder.build();
    }

    /**
     * A volume's cost model: {@link CostModel#linear} with the node's fixed cost of a request and
     * the policy's {@code minChargeBytes} (the default floor without one). {@code shared} holds
     * one instance per floor, for the volumes of one config to share.
     */
    public static CostModel costModel(IoCost io, EffectivePolicy p, Map<Long, CostModel> shared) {
        long minCharge = p.costModel() == null ? CostModel.DEFAULT_MIN_CHARGE_BYTES : p.costModel().minChargeBytes();
        return shared.computeIfAbsent(minCharge, m -> CostModel.linear(io.readPerIoBytes(), io.writePerIoBytes(), m));
    }

    /** A task share as the scheduler's {@link TaskSpec}: its share and dynamic curve, copied. */
    public static TaskSpec task(TaskShareConfig task) {
        TaskSpec spec = TaskSpec.of(task.name(), task.share());
        TaskShareConfig.DynamicShare d = task.dynamic();
        if (d != null) {
            Curve curve = d.curve() == TaskShareConfig.Curve.exponential ? Curve.EXPONENTIAL : Curve.LINEAR;
            spec = spec.withDynamic(new DynamicShare(d.t1(), d.t2(), d.low(), d.high(), curve));
        }
        return spec;
    }

    private static long zero(Long value) {
        return value == null ? 0 : value;
    }
}
