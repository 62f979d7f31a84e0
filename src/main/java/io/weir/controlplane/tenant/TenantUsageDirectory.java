package io.weir.controlplane.tenant;

import io.weir.controlplane.usage.UsageTenants;
import java.util.UUID;
import org.springframework.stereotype.Component;

/** Tenant existence for the usage feature. */
@Component
class TenantUsageDirectory implements UsageTenants {

    private final TenantRepository tenants;

    TenantUsageDirectory(TenantRepository tenants) {
        this.tenants = tenants;
    }

    @Override
    public boolean tenantExists(UUID tenantId) {
        return tenants.existsById(tenantId);
    }
}
