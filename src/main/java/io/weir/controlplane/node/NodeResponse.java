package io.weir.controlplane.node;

import org.jspecify.annotations.Nullable;

import io.weir.controlplane.web.Versioned;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;

/**
 * A data node as the API shows it. Labels are in key order. The create response also carries
 * the node's secret {@code token}, shown that once; every other response leaves it out.
 */
@Schema(name = "Node", description = "A data node: a storage server whose agent enforces the desired config.")
public record NodeResponse(
        UUID id,
        String name,
        @Schema(description = "host:port where the node serves clients; null if not given.") @Nullable String address,
        @Schema(description = "Labels for selecting nodes.") SortedMap<String, String> labels,
        NodeStatus status,
        @Schema(description = "Optimistic-lock version; the ETag is it and a digest of the representation (\"3.9f2c41d0\"), and If-Match compares the version.") long version,
        Instant createdAt,
        Instant updatedAt,
        @Schema(description = "The node's bearer token for the agent channel and its desired config. "
                + "Only in the create response: store it now, it cannot be read again.")
        @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable String token) implements Versioned {

    static NodeResponse from(Node node, NodeStatus status) {
        return new NodeResponse(node.getId(), node.getName(), node.getAddress(),
                new TreeMap<>(node.getLabels()), status, node.getVersion(),
                node.getCreatedAt(), node.getUpdatedAt(), null);
    }

    /** This response with the node's token, for the create response only. */
    NodeResponse withToken(String secret) {
        return new NodeResponse(id, name, address, labels, status, version, createdAt, updatedAt, secret);
    }

    @Override
    public String toString() {
        return "NodeResponse[id=" + id + ", name=" + name + (token == null ? "" : ", token=<redacted>") + "]";
    }
}
