/**
 * The control plane's side of the agent channel: the WebSocket {@code GET /api/v1/agent/connect}
 * through which each data node's agent receives its desired config and reports back.
 *
 * <ul>
 *   <li>{@link io.weir.controlplane.push.AgentChannel}: the endpoint and the conversation of
 *       {@code io.weir.protocol.AgentMessage} (hello, config, ack, nack, status, usage,
 *       certificateRequest, error); a session lives only as long as the token that opened it. The
 *       used bytes of a status go to the usage feature's {@code UsedSpaceHistory}; its
 *       replication address to the node feature's {@code NodeService.recordReplicationAddress},
 *       and its replicated volumes' copy states to the volume feature's
 *       {@code ReplicationIntake}.</li>
 *   <li>{@link io.weir.controlplane.push.UsageIntake}: takes the agents' usage reports off the
 *       WebSocket threads into one bounded queue per node (a node's share of the slots is
 *       bounded, and a full intake sheds the node holding the most, never one within its share),
 *       drains them round robin in batches through the usage feature's
 *       {@code UsageIngest.ingestPlaced}, and answers each with {@code usageAck} after the commit.
 *       A report the database refuses is set aside once and answered as refused, without
 *       failing the others of its batch; when the database itself fails, it closes the
 *       connections concerned so that their agents resend.</li>
 *   <li>{@link io.weir.controlplane.push.FrameBudget}: what all sessions of this replica may hold
 *       of unfinished frames together.</li>
 *   <li>{@link io.weir.controlplane.push.ReceivePacer}: how fast each node's frames are read,
 *       a token bucket per node; past it the session stops reading for a while, so a flooding
 *       node is slowed by TCP instead of being closed, and costs the others little.</li>
 *   <li>{@link io.weir.controlplane.push.AgentHandshakeHandler}: the upgrade, whose refusals are
 *       problem+json.</li>
 *   <li>{@link io.weir.controlplane.push.AnswerRecorder}: stores the agents' acks and nacks on
 *       their nodes off the WebSocket threads, folding each node's answers into one and writing
 *       many nodes per statement through the node feature's {@code NodeService.recordAnswers};
 *       a failed write is kept and tried again.</li>
 *   <li>{@link io.weir.controlplane.push.AgentSession}: one connection's bounded outbound queue,
 *       where a newer snapshot replaces an unsent older one, sent asynchronously so that a slow
 *       agent never holds up others.</li>
 *   <li>{@link io.weir.controlplane.push.RevisionWatcher}: learns of committed changes from any
 *       replica through {@code LISTEN/NOTIFY} on its own unpooled connection, with a periodic poll
 *       of the revision as the source of truth, and re-offers each connected node its snapshot;
 *       on the same connection it hears of revoked tokens, whose sessions the channel closes.</li>
 *   <li>{@link io.weir.controlplane.push.AgentRegistry}: the shared state in PostgreSQL (which
 *       replica holds which node's connection, replica heartbeats, the data nodes' last status
 *       reports), whose connection rows each heartbeat puts back in line with the replica's
 *       sessions; it implements the node feature's {@code NodeConnections} port.</li>
 *   <li>{@link io.weir.controlplane.push.PushMetrics}: the bounded Prometheus metrics (connected
 *       nodes, nodes behind, push lag and latency, usage reports received, acknowledged and
 *       refused, the intake queue, answers waiting to be stored).</li>
 * </ul>
 *
 * <p>Depends on the node feature (status recording, the port it implements), the config feature
 * (snapshots), the usage feature (storing reports), the volume feature (replication reports), the pki feature (signing data nodes' server
 * certificates) and security (the caller, and
 * {@code BearerTokens} to learn whether a session's token still stands); none of them depends on
 * this package.
 */
package io.weir.controlplane.push;
