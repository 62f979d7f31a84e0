package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.micrometer.core.instrument.MeterRegistry;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.LogCapture;
import io.weir.controlplane.support.RawRequest;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A hostile or buggy node on the agent channel (issue 23, items 6, 10 and 11): poison usage
 * reports are refused one by one at the protocol boundary and answered, the connection stays and
 * an honest node beside it is never closed; bad hello and status frames are refused in one WARN
 * line; duplicate keys are refused; the upgrade's refusals are problems. Raw frames through the
 * JDK's WebSocket client into the real application and PostgreSQL; the context's clock is the
 * tests' {@code MutableClock}, reset to now before each test.
 */
class AgentChannelHostileTest extends IntegrationTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    FrameBudget partialFrames;

    @Autowired
    MeterRegistry meters;

    @Autowired
    JdbcTemplate jdbc;

    record Node(UUID id, String token) {
    }

    private Node node() {
        HttpApi.Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("hostile") + "\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return new Node(UUID.fromString(r.json().get("id").asString()), r.json().get("token").asString());
    }

    private UUID volumeOn(Node node) {
        HttpApi.Response t = api.post("/api/v1/tenants", "{\"name\":\"" + unique("t") + "\"}");
        HttpApi.Response r = api.post("/api/v1/tenants/" + t.json().get("id").asString() + "/volumes", "{\"name\":\""
                + unique("v") + "\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + node.id() + "\"]}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return UUID.fromString(r.json().get("id").asString());
    }

    private AgentClient connected(Node node) {
        AgentClient agent = AgentClient.open(port, node.token());
        agent.send(new AgentMessage.Hello(node.id(), 0, "test"));
        agent.send(new AgentMessage.Ack(agent.nextConfig().config().revision()));
        return agent;
    }

    /** A usage frame with one volume, its figures as JSON text so that tests can send any value. */
    private static String usage(long sequence, Instant from, Instant to, UUID volume, String readOps, String queueDepth,
            String taskName) {
        return "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":" + sequence + ",\"from\":\"" + from + "\",\"to\":\""
                + to + "\",\"volumes\":[{\"volumeId\":\"" + volume + "\",\"readOps\":" + readOps + ",\"writeOps\":0,"
                + "\"readBytes\":4096,\"writeBytes\":0,\"latencyP50Us\":100,\"latencyP99Us\":200,\"latencyMaxUs\":300,"
                + "\"queueDepth\":" + queueDepth + ",\"throttledNanos\":0,\"rejected\":0,\"cpuNanos\":1000}],"
                + "\"tasks\":[{\"name\":" + JSON.writeValueAsString(taskName) + ",\"ops\":1,\"cpuNanos\":1,"
                + "\"effectiveShare\":1.0}]}";
    }

    private String honest(long sequence, UUID volume) {
        Instant to = clock.instant();
        return usage(sequence, to.minusSeconds(10), to, volume, "1", "0.5", "foreground");
    }

    private static JsonNode nextJson(AgentClient agent) {
        return JSON.readTree(agent.nextRaw());
    }

    private double counter(String name) {
        return meters.counter(name).count();
    }

    @Test
    void poisonReportsAreEachRefusedAloneAnsweredAndTheConnectionStays() {
        Node node = node();
        UUID volume = volumeOn(node);
        Instant now = clock.instant();
        double invalidBefore = counter("weir.push.usage.reports.invalid");
        List<String> poison = List.of(
                usage(1, now.minusSeconds(10), now, volume, String.valueOf(Long.MAX_VALUE), "0.5", "foreground"),
                usage(2, now.minusSeconds(10), now.plus(Duration.ofDays(30)), volume, "1", "0.5", "foreground"),
                usage(3, now.minusSeconds(10), now, volume, "1", "0.5", "fore\u0000ground"),
                usage(4, now.minusSeconds(10), now, volume, "1", "0.5", "x".repeat(10_000)),
                usage(5, now.minusSeconds(10), now, volume, "1", "1e308", "foreground"),
                usage(6, Instant.parse("9999-01-01T00:00:00Z"), Instant.parse("9999-01-01T00:00:10Z"), volume, "1", "0.5",
                        "foreground"));

        try (AgentClient agent = connected(node)) {
            for (String frame : poison) {
                agent.sendRaw(frame);
            }
            agent.sendRaw(honest(7, volume));
            for (long sequence = 1; sequence <= 6; sequence++) {
                JsonNode answer = nextJson(agent);
                assertThat(answer.get("type").asString()).as(answer.toString()).isEqualTo("usageAck");
                assertThat(answer.get("sequence").asLong()).isEqualTo(sequence);
                assertThat(answer.has("refused")).as("report %d is answered as refused: %s", sequence, answer).isTrue();
            }
            JsonNode stored = nextJson(agent);
            assertThat(stored.get("sequence").asLong()).isEqualTo(7);
            assertThat(stored.has("refused")).as(stored.toString()).isFalse();
        }
        assertThat(counter("weir.push.usage.reports.invalid") - invalidBefore).isEqualTo(6);
    }

    @Test
    void anHonestNodeBesideAPoisonNodeIsAcknowledgedAndNeverClosed() {
        Node poisoner = node();
        Node honest = node();
        UUID theirs = volumeOn(poisoner);
        UUID mine = volumeOn(honest);
        Instant now = clock.instant();
        try (AgentClient bad = connected(poisoner); AgentClient good = connected(honest)) {
            for (int i = 1; i <= 20; i++) {
                // readOps 2^63 - 11, a 30-day interval, a NUL: each once broke a whole batch.
                bad.sendRaw(usage(3 * i - 2, now.minusSeconds(10), now, theirs, String.valueOf(Long.MAX_VALUE - 10),
                        "0.5", "foreground"));
                bad.sendRaw(usage(3 * i - 1, now.minusSeconds(10), now.plus(Duration.ofDays(30)), theirs, "1", "0.5",
                        "foreground"));
                bad.sendRaw(usage(3 * i, now.minusSeconds(10), now, theirs, "1", "0.5", "a\u0000b"));
                good.sendRaw(honest(i, mine));
            }
            for (long sequence = 1; sequence <= 20; sequence++) {
                JsonNode answer = nextJson(good);
                assertThat(answer.get("sequence").asLong()).isEqualTo(sequence);
                assertThat(answer.has("refused")).as(answer.toString()).isFalse();
            }
            for (int i = 0; i < 60; i++) {
                assertThat(nextJson(bad).has("refused")).isTrue();
            }
            // Both connections still work: one more report each is answered.
            good.sendRaw(honest(21, mine));
            assertThat(nextJson(good).get("sequence").asLong()).isEqualTo(21);
            bad.sendRaw(honest(61, theirs));
            assertThat(nextJson(bad).get("sequence").asLong()).isEqualTo(61);
        }
    }

    @Test
    void aNulInHelloIsRefusedInOneWarnLineWithoutAStackTrace() {
        Node node = node();
        try (LogCapture logs = LogCapture.open(); AgentClient agent = AgentClient.open(port, node.token())) {
            agent.sendRaw("{\"type\":\"hello\",\"protocolVersion\":1,\"appliedRevision\":0,\"agentVersion\":\"1.0\\u0000\"}");
            JsonNode error = nextJson(agent);
            assertThat(error.get("type").asString()).isEqualTo("error");
            assertThat(error.get("code").asString()).isEqualTo("malformed");
            assertThat(error.get("reason").asString()).contains("agentVersion").contains("control character");
            assertThat(agent.awaitClose().code()).isEqualTo(1002);
            assertThat(logs.atLeast(Level.ERROR)).as("nothing at ERROR").isEmpty();
            assertThat(logs.atLeast(Level.WARN)).anySatisfy(line -> assertThat(line).contains("agentVersion"));
        }
    }

    @Test
    void aStatusWithANulOrANegativeSizeIsRefusedAndForeignExportsAreLeftOut() {
        Node node = node();
        Node other = node();
        UUID mine = volumeOn(node);
        UUID foreign = volumeOn(other);
        try (LogCapture logs = LogCapture.open()) {
            try (AgentClient agent = connected(node)) {
                agent.sendRaw("{\"type\":\"status\",\"protocolVersion\":1,\"listenAddress\":\"a\\u0000b\"}");
                assertThat(nextJson(agent).get("code").asString()).isEqualTo("malformed");
                agent.awaitClose();
            }
            try (AgentClient agent = connected(node)) {
                agent.sendRaw("{\"type\":\"status\",\"protocolVersion\":1,\"exports\":[{\"volumeId\":\"" + mine
                        + "\",\"name\":\"t/v\",\"sizeBytes\":-5,\"clients\":0}]}");
                assertThat(nextJson(agent).get("reason").asString()).contains("sizeBytes");
                agent.awaitClose();
            }
            assertThat(logs.atLeast(Level.ERROR)).isEmpty();
        }
        try (AgentClient agent = connected(node)) {
            agent.send(new AgentMessage.NodeStatus("127.0.0.1:10809", List.of(
                    new AgentMessage.Export(mine, "t/mine", 1048576, 1),
                    new AgentMessage.Export(foreign, "other/theirs", 1048576, 0))));
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                List<String> s = jdbc.queryForList("SELECT status::text FROM agent_report WHERE node_id = ?", String.class,
                        node.id());
                return !s.isEmpty() && s.get(0).contains(mine.toString());
            });
            String status = jdbc.queryForObject("SELECT status::text FROM agent_report WHERE node_id = ?", String.class,
                    node.id());
            assertThat(status).contains(mine.toString()).doesNotContain(foreign.toString());
        }
    }

    @Test
    void duplicateKeysAreRefusedInWeirsOwnWords() {
        Node node = node();
        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.sendRaw("{\"type\":\"hello\",\"protocolVersion\":1,\"appliedRevision\":0,\"appliedRevision\":5}");
            JsonNode error = nextJson(agent);
            assertThat(error.get("code").asString()).isEqualTo("malformed");
            assertThat(error.get("reason").asString()).contains("twice").doesNotContain("Duplicate Object property");
            agent.awaitClose();
        }
        try (AgentClient agent = AgentClient.open(port, node.token())) {
            agent.sendRaw("{\"type\":\"hello\",\"protocolVersion\":1,\"appliedRevision\":\"zero\"}");
            String reason = nextJson(agent).get("reason").asString();
            assertThat(reason).contains("appliedRevision").doesNotContain("Cannot deserialize").doesNotContain("`");
        }
    }

    @Test
    void theUpgradesRefusalsAreProblems() {
        Node node = node();
        RawRequest.Response noUpgrade = RawRequest.send(port, "GET", "/api/v1/agent/connect",
                "Authorization: Bearer " + node.token());
        assertThat(noUpgrade.status()).isEqualTo(400);
        assertThat(noUpgrade.contentType()).startsWith("application/problem+json");
        assertThat(noUpgrade.body()).contains("\"status\":400");

        RawRequest.Response badVersion = RawRequest.send(port, "GET", "/api/v1/agent/connect",
                "Authorization: Bearer " + node.token(), "Upgrade: websocket", "Connection: Upgrade",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 7");
        assertThat(badVersion.status()).isEqualTo(426);
        assertThat(badVersion.contentType()).startsWith("application/problem+json");
    }

    @Test
    void unfinishedFramesOfAllSessionsStayWithinTheReplicasBudget() throws Exception {
        // Assumes the default budget, FrameBudget.DEFAULT_BUDGET_CHARS (16 Mi characters): 3
        // sessions that each start a frame of 8 Mi - 100 characters and never finish it pass it.
        // Each session's part is held by the replica before the next session starts, so that the
        // last one is the one past the budget.
        int sessions = (int) (FrameBudget.DEFAULT_BUDGET_CHARS / (AgentMessages.MAX_FRAME_BYTES - 1)) + 1;
        List<AgentClient> agents = new java.util.ArrayList<>();
        String piece = "{\"type\":\"hello\",\"protocolVersion\":1,\"agentVersion\":\"" + "x".repeat(AgentMessages.MAX_FRAME_BYTES - 100);
        try {
            for (int i = 0; i < sessions; i++) {
                AgentClient a = AgentClient.open(port, node().token());
                agents.add(a);
                long before = partialFrames.held();
                a.sendPart(piece);
                if (i < sessions - 1) {
                    org.awaitility.Awaitility.await().atMost(AgentClient.WAIT)
                            .until(() -> partialFrames.held() - before == piece.length());
                }
            }
            assertThat(agents.get(sessions - 1).awaitClose().code()).as("the session past the budget").isEqualTo(1013);
            assertThat(agents.get(0).closedNow(Duration.ofMillis(100))).as("a session within the budget").isNull();
        } finally {
            agents.forEach(AgentClient::close);
        }
}
}
