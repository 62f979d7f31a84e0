package io.weir.controlplane.push;

import io.weir.controlplane.config.DesiredConfigService;
import io.weir.controlplane.node.NodeService;
import io.weir.controlplane.pki.NodeCertificates;
import io.weir.controlplane.security.BearerTokens;
import io.weir.controlplane.usage.UsedSpaceHistory;
import io.weir.controlplane.volume.ReplicationIntake;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.ProtocolException;
import io.weir.protocol.UsageReport;
import io.weir.protocol.VolumeConfig;
import io.weir.protocol.WireText;
import jakarta.websocket.Session;
import java.time.Clock;
import java.io.IOException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.web.socket.CloseStatus;
import org.springframework.web.socket.TextMessage;
import org.springframework.web.socket.WebSocketSession;
import org.springframework.web.socket.adapter.NativeWebSocketSession;
import org.springframework.web.socket.handler.TextWebSocketHandler;

/**
 * The endpoint {@code GET /api/v1/agent/connect}: one WebSocket per data node's agent, speaking
 * the messages of {@code io.weir.protocol.AgentMessage}.
 *
 * <h2>The conversation</h2>
 * <ol>
 *   <li>The upgrade request is authenticated by the security filter chain before it reaches this
 *       handler: only a node token passes, and its node is the session's node
 *       ({@link AgentHandshake}). A second connection of the same node on this replica replaces
 *       the first, which is closed.</li>
 *   <li>The agent's first message must be {@code hello} naming that node (or none). The node's
 *       snapshot is read and sent unless the agent has exactly it: the same revision and, if the
 *       hello carries one, the same {@code configDigest}. So an agent behind gets it, and so does
 *       one ahead (the database was restored from a backup) or one holding another snapshot of
 *       the same revision (another node's: its token was replaced).</li>
 *   <li>After that, {@link #refresh} (called by the {@link RevisionWatcher} whenever the revision
 *       moves) re-reads each connected node's snapshot and sends it only if its revision (the
 *       node's own, see {@code DesiredConfigService}) moved: a change that does not touch a node
 *       sends it nothing.</li>
 *   <li>{@code ack} and {@code nack} of a revision sent on this session are recorded on the node
 *       ({@code appliedRevision}, {@code lastAckAt}, {@code lastError}) by the
 *       {@link AnswerRecorder}, many nodes per statement; of any other revision they are ignored.
 *       {@code status} is stored as the data node's report; its replication address and its
 *       replicated volumes' copy states go to the node and volume features
 *       ({@link #replication}). {@code certificateRequest} is signed by the cluster CA
 *       ({@code pki.NodeCertificates}) and answered with {@code certificate}.</li>
 *   <li>The session lives as long as the token that opened it: when the token is revoked (also
 *       through the delete of its node) or expires, the session is closed, on whichever replica
 *       it is ({@link #closeRevoked}).</li>
 *   <li>{@code usage} reports go to the {@link UsageIntake}, which stores them off this thread, in
 *       batches, keeping only the volumes placed on the session's node, and answers each with
 *       {@code usageAck} once it is committed (or found stored before, or too old to store).</li>
 *   <li>A frame that is not a message of this protocol version (garbage, unknown type, wrong
 *       version, a duplicate key, a string with a NUL, over {@link AgentMessages#MAX_FRAME_BYTES})
 *       is answered by an {@code error} message and a close whose reason says why, counted, and
 *       logged at WARN in one line. So is a message out of turn.</li>
 *   <li>A usage report whose figures break the protocol's bounds ({@code UsageReport}), or whose
 *       {@code to} is more than {@code UsageReport.MAX_CLOCK_SKEW} ahead of this replica's clock,
 *       is refused alone: a {@code usageAck} with {@code refused}, counted in
 *       {@code weir_push_usage_reports_invalid_total}; the connection stays. How far back a
 *       report may reach is the raw retention: an older one is acknowledged without being
 *       stored. So node-chosen times create partitions only from the retention to five minutes
 *       ahead.</li>
 *   <li>A {@code status} keeps only the exports of volumes placed on the node (and all of its
 *       replication part, which the volume feature filters by its own rules).</li>
 * </ol>
 *
 * <h2>Memory</h2>
 * A frame that arrives in one piece (up to the container's buffer, 16 KiB) is decoded as it is;
 * larger ones are assembled, and what all sessions hold of unfinished frames is bounded by one
 * {@link FrameBudget} per replica: a session that would pass it is closed with 1013 (try again
 * later). A session holds nothing between frames.
 *
 * <h2>Rate</h2>
 * Each node's frames are read at most at {@code weir.push.receive-rate} a second beyond a burst
 * ({@link ReceivePacer}): past it the session stops reading for a while, so a flooding node is
 * slowed by TCP, not closed, and costs the others little.
 *
 * <h2>Threads</h2>
 * Frames arrive on the container's threads, one at a time per session; {@link #refresh} runs on
 * the watcher's thread. Sending never blocks either ({@link AgentSession}).
 */
