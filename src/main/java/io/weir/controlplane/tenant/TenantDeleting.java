package io.weir.controlplane.tenant;

import java.util.UUID;

/**
 * Published inside the transaction that is about to delete a tenant. A listener that knows of
 * something still using the tenant (volumes) vetoes the delete by throwing.
 */
public record TenantDeleting(UUID tenantId, String tenantName) {
}
