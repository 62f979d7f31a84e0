package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.IntegrationTest;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * A replica with a fixed id ({@code weir.push.replica-id}, as a StatefulSet gives) that died
 * without cleaning up and starts again: the connections its earlier process recorded are not
 * brought back to life by its first heartbeat. Otherwise a node whose agent died with it shows
 * as connected for good, and failover never promotes its volumes' copies.
 */
class AgentRegistryRestartTest extends IntegrationTest {

    @Autowired
    JdbcClient jdbc;

    /** A replica's push properties with the defaults' timings, under {@code replicaId}. */
    static PushProperties properties(String replicaId) {
        return new PushProperties(replicaId, Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofSeconds(30),
                Duration.ofMinutes(2), 100, 4000);
    }

    @Test
    void aRestartedReplicaDoesNotRaiseTheConnectionsOfItsEarlierProcess() {
        String replica = unique("cp");
        UUID node = UUID.fromString(api.post("/api/v1/nodes", "{\"name\":\"" + unique("n") + "\"}").json().get("id").asString());
        Instant crash = Instant.now().minusSeconds(60);
        jdbc.sql("INSERT INTO control_plane_replica (id, started_at, heartbeat_at) VALUES (?, ?, ?)")
                .param(replica).param(Timestamp.from(crash.minusSeconds(3600))).param(Timestamp.from(crash)).update();
        jdbc.sql("INSERT INTO agent_connection (node_id, replica_id, session_id, agent_version, connected_at) VALUES (?, ?, ?, ?, ?)")
                .param(node).param(replica).param("s-1").param("test").param(Timestamp.from(crash.minusSeconds(600))).update();

        AgentRegistry restarted = new AgentRegistry(jdbc, properties(replica));
        restarted.heartbeat();

        assertThat(restarted.presence(List.of(node))).doesNotContainKey(node);
        // a connection of the new process counts
        restarted.connected(node, "s-2", "test", Instant.now());
        restarted.heartbeat();
        assertThat(restarted.presence(List.of(node)).get(node).replica()).isEqualTo(replica);
    }

    /**
     * A hello that stalled (its token check waited on the database) while its agent reconnected:
     * the older session's row, written last, replaced the newer one's, and when the newer
     * session closed nothing matched it, so the node showed as connected, and its volumes never
     * failed over, for as long as the replica lived. The row follows the newest connection.
     */
    @Test
    void aLateHelloOfAnOlderConnectionDoesNotReplaceTheNewerOnesRow() {
        String replica = unique("cp");
        UUID node = UUID.fromString(api.post("/api/v1/nodes", "{\"name\":\"" + unique("n") + "\"}").json().get("id").asString());
        AgentRegistry registry = new AgentRegistry(jdbc, properties(replica));
        registry.heartbeat();
        Instant first = Instant.now().minusSeconds(2);
        Instant second = first.plusSeconds(1);
        registry.connected(node, "s-2", "test", second);
        registry.connected(node, "s-1", "test", first); // s-1's hello, late; s-1 is closed by now
        registry.disconnected(node, "s-1");
        assertThat(registry.presence(List.of(node))).as("s-2 is connected").containsKey(node);
        registry.disconnected(node, "s-2");
        assertThat(registry.presence(List.of(node))).as("s-2 closed: nothing is connected").doesNotContainKey(node);
    }
}