class AgentChannel extends TextWebSocketHandler {

    private static final Logger log = LoggerFactory.getLogger(AgentChannel.class);

    /** Nodes whose snapshots {@link #refresh} reads together. */
    static final int REFRESH_BATCH = 500;

    /** Session attribute holding the node id, set by {@link AgentHandshake}. */
    static final String NODE_ID = "weir.nodeId";

    /** Session attribute holding the id of the token that opened the session, set by {@link AgentHandshake}. */
    static final String TOKEN_ID = "weir.tokenId";

    /** Certificate requests one session may make. */
    static final int MAX_CERTIFICATE_REQUESTS = 4;

    /** The error code sent before closing the session of a revoked or expired token. */
    static final String REVOKED_CODE = "unauthorized";

    private final Map<UUID, AgentSession> sessions = new ConcurrentHashMap<>();
    private final UsedSpaceHistory usedSpace;
    private final Map<String, AgentSession> byId = new ConcurrentHashMap<>();
    private final DesiredConfigService desiredConfigs;
    private final AnswerRecorder answers;
    private final AgentRegistry registry;
    private final PushMetrics metrics;
    private final UsageIntake usage;
    private final BearerTokens tokens;
    private final Clock clock;
    private final FrameBudget partialFrames;
    private final NodeCertificates certificates;
    private final ReceivePacer pacer;
    private final NodeService nodes;
    private final ReplicationIntake replication;
    /** How sessions are closed while this replica shuts down: the agent reconnects elsewhere. */
    private static final CloseStatus SHUTTING_DOWN = new CloseStatus(CloseStatus.GOING_AWAY.getCode(),
            "control-plane replica shutting down");

    /** Set by {@link #closeAll()}, cleared by {@link #reopen()}. */
    private volatile boolean shuttingDown;

    AgentChannel(DesiredConfigService desiredConfigs, AnswerRecorder answers, AgentRegistry registry, PushMetrics metrics,
            UsageIntake usage, BearerTokens tokens, Clock clock, FrameBudget partialFrames, NodeCertificates certificates,
            UsedSpaceHistory usedSpace, ReceivePacer pacer, NodeService nodes, ReplicationIntake replication) {
        this.nodes = nodes;
        this.replication = replication;
        this.usedSpace = usedSpace;
        this.pacer = pacer;
        this.tokens = tokens;
        this.clock = clock;
        this.partialFrames = partialFrames;
        this.certificates = certificates;
        this.desiredConfigs = desiredConfigs;
        this.answers = answers;
        this.registry = registry;
        this.metrics = metrics;
        this.usage = usage;
        metrics.gauges(sessions::size, () -> sessions.values().stream().filter(AgentSession::behind).count());
        metrics.lag(() -> {
            long now = System.nanoTime();
            return sessions.values().stream().mapToLong(s -> s.lagNanos(now)).max().orElse(0) / 1e9;
        });
    }

    @Override
    public boolean supportsPartialMessages() {
        return true;
    }

