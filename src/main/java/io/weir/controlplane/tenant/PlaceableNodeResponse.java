package io.weir.controlplane.tenant;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.node.Node;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * A data node as a tenant's callers see it: what they need to place volumes on it and reach its
 * exports, and nothing of its status (which would tell about other tenants' volumes).
 */
@Schema(name = "PlaceableNode", description = "A data node this tenant's volumes may be placed on.")
public record PlaceableNodeResponse(
        UUID id,
        String name,
        @Schema(description = "host:port where the node serves clients; null if not given.") @Nullable String address,
        SortedMap<String, String> labels) {

    static PlaceableNodeResponse from(Node node) {
        return new PlaceableNodeResponse(node.getId(), node.getName(), node.getAddress(), new TreeMap<>(node.getLabels()));
    }
}
