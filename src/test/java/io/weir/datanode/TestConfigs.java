package io.weir.datanode;

import io.weir.protocol.EffectiveCostModel;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.TaskShareConfig;
import io.weir.protocol.TenantConfig;
import io.weir.protocol.VolumeConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** Builds {@link DesiredConfig}s for data node tests: tenants, volumes and task shares by name. */
final class TestConfigs {

    private final List<TenantConfig> tenants = new ArrayList<>();
    private final List<VolumeConfig> volumes = new ArrayList<>();
    private final List<TaskShareConfig> tasks = new ArrayList<>();
    private long revision = 1;

    static TestConfigs config() {
        return new TestConfigs();
    }

    /** A stable id derived from a name, so that successive configs name the same volume. */
    static UUID id(String name) {
        return UUID.nameUUIDFromBytes(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    TestConfigs tenant(String name) {
        return tenant(name, 100, null, null);
    }

    TestConfigs tenant(String name, int weight, Long maxIops, Long maxBytesPerSec) {
        tenants.add(new TenantConfig(id("tenant:" + name), name, weight, maxIops, maxBytesPerSec));
        return this;
    }

    TestConfigs volume(String tenant, String name, long size) {
        return volume(tenant, name, size, 100, null, null);
    }

    TestConfigs volume(String tenant, String name, long size, int weight, Long minIops, Long maxIops) {
        volumes.add(new VolumeConfig(volumeId(tenant, name), id("tenant:" + tenant), name, size,
                new EffectivePolicy(weight, minIops, maxIops, null, null, null, new EffectiveCostModel(4096))));
        return this;
    }

    TestConfigs task(String name, int share) {
        tasks.add(new TaskShareConfig(name, share, null));
        return this;
    }

    TestConfigs revision(long r) {
        this.revision = r;
        return this;
    }

    static UUID volumeId(String tenant, String name) {
        return id("volume:" + tenant + "/" + name);
    }

    DesiredConfig build() {
        return new DesiredConfig(id("node"), revision, tasks, tenants, volumes);
    }
}