    @Override
    public void afterConnectionEstablished(WebSocketSession session) throws IOException {
        if (shuttingDown) {
            // the agent reconnects to another replica (or to this one after its restart)
            session.close(SHUTTING_DOWN);
            return;
        }
        UUID nodeId = (UUID) session.getAttributes().get(NODE_ID);
        AgentSession agent = new AgentSession(session, nodeId, (UUID) session.getAttributes().get(TOKEN_ID), metrics,
                clock.instant());
        byId.put(session.getId(), agent);
        AgentSession previous = sessions.put(nodeId, agent);
        if (previous != null) {
            previous.close(new CloseStatus(CloseStatus.POLICY_VIOLATION.getCode(), "replaced by a newer connection of this node"));
        }
    }

    @Override
    protected void handleTextMessage(WebSocketSession session, TextMessage message) {
        AgentSession agent = byId.get(session.getId());
        if (agent == null || agent.closing()) {
            return;
        }
        if (session instanceof NativeWebSocketSession nativeSession) {
            pacer.paced(agent.nodeId(), nativeSession.getNativeSession(Session.class));
        }
        String payload = message.getPayload();
        String frame;
        if (message.isLast() && agent.partialChars() == 0) {
            frame = payload; // a whole frame in one piece: nothing to assemble
        } else {
            // chars <= UTF-8 bytes: more chars than the limit is surely too large; decode checks the bytes.
            if (agent.partialChars() + payload.length() > AgentMessages.MAX_FRAME_BYTES) {
                partialFrames.release(agent.dropPartial());
                reject(agent, new ProtocolException(ProtocolException.Code.TOO_LARGE,
                        "frame exceeds " + AgentMessages.MAX_FRAME_BYTES + " bytes"));
                return;
            }
            if (!partialFrames.tryReserve(payload.length())) {
                partialFrames.release(agent.dropPartial());
                metrics.partialFramesRefused();
                log.warn("agent of node {}: unfinished frames of all agents on this replica would pass their budget of {} "
                        + "characters; closing its connection so that it retries later", agent.nodeId(), partialFrames.budget());
                agent.close(new CloseStatus(CloseStatus.SERVICE_OVERLOAD.getCode(), "busy; reconnect and retry"));
                return;
            }
            agent.appendPartial(payload);
            if (!message.isLast()) {
                return;
            }
            int held = agent.partialChars();
            frame = agent.takePartial();
            partialFrames.release(held);
        }
        try {
            handle(agent, AgentMessages.decode(frame));
        } catch (ProtocolException e) {
            if (e.usageSequence() > 0) {
                refuseReport(agent, e.usageSequence(), e.getMessage());
            } else {
                reject(agent, e);
            }
        }
    }

    /**
     * Refuses one usage report and keeps the connection: a {@code usageAck} that says why, so that
     * the agent forgets the report instead of resending it for ever. Logged at WARN once per
     * session (then at DEBUG: a node that sends nothing else must not flood the log).
     */
    private void refuseReport(AgentSession agent, long sequence, String reason) {
        metrics.usageInvalid();
        if (agent.firstRefusal()) {
            log.warn("agent of node {}: usage report {} refused: {} (further refusals on this connection are logged at DEBUG)",
                    agent.nodeId(), sequence, WireText.clean(reason, 200));
        } else {
            log.debug("agent of node {}: usage report {} refused: {}", agent.nodeId(), sequence, reason);
        }
        agent.refuseUsage(sequence, reason);
    }

