package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.weir.controlplane.node.NodeConnections;
import io.weir.controlplane.support.IntegrationTest;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * A replica's rows in {@code agent_connection} follow its live sessions at every heartbeat
 * ({@link AgentRegistry#reconcile}), whatever happened to them in between. Without it, a
 * disconnect whose delete failed (the database was away when the agent left) left its node shown
 * as connected, and never failed over, for the replica's life; and a replica cut off from the
 * database for more than ten replica timeouts found its live sessions' rows removed by another
 * replica ({@link AgentRegistry#forgetDeadReplicas}), its nodes shown as gone, and their volumes
 * failed over, although their agents were still connected.
 */
class AgentRegistryReconcileTest extends IntegrationTest {

    @Autowired
    JdbcClient jdbc;

    private static PushProperties properties(String replicaId) {
        return AgentRegistryRestartTest.properties(replicaId);
    }

    /** A session of the replica under test: its node, id and state as the test sets them. */
    private static class Session implements AgentRegistry.LiveSession {
        final UUID node;
        final String id;
        final Instant openedAt = Instant.now().minusSeconds(1);
        boolean greeted = true;
        boolean closed;

        Session(UUID node, String id) {
            this.node = node;
            this.id = id;
        }

        @Override
        public UUID nodeId() {
            return node;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public String agentVersion() {
            return "test";
        }

        @Override
        public Instant openedAt() {
            return openedAt;
        }

        @Override
        public boolean greeted() {
            return greeted;
        }

        @Override
        public boolean closed() {
            return closed;
        }
    }

    private UUID node() {
        return UUID.fromString(api.post("/api/v1/nodes", "{\"name\":\"" + unique("n") + "\"}").json().get("id").asString());
    }

    @Test
    void aClosedSessionsRowThatADisconnectCouldNotRemoveGoesAtTheNextHeartbeat() {
        UUID node = node();
        AgentRegistry registry = new AgentRegistry(jdbc, properties(unique("cp")));
        registry.heartbeat();
        registry.connected(node, "s-1", "test", Instant.now());
        // s-1 closed while the database was away: its disconnect's delete failed, and nothing else removes the row
        assertThat(registry.presence(List.of(node))).containsKey(node);

        registry.heartbeat();
        registry.reconcile(List::of);

        assertThat(registry.presence(List.of(node))).as("no session of this replica is live").doesNotContainKey(node);
    }

    @Test
    void aLiveSessionsRowRemovedAfterALongOutageComesBackAtTheNextHeartbeat() {
        UUID node = node();
        String replica = unique("cp");
        AgentRegistry registry = new AgentRegistry(jdbc, properties(replica));
        registry.heartbeat();
        Session live = new Session(node, "s-1");
        registry.connected(node, live.id, "test", live.openedAt);
        // this replica could not reach the database for ten replica timeouts: another one removed it with its rows
        jdbc.sql("UPDATE control_plane_replica SET heartbeat_at = ? WHERE id = ?")
                .param(Timestamp.from(Instant.now().minus(Duration.ofMinutes(6)))).param(replica).update();
        new AgentRegistry(jdbc, properties(unique("other"))).forgetDeadReplicas();
        assertThat(registry.presence(List.of(node))).doesNotContainKey(node);

        registry.heartbeat();
        registry.reconcile(() -> List.of(live));

        assertConnectedTo(registry.presence(List.of(node)).get(node), replica, live.openedAt);
    }

    @Test
    void restoringARowLeavesANodeWithTheReplicaItReconnectedTo() {
        UUID node = node();
        AgentRegistry stale = new AgentRegistry(jdbc, properties(unique("cp")));
        AgentRegistry newer = new AgentRegistry(jdbc, properties(unique("cp")));
        stale.heartbeat();
        newer.heartbeat();
        // the agent left the stale replica without a FIN: its session there is not closed yet
        Session halfOpen = new Session(node, "s-1");
        newer.connected(node, "s-2", "test", Instant.now());

        stale.reconcile(() -> List.of(halfOpen));

        assertThat(newer.presence(List.of(node)).get(node).replica()).isEqualTo(newer.replicaId());
    }

    @Test
    void aSessionThatClosesWhileItsRowIsRestoredLeavesNoRow() {
        UUID node = node();
        AgentRegistry registry = new AgentRegistry(jdbc, properties(unique("cp")));
        registry.heartbeat();
        AtomicInteger asked = new AtomicInteger();
        // live when the heartbeat looks at it, closed (its disconnect's delete found no row) by the time its row is back
        Session closing = new Session(node, "s-1") {
            @Override
            public boolean closed() {
                return asked.incrementAndGet() > 1;
            }
        };

        registry.reconcile(() -> List.of(closing));

        assertThat(asked).as("looked at again after the restore").hasValueGreaterThan(1);
        assertThat(registry.presence(List.of(node))).doesNotContainKey(node);
    }

    @Test
    void aSessionNotYetGreetedGetsNoRow() {
        UUID node = node();
        AgentRegistry registry = new AgentRegistry(jdbc, properties(unique("cp")));
        registry.heartbeat();
        Session opening = new Session(node, "s-1");
        opening.greeted = false;

        registry.reconcile(() -> List.of(opening));

        assertThat(registry.presence(List.of(node))).doesNotContainKey(node);
    }

    /**
     * A node deleted while its agent is connected: its row went with it (the foreign key
     * cascades), its session is closed a moment later (its token is revoked with it). A heartbeat
     * in between must not put the row back: the insert failed on the foreign key, the heartbeat
     * that threw was retried first on every pass of the watcher, and the replica pushed nothing
     * more to any node and closed no revoked session.
     */
    @Test
    void aLiveSessionOfADeletedNodeGetsNoRowAndTheRestAreReconciled() {
        UUID gone = node();
        UUID live = node();
        AgentRegistry registry = new AgentRegistry(jdbc, properties(unique("cp")));
        registry.heartbeat();
        Session ofGone = new Session(gone, "s-1");
        Session ofLive = new Session(live, "s-2");
        assertThat(api.delete("/api/v1/nodes/" + gone, null).status()).isEqualTo(204);

        registry.reconcile(() -> List.of(ofGone, ofLive));

        assertThat(registry.presence(List.of(gone, live))).containsOnlyKeys(live);
    }

    private static void assertConnectedTo(NodeConnections.AgentPresence p, String replica, Instant at) {
        assertThat(p).as("the node is connected").isNotNull();
        assertThat(p.replica()).isEqualTo(replica);
        assertThat(p.connectedAt()).isCloseTo(at, within(1, ChronoUnit.MILLIS));
    }
}
