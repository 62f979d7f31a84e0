package io.weir.controlplane.usage;

import static io.weir.controlplane.usage.UsageFixtures.report;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.usage.UsageIngest.Delivery;
import io.weir.protocol.UsageReport;
import io.weir.protocol.UsageReport.TaskUsage;
import io.weir.protocol.UsageReport.VolumeUsage;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

/**
 * Series, rollups and top-N against expectations computed from the reports themselves. The data:
 * volume A on node N1 reporting every 10 s (at 3 s past each tenth second) for 3 hours across a
 * midnight, so ranges cross daily partitions, and volume B of the same tenant on node N2
 * reporting every 20 s for the middle hour.
 */
class UsageQueryTest extends IntegrationTest {

    @Autowired
    UsageIngest ingest;

    @Autowired
    JdbcTemplate jdbc;

    private UUID tenant;
    private UUID volumeA;
    private UUID volumeB;
    private UUID node1;
    private Instant base;
    private final List<Delivery> stored = new ArrayList<>();

    /** Figures that vary from report to report without a pattern a bug could line up with. */
    private static VolumeUsage vary(UUID volume, long seq) {
        long n = (seq * 7919) % 23 + 1;
        return new VolumeUsage(volume, n, (seq % 5) * n, 4096 * n + seq, 512 * (seq % 7), 50 + n * 3, 900 + n * 11,
                2000 + seq % 97, (seq % 9) / 4.0, seq % 4 == 0 ? 3_500_000 : 0, seq % 11 == 0 ? 1 : 0, 20_000 * n,
                10 + n * 2, 300 + n * 7, (seq % 3) * n, 4096 * (seq % 3) * n + seq % 2);
    }

    @BeforeEach
    void data() {
        tenant = UsageFixtures.tenant(api, unique("usage-q"));
        node1 = UsageFixtures.node(api, unique("usage-n1"));
        UUID node2 = UsageFixtures.node(api, unique("usage-n2"));
        volumeA = UsageFixtures.volume(api, tenant, unique("a"), node1);
        volumeB = UsageFixtures.volume(api, tenant, unique("b"), node2);
        base = clock.instant().truncatedTo(ChronoUnit.DAYS).minus(Duration.ofMinutes(90)).plusSeconds(3);
        for (int i = 0; i < 3 * 360; i++) {
            stored.add(new Delivery(node1, report(i + 1, base.plusSeconds(10L * i), Duration.ofSeconds(10),
                    List.of(vary(volumeA, i + 1)))));
        }
        for (int i = 0; i < 180; i++) {
            stored.add(new Delivery(node2, report(i + 1, base.plus(Duration.ofHours(1)).plusSeconds(20L * i),
                    Duration.ofSeconds(20), List.of(vary(volumeB, 1000 + i)))));
        }
        for (int i = 0; i < stored.size(); i += 200) {
            ingest.ingestAll(stored.subList(i, Math.min(stored.size(), i + 200)));
        }
    }