    private void handle(AgentSession agent, AgentMessage message) {
        if (!(message instanceof AgentMessage.Hello) && !agent.greeted()) {
            throw new ProtocolException(ProtocolException.Code.UNEXPECTED,
                    "the first message must be hello, not " + AgentMessages.typeName(message));
        }
        if (message instanceof AgentMessage.Hello hello) {
            hello(agent, hello);
        } else if (message instanceof AgentMessage.Ack ack) {
            if (!agent.wasSent(ack.revision())) {
                log.debug("node {} acked revision {}, which was not sent to it on this session; ignored",
                        agent.nodeId(), ack.revision());
                return;
            }
            long nanos = agent.acked(ack.revision());
            answers.applied(agent.nodeId(), ack.revision());
            if (nanos >= 0) {
                metrics.acked(nanos);
            }
        } else if (message instanceof AgentMessage.Nack nack) {
            if (!agent.wasSent(nack.revision())) {
                log.debug("node {} nacked revision {}, which was not sent to it on this session; ignored",
                        agent.nodeId(), nack.revision());
                return;
            }
            answers.rejected(agent.nodeId(), nack.revision(), nack.reason());
        } else if (message instanceof UsageReport report) {
            try {
                report.checkTimely(clock.instant());
            } catch (IllegalArgumentException e) {
                refuseReport(agent, report.sequence(), "invalid usage message: " + e.getMessage());
                return;
            }
            usage.offer(agent, report);
        } else if (message instanceof AgentMessage.NodeStatus status) {
            AgentMessage.NodeStatus own = ownExports(agent, status);
            registry.reported(agent.nodeId(), own);
            usedSpace(agent.nodeId(), own);
            replication(agent.nodeId(), own);
        } else if (message instanceof AgentMessage.CertificateRequest request) {
            certificate(agent, request);
        } else if (message instanceof AgentMessage.ErrorMessage error) {
            log.info("agent of node {} reported {}: {}", agent.nodeId(), error.code(), error.reason());
            agent.close(new CloseStatus(CloseStatus.NORMAL.getCode(), "error received"));
        } else {
            throw new ProtocolException(ProtocolException.Code.UNEXPECTED,
                    AgentMessages.typeName(message) + " is not sent by an agent");
        }
    }

    /**
     * {@code status} with only the exports of volumes placed on the agent's node: a node reports
     * what it serves, and a volume not placed there (moved away, another tenant's) is not its to
     * report. What is left out is counted and logged at DEBUG.
     */
    private AgentMessage.NodeStatus ownExports(AgentSession agent, AgentMessage.NodeStatus status) {
        if (status.exports().isEmpty()) {
            return status;
        }
        Set<UUID> placed = desiredConfigs.forNode(agent.nodeId()).volumes().stream().map(VolumeConfig::id)
                .collect(Collectors.toSet());
        List<AgentMessage.Export> own = status.exports().stream().filter(e -> placed.contains(e.volumeId())).toList();
        if (own.size() == status.exports().size()) {
            return status;
        }
        metrics.foreignExports(status.exports().size() - own.size());
        log.debug("agent of node {} reported {} exports of volumes not placed on it; left out",
                agent.nodeId(), status.exports().size() - own.size());
        return new AgentMessage.NodeStatus(status.listenAddress(), own, status.replicationAddress(), status.replication());
    }

    private void hello(AgentSession agent, AgentMessage.Hello hello) {
        if (agent.greeted()) {
            throw new ProtocolException(ProtocolException.Code.UNEXPECTED, "hello was already received");
        }
        if (hello.nodeId() != null && !hello.nodeId().equals(agent.nodeId())) {
            throw new ProtocolException(ProtocolException.Code.UNEXPECTED,
                    "hello names node " + hello.nodeId() + ", but the token is node " + agent.nodeId() + "'s");
        }
        // Closes the window between the upgrade's authentication and this session's registration,
        // in which a revoke's notification would have found no session to close.
        if (agent.tokenId() != null && tokens.unexpired(Set.of(agent.tokenId())).isEmpty()) {
            revoke(agent);
            return;
        }
        agent.greet(hello.appliedRevision(), hello.configDigest(), hello.agentVersion());
        registry.connected(agent.nodeId(), agent.id(), hello.agentVersion(), agent.openedAt());
        if (agent.closed()) {
            // closed while the hello was handled: its close found no row to remove, and this one is its
            registry.disconnected(agent.nodeId(), agent.id());
            return;
        }
        offer(agent);
    }

