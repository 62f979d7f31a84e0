package io.weir.controlplane.usage;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.springframework.stereotype.Component;

/**
 * The tenants, volumes and nodes usage refers to, read through the ports this feature owns
 * ({@link UsageVolumes}, {@link UsageTenants}, {@link UsageNodes}), which the volume, tenant and
 * node features implement.
 */
@Component
class UsageDirectory {

    private final UsageVolumes volumes;
    private final UsageTenants tenants;
    private final UsageNodes nodes;

    UsageDirectory(UsageVolumes volumes, UsageTenants tenants, UsageNodes nodes) {
        this.volumes = volumes;
        this.tenants = tenants;
        this.nodes = nodes;
    }

    Map<UUID, UsageVolumes.VolumeInfo> volumes(Collection<UUID> ids) {
        return ids.isEmpty() ? Map.of() : volumes.volumes(ids);
    }

    Optional<UsageVolumes.VolumeInfo> volume(UUID id) {
        return Optional.ofNullable(volumes(List.of(id)).get(id));
    }

    boolean tenantExists(UUID tenantId) {
        return tenants.tenantExists(tenantId);
    }

    boolean nodeExists(UUID nodeId) {
        return nodes.nodeExists(nodeId);
    }

    Map<UUID, Set<UUID>> nodesOfVolumes(Collection<UUID> volumeIds) {
        return volumeIds.isEmpty() ? Map.of() : volumes.nodesOfVolumes(volumeIds);
    }

    List<UUID> nodesOfVolume(UUID volumeId) {
        return volumes.nodesOfVolume(volumeId);
    }

    List<UUID> nodesOfTenant(UUID tenantId) {
        return volumes.nodesOfTenant(tenantId);
    }
}
