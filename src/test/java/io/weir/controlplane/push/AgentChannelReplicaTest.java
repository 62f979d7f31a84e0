package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.controlplane.support.ControlPlaneInstance;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.DesiredConfig;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Two replicas on one PostgreSQL: this test's application (replica A) and a second one started
 * beside it (replica B). A change committed through A reaches an agent connected to B, and A shows
 * the node as connected to B.
 */
class AgentChannelReplicaTest extends IntegrationTest {

    private static ControlPlaneInstance replicaB;

    @BeforeAll
    static void startReplicaB() {
        replicaB = ControlPlaneInstance.start(Map.of("weir.push.replica-id", "replica-b-" + UUID.randomUUID()));
    }

    @AfterAll
    static void stopReplicaB() {
        if (replicaB != null) {
            replicaB.close();
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
