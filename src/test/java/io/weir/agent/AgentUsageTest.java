package io.weir.agent;

import static io.weir.support.Patience.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.weir.agent.support.AgentFixture;
import io.weir.agent.support.AgentFixture.Node;
import io.weir.agent.support.AgentFixture.RunningAgent;
import io.weir.support.TcpProxy;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.UsageReport;
import io.weir.scheduler.IoKind;
import io.weir.scheduler.Stats;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Usage from a real agent over a real {@code QosExecutor}, through a real WebSocket, into the
 * control plane's PostgreSQL and out of its usage API: the reporting interval comes with the
 * pushed config, every IO is counted exactly once, and reports whose acknowledgement was lost are
 * sent again after a reconnect and still counted once.
 */
class AgentUsageTest extends IntegrationTest {

    @TempDir
    Path stateDir;

    @Autowired
    MeterRegistry meters;

    private AgentFixture fixture;
    private Instant testStart;

    @BeforeEach
    void setUpFixture() {
        fixture = new AgentFixture(api);
        testStart = Instant.now();
    }

    @AfterEach
    void closeAgents() {
        fixture.close();
    }

    @Test
    void anAgentReportsEveryPushedIntervalAndTheUsageApiCountsEachIoExactlyOnce() {
        Node node = fixture.node("usage", 1_000_000);
        setReportInterval(node, 1);
        RunningAgent a = fixture.start(node, port, stateDir);
        await().atMost(PATIENCE).until(() -> a.agent().appliedConfig() != null
                && a.agent().appliedConfig().usageReportIntervalSeconds() == 1);

        io(a, node, IoKind.READ, 40);
        io(a, node, IoKind.WRITE, 25);

        // Reports come every second on their own; the counts reach the API without any help.
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(ops(node)).containsExactly(40L, 25L));
        UsageReport last = a.agent().reportUsageNow();
        await().atMost(PATIENCE).until(() -> a.agent().unacknowledgedUsage().stream()
                .noneMatch(r -> r.sequence() <= last.sequence()));
        assertThat(ops(node)).as("and not one more").containsExactly(40L, 25L);
        assertThat(a.agent().droppedUsageReports()).isZero();
    }

    @Test
    void reportsWhoseAckWasLostAreResentAfterTheReconnectAndCountedOnce() {
        Node node = fixture.node("resend", 1_000_000);
        try (TcpProxy link = new TcpProxy(port)) {
            RunningAgent a = fixture.start(node, link.port(), stateDir);
            await().atMost(PATIENCE).until(() -> a.agent().state().connected() && a.agent().appliedConfig() != null);
            io(a, node, IoKind.READ, 5);
            UsageReport first = a.agent().reportUsageNow();
            await().atMost(PATIENCE).until(() -> a.agent().unacknowledgedUsage().stream()
                    .noneMatch(r -> r.sequence() <= first.sequence()));
            double duplicatesBefore = duplicates();

            link.holdDownstream(); // reports still reach the control plane; its acks are lost
            io(a, node, IoKind.WRITE, 7);
            UsageReport unacked = a.agent().reportUsageNow();
            await().atMost(PATIENCE).untilAsserted(() -> assertThat(ops(node)).containsExactly(5L, 7L));
            assertThat(a.agent().unacknowledgedUsage()).extracting(UsageReport::sequence).contains(unacked.sequence());

            link.cut(); // the connection drops; the agent reconnects and resends what is unacknowledged

            await().atMost(PATIENCE).until(() -> a.agent().unacknowledgedUsage().stream()
                    .noneMatch(r -> r.sequence() <= unacked.sequence()));
            assertThat(ops(node)).as("the resent report is counted once").containsExactly(5L, 7L);
            assertThat(duplicates()).as("the control plane saw it again").isGreaterThan(duplicatesBefore);
        }
    }

    @Test
    void reportsDroppedFromAFullBufferWhileDisconnectedAreAGapTheUsageApiShows() {
        Node node = fixture.node("gap", 1_000_000);
        try (TcpProxy link = new TcpProxy(port)) {
            RunningAgent a = fixture.start(node, link.port(), stateDir, b -> b.usageBuffer(Duration.ofHours(1), 2));
            await().atMost(PATIENCE).until(() -> a.agent().state().connected() && a.agent().appliedConfig() != null);
            link.refuse(true);
            link.cut();
            await().atMost(PATIENCE).until(() -> !a.agent().state().connected());

            List<UsageReport> made = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                made.add(a.agent().reportUsageNow());
            }
            // Any report made before the cut was acked or is among the two kept; the first three made now are dropped.
            assertThat(a.agent().unacknowledgedUsage()).extracting(UsageReport::sequence)
                    .containsExactly(made.get(3).sequence(), made.get(4).sequence());
            assertThat(a.agent().droppedUsageReports()).isGreaterThanOrEqualTo(3);
            assertThat(made.get(4).gaps()).as("the loss travels with the next reports").isNotEmpty();

            link.refuse(false);
            await().atMost(PATIENCE).until(() -> a.agent().unacknowledgedUsage().stream()
                    .noneMatch(r -> r.sequence() <= made.get(4).sequence()));
            JsonNode gaps = series(node).get("gaps");
            assertThat(gaps).anySatisfy(g -> {
                assertThat(g.get("nodeId").asString()).isEqualTo(node.nodeId());
                assertThat(g.get("firstSequence").asLong()).isLessThanOrEqualTo(made.get(0).sequence());
                assertThat(g.get("lastSequence").asLong()).isEqualTo(made.get(2).sequence());
            });
        }
    }

    /** Puts a node override of the task shares with the cluster's tasks and this reporting interval. */
    private void setReportInterval(Node node, int seconds) {
        JsonNode shares = api.get("/api/v1/nodes/" + node.nodeId() + "/task-shares").json();
        ObjectNode body = tools.jackson.databind.json.JsonMapper.builder().build().createObjectNode();
        ArrayNode tasks = body.putArray("tasks");
        for (JsonNode t : shares.get("tasks")) {
            ObjectNode task = tasks.addObject();
            task.put("name", t.get("name").asString());
            task.put("share", t.get("share").asInt());
        }
        body.put("usageReportIntervalSeconds", seconds);
        HttpApi.Response r = api.put("/api/v1/nodes/" + node.nodeId() + "/task-shares", body.toString(), null);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("usageReportIntervalSeconds").asInt()).isEqualTo(seconds);
    }

    /** Runs {@code count} IOs of {@code kind} on the node's volume and waits until the scheduler has counted them. */
    private static void io(RunningAgent a, Node node, IoKind kind, int count) {
        long before = completed(a, node, kind);
        List<CompletableFuture<Integer>> done = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            done.add(a.executor().submit(node.volumeId(), kind, 4096, () -> 1));
        }
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).join();
        // A completion reaches the scheduler's counters on the worker's next pass, a moment later.
        await().atMost(PATIENCE).until(() -> completed(a, node, kind) == before + count);
    }

    private static long completed(RunningAgent a, Node node, IoKind kind) {
        Stats s = a.executor().snapshot(false).volumes().get(node.volumeId());
        return s == null ? 0 : kind == IoKind.READ ? s.readOps() : s.writeOps();
    }

    /** The volume's usage series over the whole test, in 1-minute points. */
    private JsonNode series(Node node) {
        Instant from = testStart.truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(1));
        Instant to = Instant.now().truncatedTo(ChronoUnit.MINUTES).plus(Duration.ofMinutes(2));
        HttpApi.Response r = api.get("/api/v1/usage/volumes/" + node.volumeId() + "?from=" + from + "&to=" + to + "&step=60s");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    /** The volume's reads and writes over the whole test, as the usage API sums them minute by minute. */
    private List<Long> ops(Node node) {
        long reads = 0;
        long writes = 0;
        for (JsonNode p : series(node).get("points")) {
            reads += p.get("readOps").asLong();
            writes += p.get("writeOps").asLong();
        }
        return List.of(reads, writes);
    }

    private double duplicates() {
        return meters.counter("weir.usage.reports", "outcome", "duplicate").count();
    }
}
