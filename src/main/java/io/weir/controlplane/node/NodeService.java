package io.weir.controlplane.node;

import io.weir.controlplane.web.ApiException;
import java.util.UUID;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Data nodes. */
@Service
public class NodeService {

    private final DataNodeRepository nodes;

    NodeService(DataNodeRepository nodes) {
        this.nodes = nodes;
    }

    /** The node with this id, or 404. */
    @Transactional(readOnly = true)
    public DataNode require(UUID id) {
        return nodes.findById(id).orElseThrow(() -> ApiException.notFound("Node", id));
    }
}
