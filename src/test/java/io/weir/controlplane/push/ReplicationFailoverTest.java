package io.weir.controlplane.push;

import static io.weir.controlplane.push.ReplicationFixture.copy;
import static io.weir.controlplane.push.ReplicationFixture.nextReplication;
import static io.weir.controlplane.push.ReplicationFixture.report;
import static io.weir.controlplane.push.ReplicationFixture.status;
import static io.weir.protocol.AgentMessage.CopyState.outOfSync;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.weir.controlplane.audit.AuditLog;
import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.node.NodeService;
import io.weir.controlplane.push.ReplicationFixture.Node;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.volume.ReplicationFailover;
import io.weir.controlplane.volume.ReplicationProperties;
import io.weir.protocol.ReplicationConfig;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.TestPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import tools.jackson.databind.JsonNode;

/**
 * Failover of replicated volumes with real agents: the test drives the scan itself (the
 * application's scheduled one waits an hour here) and moves the clock past the lease of
 * {@value #LEASE_SECONDS} s, so each step is decided by the test, not by timing.
 * {@link ReplicationFailoverScheduleTest} shows the scheduled scan doing the same by itself.
 *
 * <p>The other test classes' context, on the same database, scans every second with the default
 * lease of 10 s; each test here decides within moments of its disconnect, well inside that.
 */
@TestPropertySource(properties = {"weir.replication.lease=" + ReplicationFailoverTest.LEASE_SECONDS + "s",
        "weir.replication.check-interval=1h", "weir.replication.reconnect-grace=0s"})
class ReplicationFailoverTest extends IntegrationTest {

    static final int LEASE_SECONDS = 2;

    /** Past the lease. */
    private static final Duration PAST_LEASE = Duration.ofSeconds(LEASE_SECONDS + 1);

    @Autowired
    ReplicationFailover failover;

    @Autowired
    MeterRegistry meters;

    @Autowired
    JdbcClient jdbc;

    @Autowired
    NodeService nodes;

    @Autowired
    ConfigRevisions revisions;

    @Autowired
    AuditLog audit;

    @Autowired
    PlatformTransactionManager transactions;

    private ReplicationFixture fx;

    @BeforeEach
    void fixture() {
        fx = new ReplicationFixture(api, port, s -> unique(s));
    }

    /** A scanner as another control-plane replica, or this one just restarted, would run it (no reconnect grace). */
    private ReplicationFailover anotherScanner() {
        return anotherScanner(Duration.ZERO);
    }

    private ReplicationFailover anotherScanner(Duration reconnectGrace) {
        return new ReplicationFailover(jdbc, nodes, revisions, audit, clock,
                new ReplicationProperties(Duration.ofHours(1), Duration.ofSeconds(LEASE_SECONDS), reconnectGrace), transactions,
                new SimpleMeterRegistry());
    }

