package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.controlplane.security.TokenSecrets;
import io.weir.controlplane.support.ControlPlaneInstance;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.DesiredConfig;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import tools.jackson.databind.JsonNode;

/**
 * Two replicas on one PostgreSQL: this test's application (replica A) and a second one started
 * beside it (replica B). A change committed through A reaches an agent connected to B, and A shows
 * the node as connected to B; a token revoked through A closes the session its agent holds on B.
 */
class AgentChannelReplicaTest extends IntegrationTest {

    private static final String B_APPLICATION_NAME = "weir-test-replica-b-" + UUID.randomUUID().toString().substring(0, 8);

    private static ControlPlaneInstance replicaB;

    @Autowired
    private JdbcClient jdbc;

    /** The backend pid of replica B's LISTEN connection, 0 while it has none. */
    private static int listenerOfB() {
        return replicaB.context().getBean(RevisionWatcher.class).listenerPid();
    }

    /** The application name of a backend, as PostgreSQL shows it; null if there is no such backend. */
    private String applicationName(int pid) {
        return jdbc.sql("SELECT application_name FROM pg_stat_activity WHERE pid = ?").param(pid).query(String.class)
                .optional().orElse(null);
    }

    private String newNodeToken(List<UUID> id) {
        HttpApi.Response created = api.post("/api/v1/nodes", "{\"name\":\"" + unique("b") + "\"}");
        id.add(UUID.fromString(created.json().get("id").asString()));
        return created.json().get("token").asString();
    }

    @Test
    void theListeningConnectionIsOpenedWithThePoolsDriverProperties() {
        await().atMost(AgentClient.WAIT).until(() -> listenerOfB() != 0);
        assertThat(applicationName(listenerOfB())).isEqualTo(B_APPLICATION_NAME);
    }

    @Test
    void aKilledListeningConnectionIsReopenedAndChangesKeepReachingReplicaB() {
        await().atMost(AgentClient.WAIT).until(() -> listenerOfB() != 0);
        int killed = listenerOfB();
        assertThat(jdbc.sql("SELECT pg_terminate_backend(?)").param(killed).query(Boolean.class).single()).isTrue();
        await().atMost(AgentClient.WAIT).until(() -> listenerOfB() != 0 && listenerOfB() != killed);
        assertThat(applicationName(listenerOfB())).isEqualTo(B_APPLICATION_NAME);

        List<UUID> node = new java.util.ArrayList<>();
        String token = newNodeToken(node);
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("t") + "\"}").json().get("id").asString();
        try (AgentClient agent = AgentClient.open(replicaB.port(), token)) {
            agent.send(new AgentMessage.Hello(null, 0, "test"));
            agent.send(new AgentMessage.Ack(agent.nextConfig().config().revision()));
            HttpApi.Response volume = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"" + unique("v")
                    + "\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + node.get(0) + "\"]}");
            assertThat(volume.status()).isEqualTo(201);
            // B polls every 10 minutes: the push within the wait came through the reopened LISTEN.
            assertThat(agent.nextConfig().config().volumes()).hasSize(1);
        }
    }

    @BeforeAll
    static void startReplicaB() {
        // B polls rarely: what reaches it within a test's wait came through LISTEN/NOTIFY.
        // Its pool has an application name of its own, which its LISTEN connection must share.
        replicaB = ControlPlaneInstance.start(Map.of("weir.push.replica-id", "replica-b-" + UUID.randomUUID(),
                "weir.push.poll-interval", "10m",
                "spring.datasource.hikari.data-source-properties.ApplicationName", B_APPLICATION_NAME));
    }

    @AfterAll
    static void stopReplicaB() {
        if (replicaB != null) {
            replicaB.close();
        }
    }

    @Test
    void revokingANodeTokenOnReplicaAClosesItsSessionOnReplicaB() {
        HttpApi.Response created = api.post("/api/v1/nodes", "{\"name\":\"" + unique("revoked") + "\"}");
        String token = created.json().get("token").asString();
        try (AgentClient agent = AgentClient.open(replicaB.port(), token)) {
            agent.send(new AgentMessage.Hello(null, 0, "test"));
            DesiredConfig first = agent.nextConfig().config();
            agent.send(new AgentMessage.Ack(first.revision()));

            assertThat(api.delete("/api/v1/tokens/" + TokenSecrets.idOf(token), null).status()).isEqualTo(204);

            AgentClient.Closed closed = agent.awaitClose();
            assertThat(closed.code()).isEqualTo(1008);
            assertThat(closed.reason()).contains("revoked");
        }
    }

    @Test
    void aChangeMadeOnReplicaAReachesAnAgentOnReplicaB() {
        HttpApi.Response created = api.post("/api/v1/nodes", "{\"name\":\"" + unique("replicated") + "\"}");
        UUID node = UUID.fromString(created.json().get("id").asString());
        String token = created.json().get("token").asString();
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("t") + "\"}").json().get("id").asString();

        try (AgentClient agent = AgentClient.open(replicaB.port(), token)) {
            agent.send(new AgentMessage.Hello(node, 0, "test"));
            DesiredConfig first = agent.nextConfig().config();
            agent.send(new AgentMessage.Ack(first.revision()));

            HttpApi.Response volume = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"" + unique("v")
                    + "\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + node + "\"]}");
            assertThat(volume.status()).isEqualTo(201);

            DesiredConfig pushed = agent.nextConfig().config();
            assertThat(pushed.volumes()).extracting(v -> v.id().toString()).containsExactly(volume.json().get("id").asString());
            agent.send(new AgentMessage.Ack(pushed.revision()));

            await().atMost(AgentClient.WAIT).untilAsserted(() -> {
                JsonNode status = api.get("/api/v1/nodes/" + node).json().get("status");
                assertThat(status.get("connected").asBoolean()).isTrue();
                assertThat(status.get("replica").asString()).startsWith("replica-b-");
                assertThat(status.get("appliedRevision").asLong()).isEqualTo(pushed.revision());
            });
        }
    }
}
