/**
 * Tenants: groups of volumes sharing a weight and aggregate limits, the unit of isolation between
 * the cluster's customers.
 *
 * <p>A tenant's name, weight and limits travel in the desired config of every node that serves one
 * of its volumes ({@link io.weir.controlplane.tenant.TenantConfigs} implements the config
 * feature's {@link io.weir.controlplane.config.TenantDirectory}); changing them bumps the config
 * revision only while such a volume exists. Only admins change tenants; a tenant-admin or viewer
 * bound to a tenant sees that one only. Other features veto a delete, or remove what depends on
 * the tenant (its tokens, each removal audited), by listening to
 * {@link io.weir.controlplane.tenant.TenantDeleting}.
 *
 * <p>A tenant's limits may scale with the sum of its volumes ({@code maxIopsPerGiB},
 * {@code maxBytesPerSecPerGiB}, their floors and caps, {@code capacityBasis}; the formula is
 * {@link io.weir.protocol.CapacityQos}'s), read through {@link io.weir.controlplane.tenant.TenantCapacity}
 * (implemented by the volume feature); {@code effectiveLimits} shows the numbers in force. Such a
 * limit carries reservations up to its floor ({@link io.weir.controlplane.tenant.Tenant#getReservableIops()}),
 * the least it can become.
 *
 * <p>A tenant's node selector (labels, admin-managed) names the data nodes its tenant-admins may
 * place volumes on; {@code GET /tenants/{id}/nodes} lists them
 * ({@link io.weir.controlplane.tenant.PlaceableNodeResponse}, without node status), and the
 * volume feature enforces it. It is not part of any node's desired config and bumps nothing.
 */
package io.weir.controlplane.tenant;