    @Test
    void anInSyncConnectedCopyIsPromotedOnceThePrimaryIsGoneLongerThanTheLease() {
        Node a = fx.node();
        Node b = fx.node();
        UUID volume = fx.volume(a, b);
        double failoversBefore = meters.get("weir.replication.failovers").counter().count();
        try (AgentClient agentA = fx.agent(a); AgentClient agentB = fx.agent(b)) {
            fx.disconnect(agentA, a);
            assertThat(failover.check()).as("gone, but not yet for the lease").isZero();
            assertThat(fx.volumeJson(volume).get("primaryNodeId").asString()).isEqualTo(a.id().toString());

            clock.advance(PAST_LEASE);
            assertThat(failover.check()).isEqualTo(1);

            JsonNode promoted = fx.volumeJson(volume);
            assertThat(promoted.get("primaryNodeId").asString()).isEqualTo(b.id().toString());
            assertThat(promoted.get("epoch").asLong()).isEqualTo(2);
            assertThat(promoted.get("degraded").asBoolean()).isTrue();
            JsonNode old = fx.copy(volume, a);
            assertThat(old.get("state").asString()).isEqualTo("outOfSync");
            assertThat(old.get("inSync").asBoolean()).isFalse();
            assertThat(old.get("resyncRemainingBytes").asLong()).as("copied in full when it returns").isEqualTo(1048576);
            ReplicationConfig onB = nextReplication(agentB, volume, r -> r.epoch() == 2);
            assertThat(onB.primaryNodeId()).isEqualTo(b.id());
            assertThat(onB.syncSequence()).as("one above what the old primary reported").isEqualTo(1);
            assertThat(onB.copy(a.id()).inSync()).isFalse();
            assertThat(onB.copy(b.id()).inSync()).isTrue();
            assertThat(onB.copies().get(0).nodeId()).as("the primary first").isEqualTo(b.id());
            assertThat(meters.get("weir.replication.failovers").counter().count()).isEqualTo(failoversBefore + 1);
            assertThat(meters.get("weir.volumes.degraded").gauge().value()).isGreaterThanOrEqualTo(1);
            JsonNode entry = api.get("/api/v1/audit?resourceType=volume&resourceId=" + volume).json().get("items")
                    .valueStream().filter(e -> e.get("action").asString().equals("volume.failover")).findFirst().orElseThrow();
            assertThat(entry.get("after").get("primaryNodeId").asString()).isEqualTo(b.id().toString());
            assertThat(entry.get("after").get("epoch").asLong()).isEqualTo(2);

            // The old primary comes back still reporting as the primary of epoch 1: ignored.
            try (AgentClient back = fx.agent(a)) {
                back.send(status(null, report(volume, 1, 9, copy(b, outOfSync, 1))));
                back.send(status("127.0.0.1:7003"));
                ReplicationConfig seen = nextReplication(agentB, volume, r -> r.copy(a.id()).address() != null);
                assertThat(seen.copy(b.id()).inSync()).isTrue();
                assertThat(seen.syncSequence()).isEqualTo(1);
                assertThat(fx.volumeJson(volume).get("primaryNodeId").asString()).isEqualTo(b.id().toString());
                assertThat(failover.check()).as("the new primary is connected").isZero();
            }
        }
    }

    /**
     * When the control plane itself was unreachable (an ingress restarting, a partition on its
     * side), every agent reconnects in the order its backoff gives. A copy whose agent is back
     * before the primary's is not promoted on its return: it is a candidate once it was connected
     * from before the primary was lost, or for the reconnect grace. Before, the first copy back
     * replaced about half of the healthy primaries (found by review).
     */
    @Test
    void aCopyThatReconnectsAfterThePrimaryWasLostWaitsTheGraceBeforeItIsPromoted() {
        Node a = fx.node();
        Node b = fx.node();
        UUID volume = fx.volume(a, b);
        ReplicationFailover scanner = anotherScanner(Duration.ofSeconds(30));
        clock.advance(Duration.ofSeconds(31)); // past the scanner's own grace since its start
        try (AgentClient agentA = fx.agent(a); AgentClient agentB = fx.agent(b)) {
            fx.disconnect(agentA, a); // the control plane's outage: both agents lose it
            fx.disconnect(agentB, b);
            assertThat(scanner.check()).isZero();
            clock.advance(PAST_LEASE);
            try (AgentClient backB = fx.agent(b)) { // b's agent is back first
                assertThat(scanner.check()).as("b, back after a was lost, within the grace").isZero();
                assertThat(fx.volumeJson(volume).get("primaryNodeId").asString()).isEqualTo(a.id().toString());
                clock.advance(Duration.ofSeconds(31));
                assertThat(scanner.check()).as("a still gone after b's grace").isEqualTo(1);
                assertThat(fx.volumeJson(volume).get("primaryNodeId").asString()).isEqualTo(b.id().toString());
            }
        }
    }

