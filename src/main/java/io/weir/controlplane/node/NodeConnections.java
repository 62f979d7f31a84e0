package io.weir.controlplane.node;

import java.util.UUID;

/**
 * Whether a node's agent holds a live push connection to this control plane. The push feature
 * provides the implementation as a bean; until it does, no node counts as connected.
 */
public interface NodeConnections {

    boolean isConnected(UUID nodeId);
}
