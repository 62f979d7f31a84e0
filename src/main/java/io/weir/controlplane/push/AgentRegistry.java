package io.weir.controlplane.push;

import io.weir.controlplane.node.NodeConnections;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import java.net.InetAddress;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * The agent channel's shared state in PostgreSQL, so that any replica answers for any node:
 * which replica holds each node's connection ({@code agent_connection}), which replicas are alive
 * ({@code control_plane_replica}, one heartbeat row each), and each data node's last status
 * report ({@code agent_report}). Implements {@link NodeConnections} for the node feature.
 *
 * <p>A connection counts only while its replica's heartbeat is younger than
 * {@link PushProperties#replicaTimeout()}, so a replica that died without cleaning up does not
 * leave its nodes shown as connected, nor brings them back when it starts again under a fixed id;
 * a node's row is replaced when its agent connects anywhere, and removed by the session that
 * wrote it (or by the replica's next process). Each heartbeat then puts this replica's rows back
 * in line with its sessions ({@link #reconcile}): a row whose delete failed goes, and a live
 * session's row removed meanwhile comes back.
 */
@Component
class AgentRegistry implements NodeConnections {

    private static final Logger log = LoggerFactory.getLogger(AgentRegistry.class);

    private final JdbcClient jdbc;
    private final PushProperties properties;
    private final String replicaId;
    /** When this process started: connections of this replica id recorded before are an earlier process's. */
    private final Timestamp started = Timestamp.from(Instant.now());
    /** Whether the earlier process's connection rows are gone (the first heartbeat removes them). */
    private volatile boolean earlierForgotten;

    AgentRegistry(JdbcClient jdbc, PushProperties properties) {
        this.jdbc = jdbc;
        this.properties = properties;
        this.replicaId = properties.replicaId() == null || properties.replicaId().isBlank() ? generatedId()
                : properties.replicaId();
    }

    /** This replica's id. */
    String replicaId() {
        return replicaId;
    }

    /**
     * Stamps this replica's heartbeat (inserting its row the first time). The first one removes
     * first the connections an earlier process of the same fixed id recorded and did not remove
     * (it died): its heartbeat would bring them back to life, and their nodes would show as
     * connected, and never fail over, while their agents are gone.
     */
    void heartbeat() {
        if (!earlierForgotten) {
            jdbc.sql("DELETE FROM agent_connection WHERE replica_id = ? AND connected_at < ?").param(replicaId)
                    .param(started).update();
            earlierForgotten = true;
        }
        Timestamp now = Timestamp.from(Instant.now());
        jdbc.sql("""
                        INSERT INTO control_plane_replica (id, started_at, heartbeat_at) VALUES (?, ?, ?)
                        ON CONFLICT (id) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at""")
                .param(replicaId).param(now).param(now).update();
    }

    /** A session of this replica, as {@link #reconcile} sees it. */
    interface LiveSession {
        UUID nodeId();

        /** The session's id, which its row names. */
        String id();

        /** The version its hello named (null before the hello). */
        String agentVersion();

        Instant openedAt();

        boolean greeted();

        boolean closed();
    }

    /**
     * Brings this replica's rows in line with its sessions, after each heartbeat, whatever
     * happened to them in between: a disconnect whose delete failed (the database was away when
     * the agent left) would leave its node shown as connected, and never failed over, for the
     * replica's life; a replica cut off from the database for ten replica timeouts finds its rows
     * removed by another one ({@link #forgetDeadReplicas}) while its agents are still connected.
     *
     * <p>{@code live} (the sessions open here) is asked after the rows are read: a session had a
     * row only once its hello was handled, while it was open, so a row whose session is not among
     * them closed, and goes. A greeted session without a row gets it back, unless the node's row
     * is another replica's (the node's newest connection) or the node was deleted, and loses it
     * again if it closed meanwhile (its disconnect may have found no row to remove).
     */
    void reconcile(Supplier<? extends Collection<? extends LiveSession>> live) {
        Map<String, UUID> rows = new HashMap<>();
        jdbc.sql("SELECT node_id, session_id FROM agent_connection WHERE replica_id = ?").param(replicaId)
                .query(rs -> {
                    rows.put(rs.getString("session_id"), rs.getObject("node_id", UUID.class));
                });
        Map<String, LiveSession> open = new HashMap<>();
        for (LiveSession s : live.get()) {
            open.put(s.id(), s);
        }
        rows.forEach((session, node) -> {
            LiveSession s = open.get(session);
            if (s == null || !s.nodeId().equals(node)) {
                log.info("agent of node {} left this replica in session {}; its connection row, still there, is removed",
                        node, session);
                disconnected(node, session);
            }
        });
        for (LiveSession s : open.values()) {
            if (!s.greeted() || s.closed() || s.nodeId().equals(rows.get(s.id()))) {
                continue;
            }
            int restored;
            try {
                // not for a node deleted meanwhile (its row went with it; its session closes with its token)
                restored = jdbc.sql("""
                                INSERT INTO agent_connection (node_id, replica_id, session_id, agent_version, connected_at)
                                SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM data_node WHERE id = ?)
                                ON CONFLICT (node_id) DO NOTHING""")
                        .param(s.nodeId()).param(replicaId).param(s.id()).param(truncate(s.agentVersion(), 64))
                        .param(Timestamp.from(s.openedAt())).param(s.nodeId()).update();
            } catch (DataIntegrityViolationException deletedMeanwhile) {
                continue;
            }
            if (restored == 0) {
                continue;
            }
            if (s.closed()) {
                disconnected(s.nodeId(), s.id());
            } else {
                log.info("agent of node {} is connected here in session {}; its connection row, gone, is back", s.nodeId(), s.id());
            }
        }
    }

    /** Removes replicas that stopped beating long ago, with their connection rows. */
    void forgetDeadReplicas() {
        Timestamp cutoff = Timestamp.from(Instant.now().minus(properties.replicaTimeout().multipliedBy(10)));
        jdbc.sql("DELETE FROM agent_connection c USING control_plane_replica r WHERE r.id = c.replica_id AND r.heartbeat_at < ?")
                .param(cutoff).update();
        jdbc.sql("DELETE FROM control_plane_replica WHERE heartbeat_at < ?").param(cutoff).update();
    }

    /** Leaves: this replica's connections and heartbeat row go. */
    void leave() {
        try {
            jdbc.sql("DELETE FROM agent_connection WHERE replica_id = ?").param(replicaId).update();
            jdbc.sql("DELETE FROM control_plane_replica WHERE id = ?").param(replicaId).update();
        } catch (DataAccessException e) {
            log.warn("could not remove replica {} from the database: {}", replicaId, e.getMessage());
        }
    }

    /**
     * Records that {@code nodeId}'s agent is connected here, in session {@code sessionId}, opened
     * at {@code connectedAt}; unless the row already records a connection to this replica opened
     * later (the hello of an older session that arrives after the newer one's must not replace
     * it). Times are compared only within a replica, which reads one clock; another replica's row
     * is replaced, as the newest hello's.
     */
    void connected(UUID nodeId, String sessionId, String agentVersion, Instant connectedAt) {
        jdbc.sql("""
                        INSERT INTO agent_connection (node_id, replica_id, session_id, agent_version, connected_at)
                        VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (node_id) DO UPDATE SET replica_id = EXCLUDED.replica_id, session_id = EXCLUDED.session_id,
                          agent_version = EXCLUDED.agent_version, connected_at = EXCLUDED.connected_at
                        WHERE agent_connection.replica_id <> EXCLUDED.replica_id
                          OR agent_connection.connected_at <= EXCLUDED.connected_at""")
                .param(nodeId).param(replicaId).param(sessionId).param(truncate(agentVersion, 64))
                .param(Timestamp.from(connectedAt)).update();
    }

    /** Records that session {@code sessionId} of {@code nodeId} ended; a newer connection's row stays. */
    void disconnected(UUID nodeId, String sessionId) {
        jdbc.sql("DELETE FROM agent_connection WHERE node_id = ? AND replica_id = ? AND session_id = ?")
                .param(nodeId).param(replicaId).param(sessionId).update();
    }

    /** Stores a data node's status report. */
    void reported(UUID nodeId, AgentMessage.NodeStatus status) {
        String json = AgentMessages.encode(status);
        jdbc.sql("""
                        INSERT INTO agent_report (node_id, status, reported_at) VALUES (?, CAST(? AS jsonb), ?)
                        ON CONFLICT (node_id) DO UPDATE SET status = EXCLUDED.status, reported_at = EXCLUDED.reported_at""")
                .param(nodeId).param(json).param(Timestamp.from(Instant.now())).update();
    }

    @Override
    public Map<UUID, AgentPresence> presence(Collection<UUID> nodeIds) {
        if (nodeIds.isEmpty()) {
            return Map.of();
        }
        Timestamp alive = Timestamp.from(Instant.now().minus(properties.replicaTimeout()));
        Map<UUID, AgentPresence> result = new HashMap<>();
        jdbc.sql("""
                        SELECT c.node_id, c.replica_id, c.agent_version, c.connected_at, r.heartbeat_at >= :alive AS live
                        FROM agent_connection c LEFT JOIN control_plane_replica r ON r.id = c.replica_id
                        WHERE c.node_id IN (:ids)""")
                .param("alive", alive).param("ids", List.copyOf(nodeIds))
                .query(rs -> {
                    if (rs.getBoolean("live")) {
                        result.put(rs.getObject("node_id", UUID.class), new AgentPresence(rs.getString("replica_id"),
                                rs.getString("agent_version"), rs.getTimestamp("connected_at").toInstant(), null, null));
                    }
                });
        jdbc.sql("SELECT node_id, status::text AS status, reported_at FROM agent_report WHERE node_id IN (:ids)")
                .param("ids", List.copyOf(nodeIds))
                .query(rs -> {
                    UUID node = rs.getObject("node_id", UUID.class);
                    AgentMessage.NodeStatus report = decodeReport(rs.getString("status"));
                    Instant at = rs.getTimestamp("reported_at").toInstant();
                    AgentPresence p = result.get(node);
                    result.put(node, p == null ? new AgentPresence(null, null, null, report, at)
                            : new AgentPresence(p.replica(), p.agentVersion(), p.connectedAt(), report, at));
                });
        return result;
    }

    private static AgentMessage.NodeStatus decodeReport(String json) {
        try {
            return AgentMessages.decode(json) instanceof AgentMessage.NodeStatus s ? s : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static String truncate(String s, int max) {
        return s == null || s.length() <= max ? s : s.substring(0, max);
    }

    private static String generatedId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "replica";
        }
        byte[] random = new byte[3];
        ThreadLocalRandom.current().nextBytes(random);
        return truncate(host, 100) + "-" + HexFormat.of().formatHex(random);
    }
}
