package io.weir.controlplane.tenant;

import io.weir.protocol.QosSettings;
import java.util.UUID;

/**
 * Published inside the transaction that is about to change a tenant's limits, with the tenant row
 * locked {@code FOR UPDATE}. A listener that finds the new limits contradicting the tenant's
 * volumes (a {@code maxIops} below the reservations its volumes hold on one node, which that
 * node's scheduler would refuse) vetoes the change by throwing.
 *
 * @param tenantId the tenant being changed
 * @param tenantName its name after the change
 * @param enforced its absolute QoS fields after the change
 * @param reservableIops the IOPS its limit carries in reservations on each node after the change
 *     ({@link Tenant#getReservableIops()}), null for no limit
 */
public record TenantChanging(UUID tenantId, String tenantName, QosSettings enforced, Long reservableIops) {
}
