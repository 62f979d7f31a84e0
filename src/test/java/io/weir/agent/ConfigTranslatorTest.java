package io.weir.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weir.protocol.EffectiveCostModel;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.IoCost;
import io.weir.protocol.TaskShareConfig;
import io.weir.protocol.TenantConfig;
import io.weir.protocol.VolumeConfig;
import io.weir.scheduler.IoKind;
import io.weir.scheduler.SchedulerConfig;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ConfigTranslatorTest {

    private static final UUID NODE = UUID.randomUUID();
    private static final UUID TENANT = UUID.randomUUID();
    private static final UUID VOLUME = UUID.randomUUID();

    @Test
    void nullLimitsBecomeZeroAndIdsTheirUuidStrings() {
        SchedulerConfig config = ConfigTranslator.translate(new DesiredConfig(NODE, 3,
                List.of(new TaskShareConfig("foreground", 60, null),
                        new TaskShareConfig("flush", 15, new TaskShareConfig.DynamicShare(0.2, 0.8, 5, 50,
                                TaskShareConfig.Curve.exponential))),
                List.of(new TenantConfig(TENANT, "acme", 200, 5000L, null)),
                List.of(new VolumeConfig(VOLUME, TENANT, "db", 4096,
                        new EffectivePolicy(300, 10L, 100L, 200L, null, null, new EffectiveCostModel(512))))));

        assertThat(config.tasks()).extracting(SchedulerConfig.TaskSpec::name).containsExactly("foreground", "flush");
        assertThat(config.tasks().get(1).dynamic().curve()).isEqualTo(SchedulerConfig.Curve.EXPONENTIAL);
        assertThat(config.tenants()).containsExactly(new TenantSpec(TENANT.toString(), 200, 5000, 0, 0, 0));
        VolumeSpec v = config.volumes().get(0);
        assertThat(v).isEqualTo(new VolumeSpec(VOLUME.toString(), TENANT.toString(), 300, 10, 100, 200, 0, 0,
                io.weir.scheduler.CostModel.linear(IoCost.DEFAULT_READ_PER_IO_BYTES, IoCost.DEFAULT_WRITE_PER_IO_BYTES, 512),
                SchedulerConfig.DEFAULT_QUEUE_CAPACITY));
    }

    @Test
    void theNodesCostOfARequestIsAddedToEveryVolumesBytesAboveItsPolicysFloor() {
        EffectivePolicy floor512 = new EffectivePolicy(100, null, null, null, null, null, new EffectiveCostModel(512));
        SchedulerConfig config = ConfigTranslator.translate(new DesiredConfig(NODE, 3, List.of(),
                List.of(new TenantConfig(TENANT, "acme", 100, null, null)),
                List.of(new VolumeConfig(VOLUME, TENANT, "db", 4096, floor512),
                        new VolumeConfig(UUID.randomUUID(), TENANT, "logs", 4096, floor512)),
                10, null, new IoCost(1000, 20_000)));

        io.weir.scheduler.CostModel model = config.volumes().get(0).costModel();
        assertThat(model.cost(IoKind.READ, 4096)).isEqualTo(5096);
        assertThat(model.cost(IoKind.WRITE, 4096)).isEqualTo(24_096);
        assertThat(model.cost(IoKind.READ, 0)).as("the policy's floor").isEqualTo(1000);
        assertThat(config.volumes().get(1).costModel()).as("one instance per floor").isSameAs(model);
    }

    @Test
    void anEmptySnapshotGivesTheLoneForegroundTask() {
        SchedulerConfig config = ConfigTranslator.translate(new DesiredConfig(NODE, 0, List.of(), List.of(), List.of()));
        assertThat(config.tasks()).extracting(SchedulerConfig.TaskSpec::name).containsExactly(SchedulerConfig.FOREGROUND);
        assertThat(config.volumes()).isEmpty();
    }

    @Test
    void aSnapshotBreakingTheContractIsRefusedNamingTheVolume() {
        DesiredConfig burstEqualToMax = new DesiredConfig(NODE, 3, List.of(),
                List.of(new TenantConfig(TENANT, "acme", 100, null, null)),
                List.of(new VolumeConfig(VOLUME, TENANT, "db", 4096,
                        new EffectivePolicy(100, null, 100L, 100L, null, null, new EffectiveCostModel(4096)))));
        assertThatThrownBy(() -> ConfigTranslator.translate(burstEqualToMax))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(VOLUME.toString())
                .hasMessageContaining("burstIops (100) must be greater than maxIops (100)");
    }

    @Test
    void aTenantLimitBelowItsReservationsIsRefused() {
        DesiredConfig config = new DesiredConfig(NODE, 3, List.of(),
                List.of(new TenantConfig(TENANT, "acme", 100, 100L, null)),
                List.of(new VolumeConfig(VOLUME, TENANT, "a", 4096,
                                new EffectivePolicy(100, 60L, null, null, null, null, new EffectiveCostModel(4096))),
                        new VolumeConfig(UUID.randomUUID(), TENANT, "b", 4096,
                                new EffectivePolicy(100, 60L, null, null, null, null, new EffectiveCostModel(4096)))));
        assertThatThrownBy(() -> ConfigTranslator.translate(config))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is below the sum of its volumes' minIops (120)");
    }
}