    @Test
    void noCopyIsPromotedWhenTheOnlyOtherCopyIsOutOfSync() {
        Node a = fx.node();
        Node b = fx.node();
        UUID volume = fx.volume(a, b);
        try (AgentClient agentA = fx.agent(a); AgentClient agentB = fx.agent(b)) {
            agentA.send(status(null, report(volume, 1, 1, copy(b, outOfSync, 4096))));
            nextReplication(agentA, volume, r -> r.syncSequence() == 1);
            fx.disconnect(agentA, a);

            failover.check();
            clock.advance(Duration.ofHours(1));
            assertThat(failover.check()).isZero();

            JsonNode kept = fx.volumeJson(volume);
            assertThat(kept.get("primaryNodeId").asString()).as("unavailable until it returns").isEqualTo(a.id().toString());
            assertThat(kept.get("epoch").asLong()).isEqualTo(1);
            assertThat(kept.get("degraded").asBoolean()).isTrue();
        }
    }

    @Test
    void aScannerJustStartedWaitsTheLeaseBeforeItPromotes() {
        Node a = fx.node();
        Node b = fx.node();
        UUID volume = fx.volume(a, b);
        try (AgentClient agentA = fx.agent(a); AgentClient agentB = fx.agent(b)) {
            fx.disconnect(agentA, a);
            clock.advance(Duration.ofHours(1)); // the primary has been gone long before this scanner starts

            ReplicationFailover restarted = anotherScanner();
            assertThat(restarted.check()).as("its lease counts from its start").isZero();
            assertThat(fx.volumeJson(volume).get("epoch").asLong()).isEqualTo(1);

            clock.advance(PAST_LEASE);
            assertThat(restarted.check()).isEqualTo(1);
            assertThat(fx.volumeJson(volume).get("primaryNodeId").asString()).isEqualTo(b.id().toString());
        }
    }

    /**
     * After an outage of the control plane, agents come back within their largest reconnect delay
     * (full jitter up to {@code --backoff-max}, 30 s by default), not within the lease: a scanner
     * just started that counted only the lease deposed healthy primaries whose agents were still
     * waiting to reconnect.
     */
    @Test
    void aScannerJustStartedGivesAgentsTheirLongestReconnectDelayBeforeTheLeaseCounts() {
        Duration grace = Duration.ofSeconds(20);
        Node a = fx.node();
        Node b = fx.node();
        UUID volume = fx.volume(a, b);
        try (AgentClient agentA = fx.agent(a); AgentClient agentB = fx.agent(b)) {
            fx.disconnect(agentA, a); // the primary's agent, waiting out its backoff

            ReplicationFailover restarted = anotherScanner(grace);
            assertThat(restarted.check()).isZero();
            clock.advance(PAST_LEASE);
            assertThat(restarted.check()).as("past the lease, within the grace").isZero();
            clock.advance(grace.minus(PAST_LEASE).plusMillis(500));
            assertThat(restarted.check()).as("past the grace, within the lease after it").isZero();
            assertThat(fx.volumeJson(volume).get("epoch").asLong()).isEqualTo(1);

            clock.advance(PAST_LEASE);
            assertThat(restarted.check()).isEqualTo(1);
            assertThat(fx.volumeJson(volume).get("primaryNodeId").asString()).isEqualTo(b.id().toString());
        }
    }

    @Test
    void twoScannersAtOnceMakeOnePromotion() {
        Node a = fx.node();
        Node b = fx.node();
        Node c = fx.node();
        UUID volume = fx.volume(a, b, c);
        try (AgentClient agentA = fx.agent(a); AgentClient agentB = fx.agent(b); AgentClient agentC = fx.agent(c)) {
            fx.disconnect(agentA, a);
            ReplicationFailover one = anotherScanner();
            ReplicationFailover two = anotherScanner();
            one.check();
            two.check();
            clock.advance(PAST_LEASE);

            CompletableFuture<Integer> first = CompletableFuture.supplyAsync(one::check);
            CompletableFuture<Integer> second = CompletableFuture.supplyAsync(two::check);

            assertThat(first.join() + second.join()).isEqualTo(1);
            JsonNode promoted = fx.volumeJson(volume);
            assertThat(promoted.get("epoch").asLong()).isEqualTo(2);
            assertThat(promoted.get("primaryNodeId").asString()).as("the first in-sync copy by id")
                    .isEqualTo(Stream.of(b, c).map(n -> n.id().toString()).sorted().findFirst().orElseThrow());
        }
    }
}