    /** The expected point sums of one scope, computed from the reports. */
    private List<double[]> expected(List<UUID> volumes, Instant from, Instant to, Duration step) {
        int n = (int) (Duration.between(from, to).toMillis() / step.toMillis());
        List<double[]> points = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            points.add(new double[15]);
        }
        for (Delivery d : stored) {
            UsageReport r = d.report();
            if (r.from().isBefore(from) || !r.from().isBefore(to)) {
                continue;
            }
            int i = (int) (Duration.between(from, r.from()).toMillis() / step.toMillis());
            for (VolumeUsage v : r.volumes()) {
                if (!volumes.contains(v.volumeId())) {
                    continue;
                }
                double[] p = points.get(i);
                p[0] += v.readOps();
                p[1] += v.writeOps();
                p[2] += v.readBytes();
                p[3] += v.writeBytes();
                p[4] += v.latencyP50Us() * v.ops();
                p[5] += v.latencyP99Us() * v.ops();
                p[6] = Math.max(p[6], v.latencyMaxUs());
                p[7] += v.queueDepth() * Duration.between(r.from(), r.to()).toMillis();
                p[8] += v.throttledNanos();
                p[9] += v.rejected();
                p[10] += v.cpuNanos();
                p[11] += v.queuedP50Us() * v.ops();
                p[12] += v.queuedP99Us() * v.ops();
                p[13] += v.replicaOps();
                p[14] += v.replicaBytes();
            }
        }
        return points;
    }

    private static Instant floor(Instant t, Duration step) {
        long w = step.toMillis();
        return Instant.ofEpochMilli(Math.floorDiv(t.toEpochMilli(), w) * w);
    }

    private static Instant ceil(Instant t, Duration step) {
        long w = step.toMillis();
        return Instant.ofEpochMilli(-Math.floorDiv(-t.toEpochMilli(), w) * w);
    }

    private void assertSeries(JsonNode series, List<double[]> expected, Duration step) {
        JsonNode points = series.get("points");
        assertThat(points).hasSize(expected.size());
        double sec = step.toMillis() / 1000.0;
        Instant from = Instant.parse(series.get("from").asString());
        for (int i = 0; i < expected.size(); i++) {
            JsonNode p = points.get(i);
            double[] e = expected.get(i);
            long ops = (long) (e[0] + e[1]);
            String at = "point " + i + " of step " + step;
            assertThat(Instant.parse(p.get("ts").asString())).as(at).isEqualTo(from.plus(step.multipliedBy(i)));
            assertThat(p.get("readOps").asLong()).as(at).isEqualTo((long) e[0]);
            assertThat(p.get("writeOps").asLong()).as(at).isEqualTo((long) e[1]);
            assertThat(p.get("readBytes").asLong()).as(at).isEqualTo((long) e[2]);
            assertThat(p.get("writeBytes").asLong()).as(at).isEqualTo((long) e[3]);
            assertThat(p.get("iops").asDouble()).as(at).isCloseTo(ops / sec, within(1e-9));
            assertThat(p.get("bytesPerSec").asDouble()).as(at).isCloseTo((e[2] + e[3]) / sec, within(1e-6));
            if (ops == 0) {
                assertThat(p.get("latencyP50Us").isNull()).as(at).isTrue();
                assertThat(p.get("latencyP99Us").isNull()).as(at).isTrue();
                assertThat(p.get("queuedP50Us").isNull()).as(at).isTrue();
                assertThat(p.get("queuedP99Us").isNull()).as(at).isTrue();
            } else {
                assertThat(p.get("queuedP50Us").asLong()).as(at).isEqualTo(Math.round(e[11] / ops));
                assertThat(p.get("queuedP99Us").asLong()).as(at).isEqualTo(Math.round(e[12] / ops));
                assertThat(p.get("latencyP50Us").asLong()).as(at).isEqualTo(Math.round(e[4] / ops));
                assertThat(p.get("latencyP99Us").asLong()).as(at).isEqualTo(Math.round(e[5] / ops));
                assertThat(p.get("latencyMaxUs").asLong()).as(at).isEqualTo((long) e[6]);
            }
            assertThat(p.get("queueDepth").asDouble()).as(at).isCloseTo(e[7] / step.toMillis(), within(1e-9));
            assertThat(p.get("throttledMs").asDouble()).as(at).isCloseTo(e[8] / 1e6, within(1e-9));
            assertThat(p.get("rejected").asLong()).as(at).isEqualTo((long) e[9]);
            assertThat(p.get("cpuMs").asDouble()).as(at).isCloseTo(e[10] / 1e6, within(1e-9));
            assertThat(p.get("replicaOps").asLong()).as(at).isEqualTo((long) e[13]);
            assertThat(p.get("replicaBytes").asLong()).as(at).isEqualTo((long) e[14]);
        }
    }

    @Test
    void everyStepAndRangeMatchesTheSumsOfTheReports() {
        Map<Duration, String> resolutions = Map.of(Duration.ofSeconds(13), "raw", Duration.ofSeconds(10), "raw",
                Duration.ofSeconds(90), "raw", Duration.ofMinutes(1), "1m", Duration.ofMinutes(5), "1m",
                Duration.ofMinutes(30), "1m", Duration.ofHours(1), "1h", Duration.ofHours(2), "1h");
        List<Instant[]> ranges = List.of(
                new Instant[] {base.minus(Duration.ofMinutes(30)), base.plus(Duration.ofHours(3)).plus(Duration.ofMinutes(30))},
                new Instant[] {base.plus(Duration.ofMinutes(17)).plusSeconds(5), base.plus(Duration.ofMinutes(121))},
                new Instant[] {base.plus(Duration.ofMinutes(85)), base.plus(Duration.ofMinutes(95))});
        resolutions.forEach((step, resolution) -> {
            for (Instant[] r : ranges) {
                Instant from = floor(r[0], step);
                Instant to = ceil(r[1], step);
                JsonNode volume = api.get("/api/v1/usage/volumes/" + volumeA + "?from=" + r[0] + "&to=" + r[1]
                        + "&step=" + step).json();
                assertThat(volume.get("resolution").asString()).isEqualTo(resolution);
                assertThat(volume.get("from").asString()).isEqualTo(from.toString());
                assertThat(volume.get("to").asString()).isEqualTo(to.toString());
                assertSeries(volume, expected(List.of(volumeA), from, to, step), step);

                JsonNode tenantSeries = api.get("/api/v1/usage/tenants/" + tenant + "?from=" + r[0] + "&to=" + r[1]
                        + "&step=" + step.toSeconds()).json();
                assertThat(tenantSeries.get("resolution").asString()).isEqualTo(resolution);
                assertSeries(tenantSeries, expected(List.of(volumeA, volumeB), from, to, step), step);
            }
        });
    }

    /** The one point of {@code /usage/{scope}/{id}} over the minute from {@code minute}. */
    private JsonNode minutePoint(String scope, UUID id, Instant minute) {
        return api.get("/api/v1/usage/" + scope + "/" + id + "?from=" + minute + "&to=" + minute.plusSeconds(60)
                + "&step=1m").json().get("points").get(0);
    }

    @Test
    void aHandComputedMinute() {
        UUID t = UsageFixtures.tenant(api, unique("usage-hand"));
        UUID v = UsageFixtures.volume(api, t, unique("v"));
        Instant minute = clock.instant().truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(10));
        UUID node = UUID.randomUUID();
        // 10 s at queue depth 2, then 20 s at queue depth 0.5; the other 30 s of the minute unreported
        ingest.ingest(node, report(1, minute, Duration.ofSeconds(10),
                List.of(new VolumeUsage(v, 30, 10, 120_000, 40_960, 100, 1000, 3000, 2.0, 250_000_000, 1, 5_000_000))));
        ingest.ingest(node, report(2, minute.plusSeconds(10), Duration.ofSeconds(20),
                List.of(new VolumeUsage(v, 0, 60, 0, 245_760, 200, 2000, 9000, 0.5, 0, 0, 15_000_000))));
        JsonNode p = minutePoint("volumes", v, minute);
        assertThat(p.get("readOps").asLong()).isEqualTo(30);
        assertThat(p.get("writeOps").asLong()).isEqualTo(70);
        assertThat(p.get("iops").asDouble()).isCloseTo(100 / 60.0, within(1e-12));
        assertThat(p.get("bytesPerSec").asDouble()).isCloseTo(406_720 / 60.0, within(1e-9));
        assertThat(p.get("latencyP50Us").asLong()).isEqualTo(160); // (100 * 40 + 200 * 60) / 100
        assertThat(p.get("latencyP99Us").asLong()).isEqualTo(1600); // (1000 * 40 + 2000 * 60) / 100
        assertThat(p.get("latencyMaxUs").asLong()).isEqualTo(9000);
        assertThat(p.get("queueDepth").asDouble()).isCloseTo(0.5, within(1e-12)); // (2 * 10 + 0.5 * 20) / 60
        assertThat(p.get("throttledMs").asDouble()).isCloseTo(250, within(1e-12));
        assertThat(p.get("rejected").asLong()).isEqualTo(1);
        assertThat(p.get("cpuMs").asDouble()).isCloseTo(20, within(1e-12));
    }

    /**
     * A 2-copy volume: its primary reports what its clients asked, its copy what it applied for
     * the primary (as replica ops). The point counts each client request once, and the copy's
     * work apart; the latencies are the client's.
     */
    @Test
    void aReplicatedVolumesPointCountsEachClientRequestOnceAndTheCopysWorkApart() {
        UUID t = UsageFixtures.tenant(api, unique("usage-repl"));
        UUID v = UsageFixtures.volume(api, t, unique("v"));
        Instant minute = clock.instant().truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(10));
        UUID primary = UUID.randomUUID();
        UUID copy = UUID.randomUUID();
        ingest.ingest(primary, report(1, minute, Duration.ofSeconds(10),
                List.of(new VolumeUsage(v, 20, 10, 81_920, 40_960, 100, 1000, 3000, 2.0, 0, 0, 5_000_000, 10, 50, 0, 0))));
        ingest.ingest(copy, report(1, minute, Duration.ofSeconds(10),
                List.of(new VolumeUsage(v, 0, 0, 0, 0, 0, 0, 0, 1.0, 0, 0, 2_000_000, 0, 0, 10, 40_960))));
        JsonNode p = minutePoint("volumes", v, minute);
        assertThat(p.get("readOps").asLong()).isEqualTo(20);
        assertThat(p.get("writeOps").asLong()).as("each client write once").isEqualTo(10);
        assertThat(p.get("writeBytes").asLong()).isEqualTo(40_960);
        assertThat(p.get("iops").asDouble()).isCloseTo(30 / 60.0, within(1e-12));
        assertThat(p.get("latencyP50Us").asLong()).as("the client's").isEqualTo(100);
        assertThat(p.get("replicaOps").asLong()).as("what the copy applied for the primary").isEqualTo(10);
        assertThat(p.get("replicaBytes").asLong()).isEqualTo(40_960);
        assertThat(p.get("cpuMs").asDouble()).as("what the volume cost both nodes").isCloseTo(7, within(1e-12));
        JsonNode tenantPoint = minutePoint("tenants", t, minute);
        assertThat(tenantPoint.get("writeOps").asLong()).isEqualTo(10);
        assertThat(tenantPoint.get("replicaOps").asLong()).isEqualTo(10);
    }

    @Test
    void rollupsAgreeWithTheRawSumsAtEveryLevel() {
        String sums = "sum(read_ops), sum(write_ops), sum(read_bytes), sum(write_bytes), %s, %s, max(latency_max_us), "
                + "round(%s::numeric, 6), sum(throttled_ns), sum(rejected), sum(cpu_ns), sum(replica_ops), sum(replica_bytes)";
        String raw = sums.formatted("sum(latency_p50_us * (read_ops + write_ops))",
                "sum(latency_p99_us * (read_ops + write_ops))", "sum(queue_depth * duration_ms)");
        String rollup = sums.formatted("sum(latency_p50_wsum)", "sum(latency_p99_wsum)", "sum(queue_depth_ms)");
        for (String unit : List.of("minute", "hour")) {
            String level = unit.equals("minute") ? "1m" : "1h";
            for (UUID v : List.of(volumeA, volumeB)) {
                List<Map<String, Object>> fromRaw = jdbc.queryForList("SELECT date_trunc('" + unit + "', ts) AS b, " + raw
                        + " FROM usage_volume_raw WHERE volume_id = ? GROUP BY b ORDER BY b", v);
                List<Map<String, Object>> fromRollup = jdbc.queryForList("SELECT bucket AS b, " + rollup
                        + " FROM usage_volume_" + level + " WHERE volume_id = ? GROUP BY b ORDER BY b", v);
                assertThat(fromRollup).as(level + " of " + v).hasSize(unit.equals("minute") ? (v == volumeA ? 180 : 60) : (v == volumeA ? 4 : 2))
                        .isEqualTo(fromRaw);
            }
            List<Map<String, Object>> tenantRaw = jdbc.queryForList("SELECT date_trunc('" + unit + "', ts) AS b, " + raw
                    + " FROM usage_volume_raw WHERE tenant_id = ? GROUP BY b ORDER BY b", tenant);
            List<Map<String, Object>> tenantRollup = jdbc.queryForList("SELECT bucket AS b, " + rollup
                    + " FROM usage_tenant_" + level + " WHERE tenant_id = ? GROUP BY b ORDER BY b", tenant);
            assertThat(tenantRollup).as(level + " of the tenant").isEqualTo(tenantRaw);
            String taskSums = "sum(ops), sum(cpu_ns), sum(worker_ns), round(%s::numeric, 6), sum(duration_ms)::bigint";
            assertThat(jdbc.queryForList("SELECT bucket AS b, task, " + taskSums.formatted("sum(share_ms)")
                    + " FROM usage_task_" + level + " WHERE node_id = ? GROUP BY b, task ORDER BY b, task", node1))
                    .as(level + " of the tasks")
                    .isEqualTo(jdbc.queryForList("SELECT date_trunc('" + unit + "', ts) AS b, task, "
                            + taskSums.formatted("sum(share * duration_ms)")
                            + " FROM usage_task_raw WHERE node_id = ? GROUP BY b, task ORDER BY b, task", node1));
        }
    }

    @Test
    void aNodesTaskSeriesSplitsItsCpuAndWorkerTimeByTask() {
        Instant from = base.truncatedTo(ChronoUnit.HOURS);
        JsonNode s = api.get("/api/v1/usage/nodes/" + node1 + "/tasks?from=" + from + "&to=" + from.plus(Duration.ofHours(4))
                + "&step=1h").json();
        assertThat(s.get("resolution").asString()).isEqualTo("1h");
        Map<String, double[]> cpu = Map.of("foreground", new double[4], "gc", new double[4]);
        Map<String, double[]> worker = Map.of("foreground", new double[4], "gc", new double[4]);
        for (Delivery d : stored) {
            if (d.nodeId().equals(node1)) {
                int i = (int) Duration.between(from, d.report().from()).toHours();
                d.report().tasks().forEach(t -> {
                    cpu.get(t.name())[i] += t.cpuNanos() / 1e6;
                    worker.get(t.name())[i] += t.workerNanos() / 1e6;
                });
            }
        }
        assertThat(s.get("tasks")).hasSize(2);
        for (JsonNode task : s.get("tasks")) {
            String name = task.get("name").asString();
            for (int i = 0; i < 4; i++) {
                JsonNode p = task.get("points").get(i);
                assertThat(p.get("cpuMs").asDouble()).isCloseTo(cpu.get(name)[i], within(1e-6));
                double total = cpu.get("foreground")[i] + cpu.get("gc")[i];
                assertThat(p.get("cpuFraction").asDouble()).isCloseTo(total == 0 ? 0 : cpu.get(name)[i] / total, within(1e-9));
                assertThat(p.get("workerMs").asDouble()).isCloseTo(worker.get(name)[i], within(1e-6));
                double workerTotal = worker.get("foreground")[i] + worker.get("gc")[i];
                assertThat(p.get("workerFraction").asDouble())
                        .isCloseTo(workerTotal == 0 ? 0 : worker.get(name)[i] / workerTotal, within(1e-9));
            }
        }
        // the fixtures give gc twice its CPU in worker time, the foreground 8/7: the two splits differ
        assertThat(s.get("tasks").get(1).get("points").get(1).get("workerFraction").asDouble())
                .isGreaterThan(s.get("tasks").get(1).get("points").get(1).get("cpuFraction").asDouble());
        assertThat(s.get("tasks").get(0).get("points").get(1).get("share").asDouble())
                .isEqualTo(s.get("tasks").get(0).get("name").asString().equals("foreground") ? 700.0 : 100.0);
    }

    /**
     * An agent from before worker time was reported sends none: its tasks' worker time reads as
     * their CPU time (which worker time is never below), so the split of the dashboard's task
     * chart does not fall to 0 for its nodes or for data stored before the upgrade.
     */
    @Test
    void aTaskWhoseReportsCarryNoWorkerTimeShowsItsCpuTimeAsWorkerTime() {
        UUID old = UsageFixtures.node(api, unique("usage-old-agent"));
        Instant from = base.truncatedTo(ChronoUnit.HOURS);
        ingest.ingestAll(List.of(new Delivery(old, new UsageReport(1, base, base.plusSeconds(10), List.of(),
                List.of(new TaskUsage("foreground", 30, 6_000_000, 0, 700), new TaskUsage("scrub", 3, 2_000_000, 0, 50)),
                List.of()))));
        JsonNode s = api.get("/api/v1/usage/nodes/" + old + "/tasks?from=" + from + "&to=" + from.plus(Duration.ofHours(1))
                + "&step=1h").json();
        for (JsonNode task : s.get("tasks")) {
            JsonNode p = task.get("points").get(0);
            assertThat(p.get("workerMs").asDouble()).as(task.get("name").asString()).isEqualTo(p.get("cpuMs").asDouble());
            assertThat(p.get("workerFraction").asDouble()).isEqualTo(p.get("cpuFraction").asDouble());
        }
        assertThat(s.get("tasks").get(0).get("points").get(0).get("workerFraction").asDouble()).isEqualTo(0.75);
    }

    @Test
    void theTopListRanksATenantsVolumes() {
        Instant from = base.minus(Duration.ofMinutes(30));
        Instant to = base.plus(Duration.ofHours(4));
        JsonNode top = api.get("/api/v1/usage/top?by=iops&limit=5&tenantId=" + tenant + "&from=" + from + "&to=" + to
                + "&step=1m").json();
        List<double[]> a = expected(List.of(volumeA), floor(from, Duration.ofMinutes(1)), ceil(to, Duration.ofMinutes(1)),
                Duration.ofMinutes(1));
        long opsA = a.stream().mapToLong(p -> (long) (p[0] + p[1])).sum();
        assertThat(top.get("volumes")).hasSize(2);
        assertThat(top.get("volumes").get(0).get("volumeId").asString()).isEqualTo(volumeA.toString());
        assertThat(top.get("volumes").get(0).get("readOps").asLong() + top.get("volumes").get(0).get("writeOps").asLong())
                .isEqualTo(opsA);
        assertThat(top.get("volumes").get(0).get("volumeName").asString()).startsWith("a-");
        JsonNode byThrottle = api.get("/api/v1/usage/top?by=throttled&tenantId=" + tenant + "&from=" + from + "&to=" + to)
                .json();
        assertThat(byThrottle.get("by").asString()).isEqualTo("throttled");
        assertThat(byThrottle.get("volumes").get(0).get("throttledMs").asDouble())
                .isGreaterThanOrEqualTo(byThrottle.get("volumes").get(1).get("throttledMs").asDouble());
    }

    /**
     * A volume deleted since its usage was reported keeps its tenant in the top list (its rows
     * store it): the tenant was taken from the volume, gone, or from the filter, none for an
     * administrator's list, and the dashboard showed no tenant.
     */
    @Test
    void aDeletedVolumeKeepsItsTenantInTheTopList() {
        assertThat(api.delete("/api/v1/volumes/" + volumeB, null).status()).isEqualTo(204);
        JsonNode top = api.get("/api/v1/usage/top?by=iops&limit=100&from=" + base.minus(Duration.ofMinutes(30)) + "&to="
                + base.plus(Duration.ofHours(4)) + "&step=1m").json();
        JsonNode b = null;
        for (JsonNode v : top.get("volumes")) {
            if (v.get("volumeId").asString().equals(volumeB.toString())) {
                b = v;
            }
        }
        assertThat(b).as("the deleted volume's usage").isNotNull();
        assertThat(b.get("tenantId").asString()).isEqualTo(tenant.toString());
    }

    @Test
    void callersBoundToATenantSeeOnlyItsUsage() {
        UUID other = UsageFixtures.tenant(api, unique("usage-other"));
        UUID otherVolume = UsageFixtures.volume(api, other, unique("o"));
        for (String role : List.of("tenant-admin", "viewer")) {
            HttpApi bound = apiAs(role, tenant, null);
            assertThat(bound.get("/api/v1/usage/volumes/" + volumeA).status()).isEqualTo(200);
            assertThat(bound.get("/api/v1/usage/tenants/" + tenant).status()).isEqualTo(200);
            HttpApi.Response foreignVolume = bound.get("/api/v1/usage/volumes/" + otherVolume);
            assertThat(foreignVolume.status()).isEqualTo(404);
            assertThat(foreignVolume.body()).isEqualTo(bound.get("/api/v1/usage/volumes/" + otherVolume).body());
            assertThat(bound.get("/api/v1/usage/tenants/" + other).status()).isEqualTo(404);
            assertThat(bound.get("/api/v1/usage/nodes/" + node1 + "/tasks").status()).isEqualTo(403);
            JsonNode top = bound.get("/api/v1/usage/top?from=" + base + "&to=" + base.plus(Duration.ofHours(3))).json();
            assertThat(top.get("volumes")).isNotEmpty().allSatisfy(v ->
                    assertThat(v.get("tenantId").asString()).isEqualTo(tenant.toString()));
            assertThat(bound.get("/api/v1/usage/top?tenantId=" + other).json().get("volumes")).isEmpty();
        }
        assertThat(apiAs("viewer", null, null).get("/api/v1/usage/nodes/" + node1 + "/tasks").status()).isEqualTo(200);
    }

    /**
     * The total sums every volume the caller sees, of every tenant: what the dashboard's cluster
     * figures show. Its reports go to a window of their own (17 hours before the others'), where
     * no other test of the shared database reports, so the admin's total there is exactly them.
     */
    @Test
    void theTotalSumsEveryVolumeTheCallerSees() {
        UUID node3 = UsageFixtures.node(api, unique("usage-n3"));
        UUID node4 = UsageFixtures.node(api, unique("usage-n4"));
        UUID other = UsageFixtures.tenant(api, unique("usage-total"));
        UUID mine = UsageFixtures.volume(api, tenant, unique("c"), node3);
        UUID theirs = UsageFixtures.volume(api, other, unique("d"), node3);
        UUID theirsElsewhere = UsageFixtures.volume(api, other, unique("e"), node4);
        Instant window = base.minus(Duration.ofHours(17));
        List<Delivery> reports = new ArrayList<>();
        for (int i = 0; i < 90; i++) {
            Instant at = window.plusSeconds(10L * i);
            reports.add(new Delivery(node3, report(i + 1, at, Duration.ofSeconds(10),
                    List.of(vary(mine, 5000 + i), vary(theirs, 7000 + i)))));
            if (i != 40) { // node4's agent dropped its report 41, and its next report says so
                UsageReport r = report(i + 1, at, Duration.ofSeconds(10), List.of(vary(theirsElsewhere, 9000 + i)));
                reports.add(new Delivery(node4, i != 41 ? r
                        : UsageFixtures.withGaps(r, new UsageReport.Gap(41, 41, at.minusSeconds(10), at))));
            }
        }
        ingest.ingestAll(reports);
        stored.addAll(reports);

        Duration step = Duration.ofSeconds(30);
        Instant from = floor(window, step);
        Instant to = ceil(window.plusSeconds(900), step);
        String range = "?from=" + from + "&to=" + to + "&step=" + step.toSeconds();
        JsonNode total = api.get("/api/v1/usage/total" + range).json();
        assertThat(total.get("tenantId").isNull()).isTrue();
        assertThat(total.get("volumeId").isNull()).isTrue();
        assertThat(total.get("resolution").asString()).isEqualTo("raw");
        assertSeries(total, expected(List.of(mine, theirs, theirsElsewhere), from, to, step), step);
        assertThat(total.get("gaps")).hasSize(1);
        assertThat(total.get("gaps").get(0).get("nodeId").asString()).isEqualTo(node4.toString());

        // the minute and hour rollups carry the same sums
        for (Duration rollup : List.of(Duration.ofMinutes(1), Duration.ofHours(1))) {
            Instant f = floor(window, rollup);
            Instant t = ceil(window.plusSeconds(900), rollup);
            assertSeries(api.get("/api/v1/usage/total?from=" + f + "&to=" + t + "&step=" + rollup.toSeconds()).json(),
                    expected(List.of(mine, theirs, theirsElsewhere), f, t, rollup), rollup);
        }

        // a caller bound to a tenant: its own volumes, and the gaps of the nodes they are on
        for (String role : List.of("tenant-admin", "viewer")) {
            JsonNode own = apiAs(role, tenant, null).get("/api/v1/usage/total" + range).json();
            assertThat(own.get("tenantId").asString()).isEqualTo(tenant.toString());
            assertSeries(own, expected(List.of(mine), from, to, step), step);
            assertThat(own.get("gaps")).isEmpty();
            JsonNode theirsOnly = apiAs(role, other, null).get("/api/v1/usage/total" + range).json();
            assertSeries(theirsOnly, expected(List.of(theirs, theirsElsewhere), from, to, step), step);
            assertThat(theirsOnly.get("gaps")).hasSize(1);
        }
        assertThat(api.get("/api/v1/usage/total?from=yesterday").status()).isEqualTo(400);
    }

    @Test
    void unknownIdsBadRangesAndTooManyPointsAreClearProblems() {
        HttpApi.Response unknown = api.get("/api/v1/usage/volumes/" + UUID.randomUUID());
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(unknown.contentType()).startsWith("application/problem+json");
        assertThat(api.get("/api/v1/usage/tenants/" + UUID.randomUUID()).status()).isEqualTo(404);
        assertThat(api.get("/api/v1/usage/nodes/" + UUID.randomUUID() + "/tasks").status()).isEqualTo(404);

        Instant now = clock.instant();
        HttpApi.Response backwards = api.get("/api/v1/usage/volumes/" + volumeA + "?from=" + now + "&to=" + now.minusSeconds(60));
        assertThat(backwards.status()).isEqualTo(400);
        assertThat(backwards.contentType()).startsWith("application/problem+json");
        assertThat(backwards.json().get("errors").get(0).get("field").asString()).isEqualTo("from");

        HttpApi.Response garbage = api.get("/api/v1/usage/volumes/" + volumeA + "?from=yesterday&step=fast");
        assertThat(garbage.status()).isEqualTo(400);
        assertThat(garbage.json().get("errors")).extracting(e -> e.get("field").asString()).containsExactlyInAnyOrder("from", "step");

        HttpApi.Response tooMany = api.get("/api/v1/usage/volumes/" + volumeA + "?from=" + now.minus(Duration.ofDays(1))
                + "&to=" + now + "&step=10s");
        assertThat(tooMany.status()).isEqualTo(400);
        assertThat(tooMany.json().get("errors").get(0).get("field").asString()).isEqualTo("step");
        assertThat(tooMany.json().get("errors").get(0).get("message").asString()).contains("at most 2000");

        HttpApi.Response tooOld = api.get("/api/v1/usage/volumes/" + volumeA + "?from=" + now.minus(Duration.ofDays(5))
                + "&to=" + now.minus(Duration.ofDays(4)) + "&step=90s");
        assertThat(tooOld.status()).isEqualTo(400);
        assertThat(tooOld.json().get("errors").get(0).get("message").asString()).contains("1-minute rollups");

        assertThat(api.get("/api/v1/usage/top?by=colour").status()).isEqualTo(400);
        assertThat(api.get("/api/v1/usage/top?limit=0").status()).isEqualTo(400);
    }

    /**
     * The retention check is on the from asked for, not on the start of the step it falls in:
     * steps of 400 days or more were refused whatever the range (their first step starts in
     * 1970), and a from just inside a level's retention was refused for a step that starts
     * before it, saying that from must be after a time it was after.
     */
    @Test
    void aFromWithinRetentionIsServedWhereverItsFirstStepStarts() {
        HttpApi.Response century = api.get("/api/v1/usage/volumes/" + volumeA + "?step=36600d");
        assertThat(century.status()).as(century.toString()).isEqualTo(200);
        assertThat(century.json().get("points")).hasSize(1);

        Instant now = clock.instant();
        long intoQuarter = Math.floorMod(now.toEpochMilli(), Duration.ofMinutes(15).toMillis());
        clock.advance(Duration.ofMinutes(22).minusMillis(intoQuarter)); // 7 minutes into a quarter hour
        now = clock.instant();
        Instant from = now.minus(Duration.ofDays(14)).plus(Duration.ofMinutes(1)); // the 1-minute level's retention: 14 days
        HttpApi.Response edge = api.get("/api/v1/usage/volumes/" + volumeA + "?from=" + from + "&to=" + now + "&step=15m");
        assertThat(edge.status()).as(edge.toString()).isEqualTo(200);
    }

    @Test
    void aTimestampBeyondWhatTheApiCountsInIsA400NamingTheParameter() {
        // Instant.MAX parses as RFC 3339 but overflows milliseconds: it answered 500 (found by ApiFuzzTest).
        for (String path : List.of("/api/v1/usage/top", "/api/v1/usage/volumes/" + volumeA)) {
            HttpApi.Response farTo = api.get(path + "?to=%2B999999999-12-31T23:59:59Z");
            assertThat(farTo.status()).as(path).isEqualTo(400);
            assertThat(farTo.contentType()).startsWith("application/problem+json");
            assertThat(farTo.json().get("errors").get(0).get("field").asString()).isEqualTo("to");

            HttpApi.Response farFrom = api.get(path + "?from=-999999999-01-01T00:00:00Z");
            assertThat(farFrom.status()).as(path).isEqualTo(400);
            assertThat(farFrom.json().get("errors").get(0).get("field").asString()).isEqualTo("from");
        }
    }
}
