package io.weir.controlplane.usage;

import java.util.UUID;

/** Whether a tenant exists: a port owned here and implemented by the tenant feature. */
public interface UsageTenants {

    boolean tenantExists(UUID tenantId);
}
