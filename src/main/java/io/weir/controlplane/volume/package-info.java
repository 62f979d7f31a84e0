/**
 * Volumes: the flows of the foreground task. A volume belongs to one tenant, takes its QoS from
 * a policy plus optional per-volume overrides, and is placed on at most one data node, which
 * exports it over NBD under the volume's name.
 *
 * <p>Data nodes do not replicate yet: each node a volume were placed on would serve its own,
 * unrelated copy. So a write that would place a volume on a second node answers 409. A volume
 * placed on several nodes by an earlier release keeps that placement (nothing changes it behind
 * its owner's back) and carries a {@code placementWarning} in every answer until a write names
 * one node.
 *
 * <p>Besides its API this feature implements {@link io.weir.controlplane.config.PlacedVolumes}
 * for the desired-config snapshot of a node, and vetoes deletes elsewhere that would orphan a
 * volume: of its tenant ({@code TenantDeleting}), its policy ({@code PolicyDeleting}) and the
 * nodes it is placed on ({@code NodeDeleting}); and policy changes that its overrides no longer
 * fit ({@code PolicyChanging}).
 */
package io.weir.controlplane.volume;
