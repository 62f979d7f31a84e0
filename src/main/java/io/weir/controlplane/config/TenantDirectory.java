package io.weir.controlplane.config;

import io.weir.protocol.TenantConfig;
import java.util.Collection;
import java.util.List;
import java.util.UUID;

/** The tenants as nodes enforce them, for desired-config snapshots. Implemented by the tenant feature. */
public interface TenantDirectory {

    /** The tenants with these ids, read in one query, sorted by name; ids without a tenant are left out. */
    List<TenantConfig> tenants(Collection<UUID> ids);
}
