package io.weir.controlplane.volume;

import static io.weir.controlplane.database.SqlSums.sum;

import io.weir.controlplane.tenant.TenantCapacity;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/** The capacity of tenants' volumes, for their per-GiB terms: one query for many tenants. */
@Component
class VolumeTenantCapacity implements TenantCapacity {

    private final JdbcClient jdbc;

    VolumeTenantCapacity(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public Map<UUID, Capacity> capacities(Collection<UUID> tenantIds) {
        Map<UUID, Capacity> result = new HashMap<>();
        if (tenantIds.isEmpty()) {
            return result;
        }
        // saturated sums: sizes whose sum passes a bigint (each valid alone) scale a per-GiB limit
        // to its cap instead of failing every read
        jdbc.sql("SELECT tenant_id, " + sum("size_bytes") + ", " + sum("least(used_bytes_in_force, size_bytes)") + " FROM volume"
                        + " WHERE tenant_id = ANY(:ids::uuid[]) GROUP BY tenant_id")
                .param("ids", tenantIds.toArray(UUID[]::new))
                .query(rs -> {
                    result.put(rs.getObject(1, UUID.class), new Capacity(rs.getLong(2), rs.getLong(3)));
                });
        return result;
    }
}
