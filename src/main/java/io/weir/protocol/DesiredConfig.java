package io.weir.protocol;

import java.util.List;
import java.util.UUID;

/**
 * Everything one data node must enforce, as a full snapshot stamped with the global config
 * revision. The control plane serves it at {@code GET /api/v1/nodes/{nodeId}/desired-config}
 * and pushes exactly this object to the node's agent; the agent applies it atomically.
 *
 * @param nodeId the node this snapshot is for
 * @param revision the global config revision the snapshot reflects
 * @param tasks task CPU shares (the node's override if it has one, else the cluster default)
 * @param tenants the tenants that have at least one volume on this node
 * @param volumes the volumes placed on this node, each with its effective policy
 */
public record DesiredConfig(
        UUID nodeId,
        long revision,
        List<TaskShareConfig> tasks,
        List<TenantConfig> tenants,
        List<VolumeConfig> volumes) {

    public DesiredConfig {
        tasks = List.copyOf(tasks);
        tenants = List.copyOf(tenants);
        volumes = List.copyOf(volumes);
    }
}
