package io.weir.support;

import io.weir.protocol.EffectiveCostModel;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.TaskShareConfig;
import io.weir.protocol.TenantConfig;
import io.weir.protocol.VolumeConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Builds {@link DesiredConfig}s for tests: tenants, volumes and task shares by name, with stable
 * ids derived from the names (so successive configs name the same volume), revision 1 and the
 * node {@code id("node")} unless set.
 */
public final class TestConfigs {

    private final List<TenantConfig> tenants = new ArrayList<>();
    private final List<VolumeConfig> volumes = new ArrayList<>();
    private final List<TaskShareConfig> tasks = new ArrayList<>();
    private long revision = 1;
    private int usageReportIntervalSeconds;
    private UUID node = id("node");
    private io.weir.protocol.TlsConfig tls;

    public static TestConfigs config() {
        return new TestConfigs();
    }

    /** A stable id derived from a name, so that successive configs name the same volume. */
    public static UUID id(String name) {
        return UUID.nameUUIDFromBytes(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    public TestConfigs tenant(String name) {
        return tenant(name, 100, null, null);
    }

    public TestConfigs tenant(String name, int weight, Long maxIops, Long maxBytesPerSec) {
        tenants.add(new TenantConfig(id("tenant:" + name), name, weight, maxIops, maxBytesPerSec));
        return this;
    }

    public TestConfigs volume(String tenant, String name, long size) {
        return volume(tenant, name, size, 100, null, null);
    }

    public TestConfigs volume(String tenant, String name, long size, int weight, Long minIops, Long maxIops) {
        return volume(volumeId(tenant, name), tenant, name, size, weight, minIops, maxIops);
    }

    /** A volume with the id {@code volumeId} instead of one derived from its name. */
    public TestConfigs volume(UUID volumeId, String tenant, String name, long size, int weight, Long minIops,
            Long maxIops) {
        volumes.add(new VolumeConfig(volumeId, id("tenant:" + tenant), name, size,
                new EffectivePolicy(weight, minIops, maxIops, null, null, null, new EffectiveCostModel(4096))));
        return this;
    }

    /** Makes the volume added last a replicated one. */
    public TestConfigs replicated(io.weir.protocol.ReplicationConfig replication) {
        VolumeConfig v = volumes.remove(volumes.size() - 1);
        volumes.add(new VolumeConfig(v.id(), v.tenantId(), v.name(), v.sizeBytes(), v.effectivePolicy(), replication));
        return this;
    }

    public TestConfigs task(String name, int share) {
        return task(name, share, null);
    }

    /** A task share that follows a utilization signal ({@code dynamic}, null for a fixed share). */
    public TestConfigs task(String name, int share, TaskShareConfig.DynamicShare dynamic) {
        tasks.add(new TaskShareConfig(name, share, dynamic));
        return this;
    }

    /** The cluster PKI the node enforces on NBD clients. */
    public TestConfigs tls(io.weir.protocol.TlsConfig tls) {
        this.tls = tls;
        return this;
    }

    /** The node the config is for. */
    public TestConfigs node(UUID id) {
        this.node = id;
        return this;
    }

    public TestConfigs revision(long r) {
        this.revision = r;
        return this;
    }

    /** The node's usage reporting interval (0: the default). */
    public TestConfigs usageReportIntervalSeconds(int seconds) {
        this.usageReportIntervalSeconds = seconds;
        return this;
    }

    public static UUID volumeId(String tenant, String name) {
        return id("volume:" + tenant + "/" + name);
    }

    public DesiredConfig build() {
        return new DesiredConfig(node, revision, tasks, tenants, volumes, usageReportIntervalSeconds, tls);
    }
}
