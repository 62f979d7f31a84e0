package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
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
@JsonClassDescription("Everything one data node must enforce, as a full snapshot stamped with the global config revision. Pushed to the node's agent as is.")
public record DesiredConfig(
        @JsonPropertyDescription("The node this snapshot is for.") UUID nodeId,
        @JsonPropertyDescription("The global config revision the snapshot reflects.") long revision,
        @JsonPropertyDescription("Task CPU shares: the node's override if it has one, else the cluster default.") List<TaskShareConfig> tasks,
        @JsonPropertyDescription("The tenants with at least one volume on this node.") List<TenantConfig> tenants,
        @JsonPropertyDescription("The volumes placed on this node, each with its effective policy.") List<VolumeConfig> volumes) {

    public DesiredConfig {
        tasks = List.copyOf(tasks);
        tenants = List.copyOf(tenants);
        volumes = List.copyOf(volumes);
    }
}
