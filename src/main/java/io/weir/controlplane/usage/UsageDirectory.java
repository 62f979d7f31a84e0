package io.weir.controlplane.usage;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * What usage needs to know about tenants, volumes and nodes: the port this feature owns, so it
 * depends on no other feature package ({@link JdbcUsageDirectory} reads their tables).
 */
interface UsageDirectory {

    /** A volume's tenant and name. */
    record VolumeInfo(UUID id, UUID tenantId, String name) {
    }

    /** The volumes among {@code ids} that exist, by id. */
    Map<UUID, VolumeInfo> volumes(Collection<UUID> ids);

    /** One volume, if it exists. */
    default Optional<VolumeInfo> volume(UUID id) {
        return Optional.ofNullable(volumes(List.of(id)).get(id));
    }

    /** Whether the tenant exists. */
    boolean tenantExists(UUID tenantId);

    /** Whether the data node exists. */
    boolean nodeExists(UUID nodeId);

    /** The nodes a volume is placed on. */
    List<UUID> nodesOfVolume(UUID volumeId);

    /** The nodes any of a tenant's volumes is placed on. */
    List<UUID> nodesOfTenant(UUID tenantId);
}
