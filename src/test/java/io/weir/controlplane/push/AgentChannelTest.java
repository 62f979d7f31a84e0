package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.controlplane.security.TokenSecrets;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import io.weir.protocol.ConfigDigest;
import io.weir.protocol.DesiredConfig;
import java.net.http.WebSocketHandshakeException;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import tools.jackson.databind.JsonNode;

/**
 * The agent channel over a real WebSocket on loopback (the JDK's client), against the real
 * application and PostgreSQL.
 */
class AgentChannelTest extends IntegrationTest {

    @Autowired
    RevisionWatcher watcher;

    @Autowired
    AgentRegistry registry;

    @Autowired
    JdbcClient jdbc;

    /** A node created through the API, with its token. */
    record Node(UUID id, String token) {
    }

    private Node node() {
        HttpApi.Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("agent") + "\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return new Node(UUID.fromString(r.json().get("id").asString()), r.json().get("token").asString());
    }

    private String tenant() {
        HttpApi.Response r = api.post("/api/v1/tenants", "{\"name\":\"" + unique("t") + "\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }

    /** Creates a volume placed on {@code node}; answers its path. */
    private String volumeOn(String tenant, Node node) {
        HttpApi.Response r = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"" + unique("v")
                + "\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + node.id() + "\"]}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return "/api/v1/volumes/" + r.json().get("id").asString();
    }

    private JsonNode status(Node node) {
        return api.get("/api/v1/nodes/" + node.id()).json().get("status");
    }

    /** Connects {@code node}'s agent, says hello as having applied nothing, takes and acks its first config. */
    private AgentClient connected(Node node) {
        AgentClient agent = AgentClient.open(port, node.token());
        agent.send(new AgentMessage.Hello(node.id(), 0, "test"));
        AgentMessage.ConfigPush first = agent.nextConfig();
        agent.send(new AgentMessage.Ack(first.config().revision()));
        await().atMost(AgentClient.WAIT).until(() -> status(node).get("appliedRevision").asLong() == first.config().revision());
        return agent;
    }

    @Test
    void anUpgradeWithoutANodeTokenIsRefusedBeforeTheUpgrade() {
        assertThat(refusal(null)).isEqualTo(401);
        assertThat(refusal("weir_not-a-real-token")).isEqualTo(401);
        assertThat(refusal(ADMIN_TOKEN)).isEqualTo(403);
        // The refusal is a problem, as every other.
        HttpApi.Response plain = anonymousApi().get("/api/v1/agent/connect");
        assertThat(plain.status()).isEqualTo(401);
        assertThat(plain.contentType()).startsWith("application/problem+json");
    }

    private int refusal(String token) {
        try {
            AgentClient.connect(port, token).orTimeout(60, TimeUnit.SECONDS).join().close();
            throw new AssertionError("the upgrade was accepted");
        } catch (CompletionException e) {
            assertThat(e.getCause()).isInstanceOf(WebSocketHandshakeException.class);
            return ((WebSocketHandshakeException) e.getCause()).getResponse().statusCode();
        }
    }

    @Test
    void aReplicaWhoseLifecycleWasStoppedAndStartedAgainTakesAgentsAgain() {
        // Spring stops and starts a context's lifecycle beans without closing it on
        // context.stop()/start(), and the TestContext framework pauses cached contexts so
        watcher.stop();
        watcher.start();
        Node node = node();
        volumeOn(tenant(), node);

        try (AgentClient agent = connected(node)) {
            assertThat(status(node).get("connected").asBoolean()).isTrue();
        }
    }

    @Test
    void helloWithoutANodeIdIsAnsweredWithTheConfigOfTheTokensNode() {
        Node node = node();
        volumeOn(tenant(), node);

        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.sendRaw("{\"type\":\"hello\",\"protocolVersion\":1,\"appliedRevision\":0,\"agentVersion\":\"test\"}");
            DesiredConfig config = agent.nextConfig().config();
            assertThat(config.nodeId()).isEqualTo(node.id());
            assertThat(config.volumes()).hasSize(1);
        }
    }

    @Test
    void helloFromABehindAgentIsAnsweredWithItsDesiredConfig() {
        Node node = node();
        volumeOn(tenant(), node);
        JsonNode desired = api.get("/api/v1/nodes/" + node.id() + "/desired-config").json();

        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.send(new AgentMessage.Hello(node.id(), 0, "test"));
            DesiredConfig config = agent.nextConfig().config();
            assertThat(config.nodeId()).isEqualTo(node.id());
            assertThat(config.revision()).isEqualTo(desired.get("revision").asLong());
            assertThat(config.volumes()).hasSize(1);
        }
    }

