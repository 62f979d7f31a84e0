/**
 * Data nodes: the storage servers whose embedded agents enforce the desired config.
 *
 * <p>A node has a unique name, an optional {@code host:port} address and free-form labels
 * (selectable with {@code GET /nodes?label=key=value}), plus a status: whether its agent is
 * connected and to which replica, and what its data node last reported
 * ({@link io.weir.controlplane.node.NodeConnections}, a port the push feature implements), the
 * node's own desired revision (from {@code config}) and what the agent last applied or rejected
 * ({@link io.weir.controlplane.node.AgentAnswer}, which the push feature stores many at a time
 * through {@code NodeService.recordAnswers}; answers are ordered by the times they arrived, so a
 * replica's late write cannot set a status back). It also keeps the replication listener address
 * each data node reports ({@code NodeService.recordReplicationAddress}, which the push feature
 * calls; a change bumps the config revision, since replicated volumes' configs list it, and
 * {@code NodeService.replicationAddresses} reads it for them). Neither a node's
 * own fields nor its create or delete bump the config revision; see
 * {@link io.weir.controlplane.node.NodeService}. Other features veto a delete by listening to
 * {@link io.weir.controlplane.node.NodeDeleting}. A node's token is issued with it through
 * {@link io.weir.controlplane.node.NodeCredentials}, a port the token feature implements.
 */
package io.weir.controlplane.node;