    /**
     * Signs the node's server-certificate request and sends the certificate back. At most
     * {@value #MAX_CERTIFICATE_REQUESTS} per session (an agent asks once, and again only at
     * renewal); a request that cannot be signed is answered {@code malformed} and closed.
     */
    private void certificate(AgentSession agent, AgentMessage.CertificateRequest request) {
        if (agent.certificateRequested() > MAX_CERTIFICATE_REQUESTS) {
            throw new ProtocolException(ProtocolException.Code.UNEXPECTED,
                    "more than " + MAX_CERTIFICATE_REQUESTS + " certificate requests on one connection");
        }
        NodeCertificates.Signed signed;
        try {
            signed = certificates.sign(agent.nodeId(), request.csrPem());
        } catch (IllegalArgumentException e) {
            throw new ProtocolException(ProtocolException.Code.MALFORMED, "certificate request refused: " + e.getMessage());
        }
        log.info("signed a server certificate for node {}", agent.nodeId());
        agent.send(new AgentMessage.CertificateIssued(signed.certificatePem(), signed.caCertificatePem()));
    }

    /**
     * Closes every session whose token was revoked (deleted, also with its node or tenant) or
     * has expired since the upgrade: an {@code error} message with code {@value #REVOKED_CODE},
     * then a close with status 1008 (policy violation) and that reason. Called by the
     * {@link RevisionWatcher} on a revoke's notification and every poll interval; one query for
     * all sessions of this replica.
     */
    void closeRevoked() {
        List<AgentSession> open = byId.values().stream().filter(a -> a.tokenId() != null && !a.closing()).toList();
        if (open.isEmpty()) {
            return;
        }
        Set<UUID> live = tokens.unexpired(open.stream().map(AgentSession::tokenId).collect(Collectors.toSet()));
        for (AgentSession agent : open) {
            if (!live.contains(agent.tokenId())) {
                revoke(agent);
            }
        }
    }

    private void revoke(AgentSession agent) {
        log.info("closing the agent session of node {}: its token {} was revoked or has expired", agent.nodeId(),
                agent.tokenId());
        agent.fail(new AgentMessage.ErrorMessage(REVOKED_CODE, "the node token was revoked or has expired"),
                new CloseStatus(CloseStatus.POLICY_VIOLATION.getCode()));
    }

    /** Reads the node's snapshot and queues it if it is newer than what the agent has. */
    private void offer(AgentSession agent) {
        DesiredConfig config = desiredConfigs.forNode(agent.nodeId());
        if (!agent.offer(config) && agent.runs(config)) {
            // nothing to push, so no ack will come: the hello is the proof (its ack may have been lost)
            answers.applied(agent.nodeId(), config.revision());
        }
    }

    /**
     * Re-offers every greeted session its node's snapshot; only changed ones are sent. The
     * snapshots are read {@value #REFRESH_BATCH} nodes at a time, each batch in a constant number
     * of queries: a change to a policy that every node uses reaches a thousand agents in a few
     * reads, not a thousand.
     */
    void refresh() {
        long start = System.nanoTime();
        long reading = 0;
        int sent = 0;
        List<AgentSession> greeted = sessions.values().stream().filter(AgentSession::greeted).toList();
        for (int from = 0; from < greeted.size(); from += REFRESH_BATCH) {
            List<AgentSession> batch = greeted.subList(from, Math.min(from + REFRESH_BATCH, greeted.size()));
            Map<UUID, DesiredConfig> configs;
            long readStart = System.nanoTime();
            try {
                configs = desiredConfigs.forNodes(batch.stream().map(AgentSession::nodeId).toList());
                reading += System.nanoTime() - readStart;
            } catch (DataAccessException e) {
                log.debug("could not read the snapshots of {} nodes: {}", batch.size(), e.getMessage());
                throw e;
            }
            for (AgentSession agent : batch) {
                try {
                    if (agent.offer(configs.get(agent.nodeId()))) {
                        sent++;
                    }
                } catch (RuntimeException e) {
                    log.warn("could not refresh node {}", agent.nodeId(), e);
                }
            }
        }
        if (sent > 0) {
            log.debug("refresh: {} of {} nodes sent a new snapshot in {} ms ({} ms reading snapshots)", sent,
                    greeted.size(), (System.nanoTime() - start) / 1_000_000, reading / 1_000_000);
        }
    }

