package io.weir.controlplane.usage;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/** {@link UsageDirectory} over the tenant, volume and node tables (read only). */
@Component
class JdbcUsageDirectory implements UsageDirectory {

    private final JdbcTemplate jdbc;

    JdbcUsageDirectory(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public Map<UUID, VolumeInfo> volumes(Collection<UUID> ids) {
        Map<UUID, VolumeInfo> found = new HashMap<>();
        if (ids.isEmpty()) {
            return found;
        }
        jdbc.query("SELECT id, tenant_id, name FROM volume WHERE id = ANY(?)", rs -> {
            UUID id = rs.getObject(1, UUID.class);
            found.put(id, new VolumeInfo(id, rs.getObject(2, UUID.class), rs.getString(3)));
        }, (Object) ids.toArray(UUID[]::new));
        return found;
    }

    @Override
    public boolean tenantExists(UUID tenantId) {
        return Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM tenant WHERE id = ?)",
                Boolean.class, tenantId));
    }

    @Override
    public boolean nodeExists(UUID nodeId) {
        return Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM data_node WHERE id = ?)",
                Boolean.class, nodeId));
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
