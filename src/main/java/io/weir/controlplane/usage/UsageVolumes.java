package io.weir.controlplane.usage;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * What usage needs to know about volumes and their placement: a port owned here and implemented
 * by the volume feature, so usage depends on no feature package.
 */
public interface UsageVolumes {

    /** A volume's tenant and name. */
    record VolumeInfo(UUID id, UUID tenantId, String name) {
    }

    /** The volumes among {@code ids} that exist, by id, read in one query. */
    Map<UUID, VolumeInfo> volumes(Collection<UUID> ids);

    /** The nodes each of {@code volumeIds} is placed on, read in one query; unplaced and unknown volumes are left out. */
    Map<UUID, Set<UUID>> nodesOfVolumes(Collection<UUID> volumeIds);

    /** The nodes a volume is placed on. */
    List<UUID> nodesOfVolume(UUID volumeId);

    /** The nodes any of a tenant's volumes is placed on. */
    List<UUID> nodesOfTenant(UUID tenantId);
}
