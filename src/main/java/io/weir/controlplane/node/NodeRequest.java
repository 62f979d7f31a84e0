package io.weir.controlplane.node;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.ResourceName;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.util.Map;
import java.util.TreeMap;

/**
 * The writable fields of a data node: the body of create, and what a merge patch is applied to.
 * A merge patch edits labels key by key: {@code {"labels":{"zone":null,"rack":"r7"}}} removes
 * {@code zone} and sets {@code rack}, leaving the other labels as they were.
 */
@Schema(name = "NodeRequest", description = "A data node's writable fields.")
public record NodeRequest(
        @Schema(description = "Unique name, 1-63 characters of [a-z0-9-].", example = "node-1", requiredMode = Schema.RequiredMode.REQUIRED)
        @ResourceName String name,
        @Schema(description = "Where the node serves clients, as host:port (IPv6 in brackets); optional.", example = "10.0.0.11:10809")
        @Size(max = 255) @Pattern(regexp = ADDRESS_PATTERN, message = "must be host:port with a port from 1 to 65535") String address,
        @Schema(description = "Labels for selecting nodes. Keys: 1-63 characters of [a-zA-Z0-9._/-]; values: at most 255 characters.",
                example = "{\"zone\":\"eu-1a\",\"disk\":\"nvme\"}")
        @NodeLabels Map<String, String> labels) {

    /** host:port, loosely: a host name or IPv4 address, or an IPv6 address in brackets, and a port 1-65535. */
    static final String ADDRESS_PATTERN = "^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)"
            + ":([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$";

    static NodeRequest from(Node node) {
        return new NodeRequest(node.getName(), node.getAddress(), new TreeMap<>(node.getLabels()));
    }

    Map<String, String> labelsOrEmpty() {
        return labels == null ? Map.of() : labels;
    }
}
