package io.weir.controlplane.tenant;

import io.weir.controlplane.config.TenantDirectory;
import io.weir.protocol.CapacityQos;
import io.weir.protocol.QosSettings;
import io.weir.protocol.TenantConfig;
import java.util.Map;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** The tenants of a desired-config snapshot, in one query. */
@Component
class TenantConfigs implements TenantDirectory {

    private final TenantRepository tenants;
    private final TenantCapacity capacity;

    TenantConfigs(TenantRepository tenants, TenantCapacity capacity) {
        this.tenants = tenants;
        this.capacity = capacity;
    }

    @Override
    @Transactional(readOnly = true)
    public List<TenantConfig> tenants(Collection<UUID> ids) {
        if (ids.isEmpty()) {
            return List.of();
        }
        List<Tenant> found = tenants.findByIdInOrderByNameAsc(ids);
        Map<UUID, TenantCapacity.Capacity> capacities = found.stream().anyMatch(t -> t.terms().scales())
                ? capacity.capacities(ids) : Map.of();
        return found.stream().map(t -> config(t, capacities.getOrDefault(t.getId(), TenantCapacity.Capacity.NONE)))
                .toList();
    }

    /** The tenant as nodes enforce it: its limits resolved at the capacity of its volumes. */
    static TenantConfig config(Tenant t, TenantCapacity.Capacity c) {
        CapacityQos terms = t.terms();
        QosSettings s = terms.resolve(c.of(terms.basis())).settings();
        return new TenantConfig(t.getId(), t.getName(), t.getWeight(), s.maxIops(), s.maxBytesPerSec());
    }
}
