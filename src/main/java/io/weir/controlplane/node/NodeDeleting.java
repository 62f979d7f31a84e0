package io.weir.controlplane.node;

import java.util.UUID;

/**
 * Published inside the transaction that is about to delete a data node. A listener that knows of
 * something still using the node (volumes placed on it) vetoes the delete by throwing.
 */
public record NodeDeleting(UUID nodeId, String nodeName) {
}
