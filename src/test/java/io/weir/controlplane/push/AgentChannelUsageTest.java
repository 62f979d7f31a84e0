package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.UsageReport;
import io.weir.protocol.UsageReport.VolumeUsage;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;

/**
 * Usage reports over the agent channel, from a raw agent (the JDK's WebSocket client) into the
 * real application and PostgreSQL: what is stored, what is acknowledged, what is counted.
 */
class AgentChannelUsageTest extends IntegrationTest {

    @Autowired
    MeterRegistry meters;

    record Node(UUID id, String token) {
    }

    private Node node() {
        HttpApi.Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("usage") + "\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return new Node(UUID.fromString(r.json().get("id").asString()), r.json().get("token").asString());
    }

    private UUID volumeOn(String tenant, Node node) {
        HttpApi.Response r = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"" + unique("v")
                + "\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + node.id() + "\"]}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return UUID.fromString(r.json().get("id").asString());
    }

    private String tenant() {
        HttpApi.Response r = api.post("/api/v1/tenants", "{\"name\":\"" + unique("t") + "\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }

    /** Connects, says hello, takes the first config and acks it. */
    private AgentClient connected(Node node) {
        AgentClient agent = AgentClient.open(port, node.token());
        agent.send(new AgentMessage.Hello(node.id(), 0, "test"));
        agent.send(new AgentMessage.Ack(agent.nextConfig().config().revision()));
        return agent;
    }

    private static UsageReport report(long sequence, Instant from, VolumeUsage... volumes) {
        return new UsageReport(sequence, from, from.plusSeconds(10), List.of(volumes), List.of(), List.of());
    }

    private static VolumeUsage reads(UUID volume, long n) {
        return new VolumeUsage(volume, n, 0, 4096 * n, 0, 100, 200, 300, 0.5, 0, 0, 1000);
    }

    /** Reads of the volume over the last hour and the next, as the usage API sums them. */
    private long readOps(UUID volume) {
        Instant now = Instant.now().truncatedTo(ChronoUnit.HOURS);
        HttpApi.Response r = api.get("/api/v1/usage/volumes/" + volume + "?from=" + now.minus(Duration.ofHours(1))
                + "&to=" + now.plus(Duration.ofHours(2)) + "&step=1h");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        long sum = 0;
        for (JsonNode p : r.json().get("points")) {
            sum += p.get("readOps").asLong();
        }
        return sum;
    }

    private double counter(String name, String... tags) {
        return meters.counter(name, tags).count();
    }

    @Test
    void aReportIsStoredForTheVolumesPlacedOnTheReportingNodeOnlyAndAcknowledged() {
        Node reporter = node();
        Node other = node();
        String tenant = tenant();
        UUID mine = volumeOn(tenant, reporter);
        UUID theirs = volumeOn(tenant, other);
        UUID unknown = UUID.randomUUID();
        double unplacedBefore = counter("weir.usage.samples.unplaced");

        try (AgentClient agent = connected(reporter)) {
            agent.send(report(1, Instant.now().minusSeconds(10), reads(mine, 5), reads(theirs, 7), reads(unknown, 11)));

            assertThat(agent.next()).isEqualTo(new AgentMessage.UsageAck(1));
        }
        assertThat(readOps(mine)).isEqualTo(5);
        assertThat(readOps(theirs)).as("another node's volume is not this node's to report").isZero();
        assertThat(counter("weir.usage.samples.unplaced") - unplacedBefore).isEqualTo(2);
    }

    @Test
    void aResentReportIsAcknowledgedAgainAndCountedOnce() {
        Node node = node();
        UUID volume = volumeOn(tenant(), node);
        Instant from = Instant.now().minusSeconds(20);
        double duplicatesBefore = counter("weir.usage.reports", "outcome", "duplicate");
        double ackedBefore = counter("weir.push.usage.reports.acked");

        try (AgentClient agent = connected(node)) {
            agent.send(report(7, from, reads(volume, 3)));
            assertThat(agent.next()).isEqualTo(new AgentMessage.UsageAck(7));
        }
        try (AgentClient again = connected(node)) {
            again.send(report(7, from, reads(volume, 3)));
            again.send(report(8, from.plusSeconds(10), reads(volume, 4)));
            assertThat(List.of(again.next(), again.next()))
                    .containsExactly(new AgentMessage.UsageAck(7), new AgentMessage.UsageAck(8));
        }
        assertThat(readOps(volume)).isEqualTo(3 + 4);
        assertThat(counter("weir.usage.reports", "outcome", "duplicate") - duplicatesBefore).isEqualTo(1);
        // the intake sends an ack, then counts it
        await().atMost(AgentClient.WAIT).until(() -> counter("weir.push.usage.reports.acked") - ackedBefore == 3);
    }

    @Test
    void aReportOlderThanTheDedupeWindowIsAcknowledgedSoThatTheAgentStopsResendingIt() {
        Node node = node();
        UUID volume = volumeOn(tenant(), node);
        double expiredBefore = counter("weir.usage.reports", "outcome", "expired");

        try (AgentClient agent = connected(node)) {
            agent.send(report(1, Instant.now().minus(Duration.ofDays(30)), reads(volume, 9)));
            assertThat(agent.next()).isEqualTo(new AgentMessage.UsageAck(1));
        }
        assertThat(counter("weir.usage.reports", "outcome", "expired") - expiredBefore).isEqualTo(1);
    }

    @Test
    void prometheusShowsTheAgentChannelAndUsageIntakeWithoutASeriesPerNodeOrVolume() {
        Node node = node();
        UUID volume = volumeOn(tenant(), node);
        try (AgentClient agent = connected(node)) {
            agent.send(report(1, Instant.now().minusSeconds(10), reads(volume, 1)));
            assertThat(agent.next()).isEqualTo(new AgentMessage.UsageAck(1));

            await().atMost(AgentClient.WAIT).untilAsserted(() -> {
                String scrape = api.get("/actuator/prometheus").body();
                assertThat(scrape).contains("weir_push_connected_nodes ", "weir_push_nodes_behind ", "weir_push_lag_seconds ",
                        "weir_push_latency_seconds_count ", "weir_push_usage_reports_received_total ",
                        "weir_push_usage_reports_acked_total ", "weir_push_usage_reports_refused_total ",
                        "weir_push_usage_queue ", "weir_usage_reports_total{outcome=\"duplicate\"}",
                        "weir_usage_samples_unplaced_total ");
                assertThat(value(scrape, "weir_push_connected_nodes")).isGreaterThanOrEqualTo(1);
                assertThat(value(scrape, "weir_push_usage_reports_acked_total")).isGreaterThanOrEqualTo(1);
                assertThat(scrape).doesNotContain(node.id().toString()).doesNotContain(volume.toString());
            });
        }
    }

    private static double value(String scrape, String series) {
        return scrape.lines().filter(l -> l.startsWith(series + " ")).mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1)))
                .findFirst().orElseThrow(() -> new AssertionError(series + " not in the scrape"));
    }
}
