package io.weir.agent;

import static io.weir.support.Patience.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.agent.support.AgentFixture;
import io.weir.agent.support.AgentFixture.Node;
import io.weir.agent.support.AgentFixture.RunningAgent;
import io.weir.support.TcpProxy;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * A real agent over a real {@code QosExecutor}, connected over a real WebSocket on loopback to
 * the whole control plane over real PostgreSQL: what an operator's change does on a data node.
 */
class AgentEndToEndTest extends IntegrationTest {

    @TempDir
    Path stateDir;

    private AgentFixture fixture;

    @BeforeEach
    void setUpFixture() {
        fixture = new AgentFixture(api);
    }

    @AfterEach
    void closeAgents() {
        fixture.close();
    }

    private long desiredRevision(Node node) {
        return fixture.status(node).get("desiredRevision").asLong();
    }

    @Test
    void aPolicyChangeThroughTheApiReachesTheRunningAgentsSchedulerIsAckedAndReportedApplied() {
        Node node = fixture.node("e2e", 1000);
        RunningAgent a = fixture.start(node, port, stateDir);
        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(1000L)));
        await().atMost(PATIENCE).until(() -> a.agent().state().connected());

        fixture.setPolicyMaxIops(node, 2500);

        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(2500L)));
        // The executor is reconfigured a moment before the agent records the revision: wait for both.
        await().atMost(PATIENCE).until(() -> a.agent().state().appliedRevision() == desiredRevision(node));
        long revision = a.agent().state().appliedRevision();
        await().atMost(PATIENCE).untilAsserted(() -> {
            JsonNode status = fixture.status(node);
            assertThat(status.get("connected").asBoolean()).isTrue();
            assertThat(status.get("appliedRevision").asLong()).isEqualTo(revision);
            assertThat(status.get("lastAckAt").isNull()).isFalse();
            assertThat(status.get("lastError").isNull()).isTrue();
        });
        assertThat(a.applied()).endsWith(revision);
        assertThat(a.agent().state().lastError()).isNull();
    }

    @Test
    void anAgentGivenOnlyItsTokenLearnsItsNodeFromTheFirstConfigAndKeepsItAcrossARestart() {
        Node node = fixture.node("tokenonly", 1000);
        RunningAgent a = fixture.startWithTokenOnly(node, port, stateDir);

        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(1000L)));
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(a.agent().state().nodeId()).isEqualTo(node.id());
            assertThat(fixture.status(node).get("appliedRevision").asLong()).isEqualTo(desiredRevision(node));
        });
        a.agent().close();

        RunningAgent restarted = fixture.startWithTokenOnly(node, port, stateDir);
        // Known from the state directory before any message from the control plane.
        assertThat(restarted.agent().state().nodeId()).isEqualTo(node.id());
        assertThat(restarted.maxIops(node.volumeId())).contains(1000L);
    }

    @Test
    void anAgentWhoseTokenIsReplacedByAnotherNodesGetsThatNodesConfigEvenAtTheSameRevision() {
        Node first = fixture.node("moved-a", 1000);
        Node second = fixture.node("moved-b", 2000);
        // A volume of the second node under the first node's policy: one policy change stamps both snapshots alike.
        HttpApi.Response shared = api.post("/api/v1/tenants/" + second.tenantId() + "/volumes", "{\"name\":\""
                + unique("shared") + "\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + second.nodeId()
                + "\"],\"policyId\":\"" + first.policyId() + "\"}");
        assertThat(shared.status()).as(shared.toString()).isEqualTo(201);
        fixture.setPolicyMaxIops(first, 1500);
        long revision = desiredRevision(first);
        assertThat(desiredRevision(second)).isEqualTo(revision);

        RunningAgent a = fixture.startWithTokenOnly(first, port, stateDir);
        await().atMost(PATIENCE).until(() -> a.agent().state().appliedRevision() == revision);
        a.agent().close();

        // The same state directory, now with the second node's token: the cache holds the first node's snapshot.
        RunningAgent b = fixture.startWithTokenOnly(second, port, stateDir);
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(b.agent().state().nodeId()).isEqualTo(second.id());
            assertThat(b.maxIops(second.volumeId())).contains(2000L);
            assertThat(b.maxIops(first.volumeId())).isEmpty();
        });
        assertThat(b.agent().state().appliedRevision()).isEqualTo(revision);
    }

    @Test
    void aRefusedSnapshotIsNackedTheOldConfigStaysInForceAndTheNodeShowsTheReason() {
        Node node = fixture.node("nack", 1000);
        RunningAgent a = fixture.start(node, port, stateDir, b -> b.check(config -> {
            boolean tooFast = config.volumes().stream().anyMatch(v -> v.effectivePolicy().maxIops() != null
                    && v.effectivePolicy().maxIops() > 50_000);
            if (tooFast) {
                throw new IllegalArgumentException("this node's disk serves at most 50000 IOPS");
            }
        }));
        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(1000L)));
        await().atMost(PATIENCE).until(() -> a.agent().state().appliedRevision() == desiredRevision(node));
        long good = a.agent().state().appliedRevision();

        fixture.setPolicyMaxIops(node, 90_000);

        await().atMost(PATIENCE).untilAsserted(() -> {
            JsonNode status = fixture.status(node);
            assertThat(status.get("lastError").asString()).contains("this node's disk serves at most 50000 IOPS");
            assertThat(status.get("appliedRevision").asLong()).isEqualTo(good);
            assertThat(status.get("desiredRevision").asLong()).isGreaterThan(good);
        });
        assertThat(a.maxIops(node.volumeId())).contains(1000L);
        assertThat(a.agent().state().appliedRevision()).isEqualTo(good);
        assertThat(a.agent().state().lastError()).contains("refused revision").contains("50000 IOPS");
        // the agent sends its nack and then tells its listener: the control plane may have it first
        await().atMost(PATIENCE).until(() -> !a.rejected().isEmpty());
        assertThat(a.rejected()).containsExactly("this node's disk serves at most 50000 IOPS");

        fixture.setPolicyMaxIops(node, 3000);

        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(3000L)));
        await().atMost(PATIENCE).untilAsserted(() -> {
            JsonNode status = fixture.status(node);
            assertThat(status.get("appliedRevision").asLong()).isEqualTo(status.get("desiredRevision").asLong());
            assertThat(status.get("lastError").isNull()).as("cleared once a later revision is applied").isTrue();
        });
    }

    @Test
    void anAgentRestartedWhileTheControlPlaneIsDownEnforcesItsCachedConfig() throws Exception {
        Node node = fixture.node("cache", 1000);
        try (TcpProxy controlPlane = new TcpProxy(port)) {
            RunningAgent first = fixture.start(node, controlPlane.port(), stateDir);
            fixture.setPolicyMaxIops(node, 4321);
            await().atMost(PATIENCE).until(() -> first.maxIops(node.volumeId()).equals(Optional.of(4321L)));
            await().atMost(PATIENCE).until(() -> first.agent().state().appliedRevision() == desiredRevision(node));
            long revision = first.agent().state().appliedRevision();
            first.agent().close();
            first.executor().close();

            controlPlane.refuse(true);
            controlPlane.cut();
            RunningAgent second = fixture.start(node, controlPlane.port(), stateDir);

            // start() returned: the cached snapshot is in force, with no control plane to ask.
            assertThat(second.maxIops(node.volumeId())).contains(4321L);
            assertThat(second.applied()).containsExactly(revision);
            assertThat(second.agent().state().appliedRevision()).isEqualTo(revision);
            await().atMost(PATIENCE).until(() -> second.agent().state().lastError() != null);
            assertThat(second.agent().state().connected()).isFalse();

            controlPlane.refuse(false);
            await().atMost(PATIENCE).until(() -> second.agent().state().connected());
            fixture.setPolicyMaxIops(node, 1234);
            await().atMost(PATIENCE).until(() -> second.maxIops(node.volumeId()).equals(Optional.of(1234L)));
        }
    }

    @Test
    void aSilentConnectionIsDroppedWithinTheHeartbeatTimeoutAndTheAgentReconnects() {
        Node node = fixture.node("halfopen", 1000);
        try (TcpProxy link = new TcpProxy(port)) {
            RunningAgent a = fixture.start(node, link.port(), stateDir, b -> b
                    .heartbeatInterval(Duration.ofMillis(200)).heartbeatTimeout(Duration.ofSeconds(1)));
            await().atMost(PATIENCE).until(() -> a.agent().state().connected());

            link.freeze(); // packets vanish, no FIN, no RST: a half-open connection

            // the agent marks itself disconnected, then records why
            await().atMost(PATIENCE).untilAsserted(() -> assertThat(a.agent().state().lastError()).contains("half-open"));
            assertThat(a.agent().state().connected()).isFalse();
            assertThat(a.agent().state().sinceLastContact()).isGreaterThanOrEqualTo(Duration.ofSeconds(1));

            link.cut(); // the network heals
            await().atMost(PATIENCE).until(() -> a.agent().state().connected());
            fixture.setPolicyMaxIops(node, 777);
            await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(777L)));
        }
    }

    @Test
    void aNodeTokenNeverYieldsAnotherNodesConfigOverTheWebSocketOrHttp() {
        Node one = fixture.node("tok1", 1000);
        Node two = fixture.node("tok2", 2000);
        Node impostor = new Node(two.nodeId(), one.token(), two.tenantId(), two.policyId(), two.volumeId());

        RunningAgent a = fixture.start(impostor, port, stateDir);

        // Refused at the hello (the token's node is not the agent's), or node 1's snapshot nacked:
        // either way node 2's config never reaches this agent.
        await().atMost(PATIENCE).until(() -> a.agent().state().lastError() != null);
        assertThat(a.agent().state().appliedRevision()).isZero();
        assertThat(a.maxIops(two.volumeId())).isEmpty();
        assertThat(a.applied()).isEmpty();

        HttpApi asNodeOne = apiAs(one.token());
        // Another node's config answers 404, as anything the caller may not see.
        assertThat(asNodeOne.get("/api/v1/nodes/" + two.nodeId() + "/desired-config").status()).isEqualTo(404);
        assertThat(asNodeOne.get("/api/v1/nodes/" + one.nodeId() + "/desired-config").status()).isEqualTo(200);
    }
}
