package io.weir.controlplane.usage;

import static io.weir.controlplane.usage.UsageFixtures.figures;
import static io.weir.controlplane.usage.UsageFixtures.report;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.usage.UsageIngest.Delivery;
import io.weir.controlplane.usage.UsageIngest.Outcome;
import io.weir.protocol.UsageReport;
import io.weir.protocol.UsageReport.Gap;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;

class UsageIngestTest extends IntegrationTest {

    @Autowired
    UsageIngest ingest;

    @Autowired
    JdbcTemplate jdbc;

    private Instant minutesAgo(int m) {
        return clock.instant().truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(m));
    }

    private long rawOps(UUID volume) {
        return jdbc.queryForObject("SELECT COALESCE(sum(read_ops + write_ops), 0) FROM usage_volume_raw WHERE volume_id = ?",
                Long.class, volume);
    }

    private long rollupOps(String table, UUID volume) {
        return jdbc.queryForObject("SELECT COALESCE(sum(read_ops + write_ops), 0) FROM " + table + " WHERE volume_id = ?",
                Long.class, volume);
    }

    @Test
    void duplicatedReorderedAndReplayedReportsAreEachCountedOnce() {
        UUID tenant = UsageFixtures.tenant(api, unique("usage-t"));
        UUID volume = UsageFixtures.volume(api, tenant, unique("v"));
        UUID node = UUID.randomUUID();
        Instant t0 = minutesAgo(30);
        List<UsageReport> reports = new ArrayList<>();
        for (int seq = 1; seq <= 5; seq++) {
            reports.add(report(seq, t0.plusSeconds(10L * seq), Duration.ofSeconds(10), List.of(figures(volume, seq))));
        }
        // reads n, writes 2n per report: 3 * (1 + 2 + 3 + 4 + 5) = 45 ops in all
        assertThat(ingest.ingest(node, reports.get(2))).isEqualTo(Outcome.STORED);
        assertThat(ingest.ingest(node, reports.get(0))).isEqualTo(Outcome.STORED);
        assertThat(ingest.ingest(node, reports.get(2))).isEqualTo(Outcome.DUPLICATE);
        assertThat(ingest.ingestAll(List.of(new Delivery(node, reports.get(4)), new Delivery(node, reports.get(1)),
                new Delivery(node, reports.get(4)), new Delivery(node, reports.get(3)))))
                .containsExactly(Outcome.STORED, Outcome.STORED, Outcome.DUPLICATE, Outcome.STORED);
        // a replay of everything after a reconnect
        assertThat(ingest.ingestAll(reports.stream().map(r -> new Delivery(node, r)).toList()))
                .containsOnly(Outcome.DUPLICATE);

        assertThat(rawOps(volume)).isEqualTo(45);
        assertThat(rollupOps("usage_volume_1m", volume)).isEqualTo(45);
        assertThat(rollupOps("usage_volume_1h", volume)).isEqualTo(45);
        assertThat(jdbc.queryForObject("SELECT sum(read_ops + write_ops) FROM usage_tenant_1m WHERE tenant_id = ?",
                Long.class, tenant)).isEqualTo(45);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM usage_report WHERE node_id = ?", Long.class, node))
                .isEqualTo(5);
        // the same sequence from another node is another report
        assertThat(ingest.ingest(UUID.randomUUID(), reports.get(0))).isEqualTo(Outcome.STORED);
        assertThat(rawOps(volume)).isEqualTo(48);
    }

    @Test
    void concurrentDeliveriesOfTheSameReportsCountEachOnce() throws Exception {
        UUID tenant = UsageFixtures.tenant(api, unique("usage-t"));
        UUID volume = UsageFixtures.volume(api, tenant, unique("v"));
        UUID node = UUID.randomUUID();
        Instant t0 = minutesAgo(40);
        List<Delivery> all = new ArrayList<>();
        int reports = 200;
        int deliverers = 8;
        for (int seq = 1; seq <= reports; seq++) {
            all.add(new Delivery(node, report(seq, t0.plusSeconds(10L * seq), Duration.ofSeconds(10),
                    List.of(figures(volume, 1)))));
        }
        ExecutorService pool = Executors.newFixedThreadPool(deliverers);
        try {
            List<Callable<List<Outcome>>> tasks = new ArrayList<>();
            // all deliverers start together, so their transactions overlap
            java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(deliverers);
            for (int i = 0; i < deliverers; i++) {
                List<Delivery> shuffled = new ArrayList<>(all);
                java.util.Collections.shuffle(shuffled, new java.util.Random(i));
                tasks.add(() -> {
                    start.await();
                    return ingest.ingestAll(shuffled);
                });
            }
            long stored = 0;
            for (Future<List<Outcome>> f : pool.invokeAll(tasks)) {
                stored += f.get().stream().filter(o -> o == Outcome.STORED).count();
            }
            assertThat(stored).isEqualTo(reports);
        } finally {
            pool.shutdown();
        }
        assertThat(rawOps(volume)).isEqualTo(reports * 3);
        assertThat(rollupOps("usage_volume_1m", volume)).isEqualTo(reports * 3);
        assertThat(rollupOps("usage_volume_1h", volume)).isEqualTo(reports * 3);
    }

    @Test
    void reportsOlderThanTheDedupeWindowAreRefusedAsExpired() {
        UUID node = UUID.randomUUID();
        UsageReport old = report(1, clock.instant().minus(Duration.ofDays(3)), Duration.ofSeconds(10),
                List.of(figures(UUID.randomUUID(), 1)));
        assertThat(ingest.ingest(node, old)).isEqualTo(Outcome.EXPIRED);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM usage_report WHERE node_id = ?", Long.class, node)).isZero();
    }

    @Test
    void samplesOfUnknownVolumesAreKeptWithoutATenant() {
        UUID unknown = UUID.randomUUID();
        UUID node = UUID.randomUUID();
        ingest.ingest(node, report(1, minutesAgo(5), Duration.ofSeconds(10), List.of(figures(unknown, 2))));
        assertThat(rawOps(unknown)).isEqualTo(6);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM usage_volume_raw WHERE volume_id = ? AND tenant_id IS NULL",
                Long.class, unknown)).isEqualTo(1);
    }

    @Test
    void gapsAreRecordedWidenedAndShownWithTheVolumesSeries() {
        UUID node = UsageFixtures.node(api, unique("usage-node"));
        UUID tenant = UsageFixtures.tenant(api, unique("usage-t"));
        UUID volume = UsageFixtures.volume(api, tenant, unique("v"), node);
        Instant t0 = minutesAgo(10);
        Gap first = new Gap(1, 3, t0, t0.plusSeconds(30));
        ingest.ingest(node, UsageFixtures.withGaps(report(4, t0.plusSeconds(30), Duration.ofSeconds(10),
                List.of(figures(volume, 1))), first));
        Gap widened = new Gap(1, 5, t0, t0.plusSeconds(50));
        ingest.ingest(node, UsageFixtures.withGaps(report(6, t0.plusSeconds(50), Duration.ofSeconds(10),
                List.of(figures(volume, 1))), widened));

        Map<String, Object> row = jdbc.queryForMap("SELECT first_sequence, last_sequence FROM usage_gap WHERE node_id = ?", node);
        assertThat(row).containsEntry("first_sequence", 1L).containsEntry("last_sequence", 5L);

        var series = api.get("/api/v1/usage/volumes/" + volume + "?from=" + t0.minusSeconds(60) + "&to="
                + t0.plusSeconds(120) + "&step=60").json();
        assertThat(series.get("gaps")).hasSize(1);
        assertThat(series.get("gaps").get(0).get("nodeId").asString()).isEqualTo(node.toString());
        assertThat(series.get("gaps").get(0).get("lastSequence").asLong()).isEqualTo(5);
        assertThat(series.get("gaps").get(0).get("to").asString()).isEqualTo(t0.plusSeconds(50).toString());
    }
}
