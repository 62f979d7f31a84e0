package io.weir.controlplane.node;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;

/**
 * A data node as the API shows it. Labels are in key order. (The create response will also carry
 * the node's secret {@code token}, shown once, when node authentication arrives.)
 */
@Schema(name = "Node", description = "A data node: a storage server whose agent enforces the desired config.")
public record NodeResponse(
        UUID id,
        String name,
        @Schema(description = "host:port where the node serves clients; null if not given.") String address,
        @Schema(description = "Labels for selecting nodes.") SortedMap<String, String> labels,
        NodeStatus status,
        @Schema(description = "Optimistic-lock version; also sent as the ETag.") long version,
        Instant createdAt,
        Instant updatedAt) {

    static NodeResponse from(DataNode node, NodeStatus status) {
        return new NodeResponse(node.getId(), node.getName(), node.getAddress(),
                new TreeMap<>(node.getLabels()), status, node.getVersion(),
                node.getCreatedAt(), node.getUpdatedAt());
    }
}
