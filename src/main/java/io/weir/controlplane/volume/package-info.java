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
 * <p>A volume's {@code effectivePolicy} is its policy's terms with its overrides in place, member
 * by member (absolute numbers, per-GiB rates, floors and capacity basis alike), resolved at its
 * capacity ({@link io.weir.protocol.CapacityQos}): its size, or with basis {@code used} the used
 * bytes in force, which {@code VolumeUsedSpace} moves only when a node's report is past the
 * hysteresis (the smaller of 1 GiB and 5% of the size). A resize, a policy change or such a
 * used-space change of a placed volume bumps the config revision, so the nodes get the new
 * numbers through the push channel. Each volume keeps {@code reserved_iops}, its minIops at its
 * size (the most a scaled reservation can reach), against which {@code TenantReservations}
 * checks its tenant's limit per node. It implements {@link io.weir.controlplane.usage.UsedSpaceListener}
 * and {@link io.weir.controlplane.tenant.TenantCapacity} (the sums a tenant's per-GiB limits scale with).
 *
 * <p>Besides its API this feature implements {@link io.weir.controlplane.config.PlacedVolumes}
 * for the desired-config snapshot of a node, and vetoes deletes elsewhere that would orphan a
 * volume: of its tenant ({@code TenantDeleting}), its policy ({@code PolicyDeleting}) and the
 * nodes it is placed on ({@code NodeDeleting}); and policy changes that its overrides no longer
 * fit ({@code PolicyChanging}).
 */
package io.weir.controlplane.volume;
