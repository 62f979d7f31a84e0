package io.weir.controlplane.node;

import io.weir.controlplane.usage.UsageNodes;
import java.util.UUID;
import org.springframework.stereotype.Component;

/** Node existence for the usage feature. */
@Component
class NodeUsageDirectory implements UsageNodes {

    private final NodeRepository nodes;

    NodeUsageDirectory(NodeRepository nodes) {
        this.nodes = nodes;
    }

    @Override
    public boolean nodeExists(UUID nodeId) {
        return nodes.existsById(nodeId);
    }
}