    @Test
    void anAgentUpToDateGetsNothingUntilItsNodeChanges() {
        Node node = node();
        String tenant = tenant();
        volumeOn(tenant, node);
        long desired = api.get("/api/v1/nodes/" + node.id() + "/desired-config").json().get("revision").asLong();

        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.send(new AgentMessage.Hello(node.id(), desired, "test"));
            String second = volumeOn(tenant, node);
            // The first frame is the snapshot with the second volume: nothing was sent for the hello.
            DesiredConfig config = agent.nextConfig().config();
            assertThat(config.revision()).isGreaterThan(desired);
            assertThat(config.volumes()).extracting(v -> "/api/v1/volumes/" + v.id()).contains(second);
        }
    }

    @Test
    void aChangeIsPushedToTheNodesItTouchesAndOnlyToThem() {
        Node touched = node();
        Node untouched = node();
        String tenant = tenant();
        try (AgentClient a = connected(touched); AgentClient b = connected(untouched)) {
            String volume = volumeOn(tenant, touched);
            DesiredConfig pushed = a.nextConfig().config();
            assertThat(pushed.volumes()).extracting(v -> "/api/v1/volumes/" + v.id()).containsExactly(volume);
            a.send(new AgentMessage.Ack(pushed.revision()));

            // A change of the touched node's volume again, then one of the untouched node: the untouched
            // agent's first frame is its own change, so nothing came for the two before.
            assertThat(api.patch(volume, "{\"overrides\":{\"weight\":700}}", null).status()).isEqualTo(200);
            assertThat(a.nextConfig().config().volumes().get(0).effectivePolicy().weight()).isEqualTo(700);
            String own = volumeOn(tenant, untouched);
            DesiredConfig forB = b.nextConfig().config();
            assertThat(forB.volumes()).extracting(v -> "/api/v1/volumes/" + v.id()).containsExactly(own);
            assertThat(b.pending()).isZero();
        }
    }

    @Test
    void acksAndNacksAreShownInTheNodesStatus() {
        Node node = node();
        String tenant = tenant();
        try (AgentClient agent = connected(node)) {
            JsonNode status = status(node);
            assertThat(status.get("connected").asBoolean()).isTrue();
            assertThat(status.get("replica").asString()).isNotBlank();
            assertThat(status.get("agentVersion").asString()).isEqualTo("test");
            assertThat(status.get("lastAckAt").isNull()).isFalse();
            assertThat(status.get("desiredRevision").asLong()).isEqualTo(status.get("appliedRevision").asLong());

            String volume = volumeOn(tenant, node);
            DesiredConfig pushed = agent.nextConfig().config();
            assertThat(status(node).get("desiredRevision").asLong()).isEqualTo(pushed.revision());
            assertThat(api.get(volume).json().get("policyApplied").asBoolean()).isFalse();
            agent.send(new AgentMessage.Nack(pushed.revision(), "disk full"));
            await().atMost(AgentClient.WAIT).untilAsserted(() ->
                    assertThat(status(node).get("lastError").asString()).contains("disk full"));
            assertThat(status(node).get("appliedRevision").asLong()).isLessThan(pushed.revision());

            agent.send(new AgentMessage.Ack(pushed.revision()));
            await().atMost(AgentClient.WAIT).untilAsserted(() -> {
                JsonNode after = status(node);
                assertThat(after.get("appliedRevision").asLong()).isEqualTo(pushed.revision());
                assertThat(after.get("lastError").isNull()).isTrue();
            });
            assertThat(api.get(volume).json().get("policyApplied").asBoolean()).isTrue();
        }
        await().atMost(AgentClient.WAIT).until(() -> !status(node).get("connected").asBoolean());
    }

    /**
     * The heartbeat puts the replica's rows back in line with its sessions
     * ({@link AgentRegistry#reconcile}): a connected node's row removed behind its back (as
     * another replica does after this one's long outage) comes back, and the row of a session
     * that closed while its delete could not run (the database was away) goes.
     */
    @Test
    void theHeartbeatRestoresAConnectedNodesRowAndRemovesAClosedSessionsOne() {
        Node node = node();
        Node gone = node();
        try (AgentClient agent = connected(node)) {
            jdbc.sql("DELETE FROM agent_connection WHERE node_id = ?").param(node.id()).update();
            jdbc.sql("""
                            INSERT INTO agent_connection (node_id, replica_id, session_id, agent_version, connected_at)
                            VALUES (?, ?, 'closed-long-ago', 'test', now())""")
                    .param(gone.id()).param(registry.replicaId()).update();
            // (not asserted before: this replica's own heartbeat may reconcile them at any moment)

            await().atMost(AgentClient.WAIT).untilAsserted(() -> {
                assertThat(status(node).get("connected").asBoolean()).as("the live session's row is back").isTrue();
                assertThat(status(gone).get("connected").asBoolean()).as("the closed session's row is gone").isFalse();
            });
        }
    }

    @Test
    void aNackRightAfterAnAckShowsBothTheAppliedRevisionAndTheError() {
        // the answers are stored in batches: the two must fold, not the later replace the earlier
        Node node = node();
        String tenant = tenant();
        try (AgentClient agent = connected(node)) {
            volumeOn(tenant, node);
            DesiredConfig first = agent.nextConfig().config();
            volumeOn(tenant, node);
            DesiredConfig second = agent.nextConfig().config();

            agent.send(new AgentMessage.Ack(first.revision()));
            agent.send(new AgentMessage.Nack(second.revision(), "disk full"));

            await().atMost(AgentClient.WAIT).untilAsserted(() -> {
                JsonNode status = status(node);
                assertThat(status.get("appliedRevision").asLong()).isEqualTo(first.revision());
                assertThat(status.get("lastError").asString()).isEqualTo("revision " + second.revision() + ": disk full");
            });
        }
    }

    @Test
    void aDataNodesStatusMessageIsShownInItsNode() {
        Node node = node();
        // A volume placed on the node: a status keeps only the node's own placements (AgentChannelHostileTest).
        UUID volume = UUID.fromString(volumeOn(tenant(), node).substring("/api/v1/volumes/".length()));
        try (AgentClient agent = connected(node)) {
            agent.send(new AgentMessage.NodeStatus("127.0.0.1:10809",
                    List.of(new AgentMessage.Export(volume, "t/v", 4096, 2))));
            await().atMost(AgentClient.WAIT).untilAsserted(() -> {
                // path(): until the status is stored, its members are missing (an assertion to retry, not an NPE)
                JsonNode report = status(node).path("dataNode");
                assertThat(report.path("listenAddress").asString("")).isEqualTo("127.0.0.1:10809");
                assertThat(report.path("exports").path(0).path("volumeId").asString("")).isEqualTo(volume.toString());
                assertThat(report.path("exports").path(0).path("clients").asInt(-1)).isEqualTo(2);
            });
        }
    }

    @Test
    void aWrongVersionIsToldSoAndClosed() {
        Node node = node();
        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.sendRaw("{\"type\":\"hello\",\"protocolVersion\":2,\"nodeId\":\"" + node.id() + "\",\"appliedRevision\":0}");
            assertThat(agent.next()).isInstanceOfSatisfying(AgentMessage.ErrorMessage.class,
                    e -> assertThat(e.code()).isEqualTo("unsupported-version"));
            AgentClient.Closed closed = agent.awaitClose();
            assertThat(closed.code()).isEqualTo(1002);
            assertThat(closed.reason()).contains("unsupported-version", "protocolVersion 2");
        }
    }

    @Test
    void garbageIsToldSoClosedAndCounted() {
        Node node = node();
        double before = rejected("malformed");
        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.sendRaw("this is not json");
            assertThat(agent.next()).isInstanceOfSatisfying(AgentMessage.ErrorMessage.class,
                    e -> assertThat(e.code()).isEqualTo("malformed"));
            assertThat(agent.awaitClose().code()).isEqualTo(1002);
        }
        assertThat(rejected("malformed")).isGreaterThan(before);
        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.sendRaw("{\"type\":\"metrics\",\"protocolVersion\":1}");
            assertThat(agent.next()).isInstanceOfSatisfying(AgentMessage.ErrorMessage.class,
                    e -> assertThat(e.code()).isEqualTo("unknown-type"));
            assertThat(agent.awaitClose().reason()).contains("unknown-type");
        }
    }

    @Test
    void anOversizedFrameIsToldSoAndClosed() {
        Node node = node();
        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.sendRaw("{\"type\":\"nack\",\"protocolVersion\":1,\"revision\":1,\"reason\":\""
                    + "x".repeat(AgentMessages.MAX_FRAME_BYTES) + "\"}");
            assertThat(agent.next()).isInstanceOfSatisfying(AgentMessage.ErrorMessage.class,
                    e -> assertThat(e.code()).isEqualTo("too-large"));
            assertThat(agent.awaitClose().code()).isEqualTo(1009);
        }
    }

    @Test
    void aNodesTokenNeverYieldsAnotherNodesConfig() {
        Node one = node();
        Node two = node();
        volumeOn(tenant(), two);
        try (AgentClient agent = AgentClient.open(port, one.token())) {
            agent.send(new AgentMessage.Hello(two.id(), 0, "test"));
            assertThat(agent.next()).isInstanceOfSatisfying(AgentMessage.ErrorMessage.class,
                    e -> assertThat(e.reason()).contains(one.id().toString()));
            assertThat(agent.awaitClose().code()).isEqualTo(1008);
        }
        assertThat(apiAs(one.token()).get("/api/v1/nodes/" + two.id() + "/desired-config").status()).isEqualTo(404);
        assertThat(apiAs(one.token()).get("/api/v1/nodes/" + one.id() + "/desired-config").status()).isEqualTo(200);
    }

    @Test
    void theDesiredConfigAnswers304UntilTheNodeChanges() {
        Node node = node();
        Node other = node();
        String tenant = tenant();
        HttpApi nodeApi = apiAs(node.token());
        HttpApi.Response first = nodeApi.get("/api/v1/nodes/" + node.id() + "/desired-config");
        String etag = first.etag();
        assertThat(etag).isEqualTo("\"" + first.json().get("revision").asLong() + "\"");

        assertThat(nodeApi.send("GET", "/api/v1/nodes/" + node.id() + "/desired-config", null, null,
                Map.of("If-None-Match", etag)).status()).isEqualTo(304);
        volumeOn(tenant, other); // moves the global revision, not this node's
        assertThat(nodeApi.send("GET", "/api/v1/nodes/" + node.id() + "/desired-config", null, null,
                Map.of("If-None-Match", etag)).status()).isEqualTo(304);
        volumeOn(tenant, node);
        HttpApi.Response changed = nodeApi.send("GET", "/api/v1/nodes/" + node.id() + "/desired-config", null, null,
                Map.of("If-None-Match", etag));
        assertThat(changed.status()).isEqualTo(200);
        assertThat(changed.etag()).isNotEqualTo(etag);
    }

    @Test
    void revokingTheNodeTokenClosesItsAgentsLiveSession() {
        Node node = node();
        try (AgentClient agent = connected(node)) {
            UUID tokenId = TokenSecrets.idOf(node.token());
            assertThat(api.delete("/api/v1/tokens/" + tokenId, null).status()).isEqualTo(204);
            assertThat(agent.next()).isInstanceOfSatisfying(AgentMessage.ErrorMessage.class,
                    e -> assertThat(e.code()).isEqualTo("unauthorized"));
            AgentClient.Closed closed = agent.awaitClose();
            assertThat(closed.code()).isEqualTo(1008);
            assertThat(closed.reason()).contains("revoked");
        }
        await().atMost(AgentClient.WAIT).until(() -> !status(node).get("connected").asBoolean());
    }

    @Test
    void deletingTheNodeClosesItsAgentsLiveSession() {
        Node node = node();
        try (AgentClient agent = connected(node)) {
            assertThat(api.delete("/api/v1/nodes/" + node.id(), null).status()).isEqualTo(204);
            AgentClient.Closed closed = agent.awaitClose();
            assertThat(closed.code()).isEqualTo(1008);
            assertThat(closed.reason()).contains("revoked");
        }
    }

    @Test
    void anotherTokenOfTheSameNodeKeepsItsSessionWhenOneIsRevoked() {
        Node node = node();
        String second = mintToken("node", null, node.id());
        try (AgentClient agent = connected(new Node(node.id(), second))) {
            assertThat(api.delete("/api/v1/tokens/" + TokenSecrets.idOf(node.token()), null).status()).isEqualTo(204);
            String volume = volumeOn(tenant(), node);
            // Still connected: the next frame is the pushed change, not an error.
            assertThat(agent.nextConfig().config().volumes()).extracting(v -> "/api/v1/volumes/" + v.id())
                    .containsExactly(volume);
        }
    }

    @Test
    void anAgentAheadOfTheControlPlaneGetsTheDesiredConfig() {
        Node node = node();
        volumeOn(tenant(), node);
        long desired = api.get("/api/v1/nodes/" + node.id() + "/desired-config").json().get("revision").asLong();
        try (AgentClient agent = AgentClient.open(port, node.token())) {
            // As after the control plane's database was restored from an older backup.
            agent.send(new AgentMessage.Hello(null, desired + 1_000, "test"));
            DesiredConfig config = agent.nextConfig().config();
            assertThat(config.revision()).isEqualTo(desired);
            assertThat(config.volumes()).hasSize(1);
        }
    }

    @Test
    void anAgentWhoseCachedConfigIsAnotherNodesOfTheSameRevisionGetsItsOwn() {
        Node node = node();
        Node other = node();
        String tenant = tenant();
        volumeOn(tenant, node);
        volumeOn(tenant, other);
        // One change of a tenant on both nodes stamps both snapshots with the same revision.
        assertThat(api.patch("/api/v1/tenants/" + tenant, "{\"weight\":321}", null).status()).isEqualTo(200);
        DesiredConfig mine = desiredConfig(node);
        DesiredConfig cached = desiredConfig(other);
        assertThat(cached.revision()).isEqualTo(mine.revision());
        // An agent without a node id whose state directory holds the other node's snapshot (its token was replaced).
        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.send(new AgentMessage.Hello(null, cached.revision(), "test", ConfigDigest.of(cached)));
            DesiredConfig config = agent.nextConfig().config();
            assertThat(config.nodeId()).isEqualTo(node.id());
            assertThat(config).isEqualTo(mine);
        }
    }

    @Test
    void anAgentThatHasTheDesiredConfigGetsNothingOnHello() {
        Node node = node();
        volumeOn(tenant(), node);
        DesiredConfig desired = desiredConfig(node);
        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.send(new AgentMessage.Hello(null, desired.revision(), "test", ConfigDigest.of(desired)));
            String volume = volumeOn(tenant(), node);
            DesiredConfig first = agent.nextConfig().config();
            assertThat(first.revision()).isGreaterThan(desired.revision());
            assertThat(first.volumes()).extracting(v -> "/api/v1/volumes/" + v.id()).contains(volume);
        }
    }

    /**
     * An agent's ack can be lost (the connection closes before it arrives, the agent restarts
     * after saving the snapshot and before acking): its next hello, with the revision and digest of
     * what the control plane would push, proves it applied it, and is recorded as the ack would
     * have been. Before, nothing was pushed, so nothing was acked, and the node and its volumes
     * showed the config as not applied until the node's next change.
     */
    @Test
    void aHelloProvingTheDesiredConfigIsAppliedIsRecordedAsItsAck() {
        Node node = node();
        volumeOn(tenant(), node);
        DesiredConfig desired = desiredConfig(node);
        assertThat(status(node).get("appliedRevision").isNull()).isTrue();
        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.send(new AgentMessage.Hello(node.id(), desired.revision(), "test", ConfigDigest.of(desired)));
            await().atMost(AgentClient.WAIT).until(() -> status(node).get("appliedRevision").asLong() == desired.revision());
            assertThat(status(node).get("desiredRevision").asLong()).isEqualTo(desired.revision());
        }
    }

    @Test
    void anAckOrNackForARevisionNeverOfferedIsNotRecorded() {
        Node node = node();
        try (AgentClient agent = connected(node)) {
            long applied = status(node).get("appliedRevision").asLong();
            agent.send(new AgentMessage.Ack(applied + 1_000));
            agent.send(new AgentMessage.Nack(applied + 1_001, "made up"));
            // Frames of one session are handled in order: once the status report shows, the two were handled.
            agent.send(new AgentMessage.NodeStatus("127.0.0.1:1", List.of()));
            await().atMost(AgentClient.WAIT).until(() -> !status(node).get("dataNode").isNull());
            JsonNode status = status(node);
            assertThat(status.get("appliedRevision").asLong()).isEqualTo(applied);
            assertThat(status.get("lastError").isNull()).isTrue();
        }
    }

    private DesiredConfig desiredConfig(Node node) {
        String json = apiAs(node.token()).get("/api/v1/nodes/" + node.id() + "/desired-config").body();
        return ((AgentMessage.ConfigPush) AgentMessages.decode(
                "{\"type\":\"config\",\"protocolVersion\":1,\"config\":" + json + "}")).config();
    }

    private double rejected(String code) {
        String metrics = api.get("/actuator/prometheus").body();
        return metrics.lines()
                .filter(l -> l.startsWith("weir_push_frames_rejected_total{") && l.contains("code=\"" + code + "\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
    }
}
