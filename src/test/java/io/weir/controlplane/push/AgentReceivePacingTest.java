package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.AgentMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A node that floods the agent channel with valid frames is slowed to its receive rate, neither
 * closed nor able to delay another node (issue 23: one node gets a bounded share of the replica).
 * Real WebSockets into the real application and PostgreSQL. The context runs with a small burst
 * (20 frames) and rate (50 a second) so that the paced part takes seconds, not minutes; the
 * defaults (4,000 and 100) differ in scale only.
 */
@TestPropertySource(properties = {"weir.push.receive-burst=" + AgentReceivePacingTest.BURST,
    "weir.push.receive-rate=" + AgentReceivePacingTest.RATE})
class AgentReceivePacingTest extends IntegrationTest {

    static final int BURST = 20;
    static final int RATE = 50;

    /** Reports the flooder sends at once: far past its burst. */
    private static final int FLOOD = 220;

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private record Node(UUID id, String token) {
    }

    private Node node() {
        HttpApi.Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("paced") + "\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return new Node(UUID.fromString(r.json().get("id").asString()), r.json().get("token").asString());
    }

    private AgentClient connected(Node node) {
        AgentClient agent = AgentClient.open(port, node.token());
        agent.send(new AgentMessage.Hello(node.id(), 0, "test"));
        agent.send(new AgentMessage.Ack(agent.nextConfig().config().revision()));
        return agent;
    }

    /** A valid report of the node's tasks only (it needs no volume). */
    private String taskReport(long sequence) {
        Instant to = clock.instant();
        return "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":" + sequence + ",\"from\":\"" + to.minusSeconds(10)
                + "\",\"to\":\"" + to + "\",\"volumes\":[],\"tasks\":[{\"name\":\"foreground\",\"ops\":1,\"cpuNanos\":1,"
                + "\"effectiveShare\":1.0}]}";
    }

    private static JsonNode nextJson(AgentClient agent) {
        return JSON.readTree(agent.nextRaw());
    }

    @Test
    void aFloodingNodeIsReadAtItsRateNotClosedAndAnotherNodeIsAnsweredMeanwhile() {
        Node flooder = node();
        Node honest = node();
        try (AgentClient bad = connected(flooder); AgentClient good = connected(honest)) {
            long start = System.nanoTime();
            for (int i = 1; i <= FLOOD; i++) {
                bad.sendRaw(taskReport(i));
            }
            // Past its burst the flooder's frames wait in its socket; the honest node's are read at once.
            good.sendRaw(taskReport(1));
            JsonNode goodAck = nextJson(good);
            assertThat(goodAck.get("sequence").asLong()).as(goodAck.toString()).isEqualTo(1);
            int floodAckedBeforeHonest = bad.pending();
            for (long sequence = 1; sequence <= FLOOD; sequence++) {
                JsonNode ack = nextJson(bad);
                assertThat(ack.get("type").asString()).as(ack.toString()).isEqualTo("usageAck");
                assertThat(ack.get("sequence").asLong()).isEqualTo(sequence);
                assertThat(ack.has("refused")).as(ack.toString()).isFalse();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            // Its hello and ack took 2 tokens: at most BURST - 2 reports pass at once, the rest at RATE a second.
            double paced = (double) (FLOOD - (BURST - 2)) / RATE;
            System.out.printf("pacing: %d reports acknowledged in %.2f s (paced part %.2f s at least); "
                    + "%d of them before the honest node's%n", FLOOD, seconds, paced, floodAckedBeforeHonest);
            assertThat(seconds).as("the flood is read at the rate, not at once").isGreaterThanOrEqualTo(paced * 0.9);
            assertThat(floodAckedBeforeHonest).as("the honest report did not wait for the flood").isLessThan(FLOOD);
            assertThat(bad.closedNow(Duration.ZERO)).as("the flooder is slowed, not closed").isNull();
            bad.sendRaw(taskReport(FLOOD + 1));
            assertThat(nextJson(bad).get("sequence").asLong()).isEqualTo(FLOOD + 1);
        }
    }
}
