/**
 * Tenants: groups of volumes sharing a weight and aggregate limits, the unit of isolation between
 * the cluster's customers.
 *
 * <p>A tenant's name, weight and limits travel in the desired config of every node that serves one
 * of its volumes ({@link io.weir.controlplane.tenant.TenantConfigs} implements the config
 * feature's {@link io.weir.controlplane.config.TenantDirectory}); changing them bumps the config
 * revision only while such a volume exists. Only admins change tenants; a tenant-admin or viewer
 * bound to a tenant sees that one only. Other features veto a delete by listening to
 * {@link io.weir.controlplane.tenant.TenantDeleting}.
 */
package io.weir.controlplane.tenant;
