/**
 * Volumes: the flows of the foreground task. A volume belongs to one tenant, takes its QoS from
 * a policy plus optional per-volume overrides, and is placed on zero or more data nodes, each of
 * which exports it over NBD under the volume's name.
 *
 * <p>Besides its API this feature implements {@link io.weir.controlplane.config.PlacedVolumes}
 * for the desired-config snapshot of a node, and vetoes deletes elsewhere that would orphan a
 * volume: of its tenant ({@code TenantDeleting}), its policy ({@code PolicyDeleting}) and the
 * nodes it is placed on ({@code NodeDeleting}); and policy changes that its overrides no longer
 * fit ({@code PolicyChanging}).
 */
package io.weir.controlplane.volume;