    /** The sessions open here, greeted or not ({@link AgentRegistry#reconcile}). */
    Collection<AgentSession> openSessions() {
        return List.copyOf(byId.values());
    }

    /** Node ids connected to this replica. */
    Collection<UUID> connectedNodes() {
        return List.copyOf(sessions.keySet());
    }

    /**
     * Takes new sessions again after {@link #closeAll}: the application's lifecycle was stopped
     * and is started again without the context closing ({@code context.stop()} then
     * {@code start()}; the test framework pauses cached contexts so).
     */
    void reopen() {
        shuttingDown = false;
    }

    /**
     * Closes every session, for shutdown. The sessions' rows are left to
     * {@link AgentRegistry#leave()}, which removes all of this replica's at once: removing each
     * here, one statement per session on the closing thread, could hold the shutdown for the pool's
     * connection timeout per session when the database is already gone.
     */
    void closeAll() {
        shuttingDown = true;
        for (AgentSession agent : List.copyOf(sessions.values())) {
            agent.close(SHUTTING_DOWN);
        }
    }

    private void reject(AgentSession agent, ProtocolException e) {
        metrics.rejected(e.code());
        // The agent's mistake, not the control plane's: one line at WARN, no stack trace.
        log.warn("agent of node {}: frame refused ({}): {}", agent.nodeId(), e.code().wireName(),
                WireText.clean(e.getMessage(), 200));
        CloseStatus status = switch (e.code()) {
            case TOO_LARGE -> CloseStatus.TOO_BIG_TO_PROCESS;
            case UNEXPECTED -> CloseStatus.POLICY_VIOLATION;
            default -> CloseStatus.PROTOCOL_ERROR;
        };
        agent.fail(e.toErrorMessage(), status);
    }

    @Override
    public void handleTransportError(WebSocketSession session, Throwable exception) {
        log.debug("transport error on agent session {}", session.getId(), exception);
    }

    @Override
    public void afterConnectionClosed(WebSocketSession session, CloseStatus status) {
        AgentSession agent = byId.remove(session.getId());
        if (agent == null) {
            return;
        }
        partialFrames.release(agent.dropPartial());
        agent.markClosed();
        pacer.closed(agent.nodeId());
        sessions.remove(agent.nodeId(), agent);
        if (shuttingDown) {
            return;
        }
        try {
            registry.disconnected(agent.nodeId(), agent.id());
        } catch (DataAccessException e) {
            log.debug("could not record the disconnect of node {}: {}", agent.nodeId(), e.getMessage());
        }
    }

    /**
     * Hands the replication part of a status report to the node and volume features: the node's
     * replication address (stored, and the revision bumped, when it changed) and, for each volume
     * the node is primary of, its copies' states ({@code volume.ReplicationIntake}, which keeps
     * only the current primary's report at the current epoch). A failure costs this report only,
     * logged at WARN: a primary waiting for the echo sends it again within 5 s.
     */
    private void replication(UUID nodeId, AgentMessage.NodeStatus status) {
        try {
            nodes.recordReplicationAddress(nodeId, status.replicationAddress());
            replication.reported(nodeId, status.replication());
        } catch (RuntimeException e) {
            log.warn("replication status reported by node {} not stored: {}", nodeId, e.toString());
        }
    }

    /**
     * Hands the used bytes of a status report to the usage feature, which keeps their history and
     * lets the volume feature re-scale capacity-based terms; a failure costs this report only (the
     * node reports again when the figures change).
     */
    private void usedSpace(UUID nodeId, AgentMessage.NodeStatus status) {
        Map<UUID, Long> used = new java.util.HashMap<>();
        for (AgentMessage.Export e : status.exports()) {
            if (e.volumeId() != null && e.usedBytes() != null) {
                used.put(e.volumeId(), e.usedBytes());
            }
        }
        try {
            usedSpace.record(nodeId, used);
        } catch (RuntimeException e) {
            log.warn("used space reported by node {} not stored: {}", nodeId, e.toString());
        }
    }
}
