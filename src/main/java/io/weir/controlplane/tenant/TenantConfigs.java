package io.weir.controlplane.tenant;

import io.weir.controlplane.config.TenantDirectory;
import io.weir.protocol.TenantConfig;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** The tenants of a desired-config snapshot, in one query. */
@Component
class TenantConfigs implements TenantDirectory {

    private final TenantRepository tenants;

    TenantConfigs(TenantRepository tenants) {
        this.tenants = tenants;
    }

    @Override
    @Transactional(readOnly = true)
    public List<TenantConfig> tenants(Collection<UUID> ids) {
        if (ids.isEmpty()) {
            return List.of();
        }
        return tenants.findByIdInOrderByNameAsc(ids).stream()
                .map(t -> new TenantConfig(t.getId(), t.getName(), t.getWeight(), t.getMaxIops(), t.getMaxBytesPerSec()))
                .toList();
    }
}
