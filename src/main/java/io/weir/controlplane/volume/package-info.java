/**
 * Volumes: the flows of the foreground task. A volume belongs to one tenant, takes its QoS from
 * a policy plus optional per-volume overrides, and keeps 1 to 3 copies ({@code replicas}), one on
 * each data node of its placement; its primary exports it over NBD under the volume's name.
 *
 * <p>Replication ({@link io.weir.protocol.ReplicationConfig} says what the nodes do with it): the
 * primary is the first node of a new placement, or of the nodes {@code VolumeService} chooses
 * when a request names only {@code replicas} (the tenant's nodes holding the fewest volumes).
 * Copies added later start out of sync; removing the primary of a replicated volume is refused.
 * Per-copy state lives in {@code volume_placement} and is written with SQL ({@code VolumeCopies}).
 * {@link io.weir.controlplane.volume.ReplicationIntake} takes the primaries' reports (from the
 * push feature), and {@link io.weir.controlplane.volume.ReplicationFailover} promotes an in-sync,
 * connected copy when a primary's agent is gone longer than the lease (asking the node feature's
 * {@link io.weir.controlplane.node.NodeConnections}, through {@code NodeService}, which agents are
 * connected); both follow the lock order of {@link io.weir.controlplane.config.ConfigRevisions}.
 * The API shows each volume's {@code copies}, {@code primaryNodeId}, {@code epoch},
 * {@code degraded} and {@code primaryAddress}; the metrics {@code weir_volumes_degraded} and
 * {@code weir_replication_failovers_total} sum them up. A volume placed on several nodes by an
 * earlier release, which did not replicate, keeps one copy and no primary, carries a
 * {@code placementWarning} in every answer, and is never converted: a write may keep or reduce
 * its placement, or name one node, but not add a node or ask for more copies (409).
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
 * for the desired-config snapshot of a node (with each replicated volume's copies and their nodes'
 * replication addresses, from {@code NodeService}), and vetoes deletes elsewhere that would orphan a
 * volume: of its tenant ({@code TenantDeleting}), its policy ({@code PolicyDeleting}) and the
 * nodes it is placed on ({@code NodeDeleting}); and policy changes that its overrides no longer
 * fit ({@code PolicyChanging}).
 */
package io.weir.controlplane.volume;
