package io.weir.controlplane.volume;

import io.weir.controlplane.usage.UsageVolumes;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Volumes and their placement for the usage feature. Plain SQL on this feature's tables: usage
 * asks for up to tens of thousands of volumes per ingest batch, and needs three columns of each.
 */
@Component
public class VolumeUsageDirectory implements UsageVolumes {

    private final JdbcTemplate jdbc;

    /** Public so that the usage ingest benchmark runs the same SQL outside a Spring context. */
    public VolumeUsageDirectory(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public Map<UUID, VolumeInfo> volumes(Collection<UUID> ids) {
        Map<UUID, VolumeInfo> found = new HashMap<>();
        jdbc.query("SELECT id, tenant_id, name FROM volume WHERE id = ANY(?)", rs -> {
            UUID id = rs.getObject(1, UUID.class);
            found.put(id, new VolumeInfo(id, rs.getObject(2, UUID.class), rs.getString(3)));
        }, (Object) ids.toArray(UUID[]::new));
        return found;
    }

    @Override
    public Map<UUID, Set<UUID>> nodesOfVolumes(Collection<UUID> volumeIds) {
        Map<UUID, Set<UUID>> placed = new HashMap<>();
        jdbc.query("SELECT volume_id, node_id FROM volume_placement WHERE volume_id = ANY(?)", rs -> {
            placed.computeIfAbsent(rs.getObject(1, UUID.class), k -> new HashSet<>()).add(rs.getObject(2, UUID.class));
        }, (Object) volumeIds.toArray(UUID[]::new));
        return placed;
    }

    @Override
    public List<UUID> nodesOfVolume(UUID volumeId) {
        return jdbc.queryForList("SELECT node_id FROM volume_placement WHERE volume_id = ?", UUID.class, volumeId);
    }

    @Override
    public List<UUID> nodesOfTenant(UUID tenantId) {
        return jdbc.queryForList("SELECT DISTINCT p.node_id FROM volume_placement p JOIN volume v ON v.id = p.volume_id "
                + "WHERE v.tenant_id = ?", UUID.class, tenantId);
    }
}
