package io.weir.controlplane.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.usage.UsageIngest;
import io.weir.controlplane.usage.UsageIngest.Delivery;
import io.weir.protocol.UsageReport;
import io.weir.support.DashboardBrowser;
import io.weir.protocol.UsageReport.TaskUsage;
import io.weir.protocol.UsageReport.VolumeUsage;
import tools.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The dashboard in Debian's headless Chromium, driven by playwright-core
 * ({@link DashboardBrowser}): it signs in, shows the overview and draws charts
 * from an hour of usage stored through {@link UsageIngest}, as an admin and as a tenant-admin.
 * Screenshots go to {@code target/dashboard-*.png}. Needs {@code chromium} and {@code node}
 * (and installs the pinned playwright-core with {@code npm ci} if it is not there yet).
 */
@Tag("e2e")
class DashboardE2ETest extends IntegrationTest {

    private static final tools.jackson.databind.json.JsonMapper JSON = tools.jackson.databind.json.JsonMapper.builder().build();

    @Autowired
    UsageIngest ingest;

    @Autowired
    JdbcTemplate jdbc;

    private UUID acme;
    private UUID n1;
    private UUID n2;
    private UUID n3;
    private final List<UUID> onN1 = new ArrayList<>();
    private final List<UUID> onN2 = new ArrayList<>();
    private final List<UUID> onN3 = new ArrayList<>();
    private final List<UUID> busyTenants = new ArrayList<>();
    private long sequence;
    private Instant reportedUntil;

    private static String id(HttpApi.Response r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }

    @BeforeEach
    void usage() {
        // Older tenants, volumes and nodes without usage (as other tests leave in the shared
        // database, or an idle part of a cluster): the page must still lead with the busy ones.
        for (int i = 0; i < 30; i++) {
            String idle = id(api.post("/api/v1/tenants", "{\"name\":\"" + unique("idle") + "\"}"));
            id(api.post("/api/v1/tenants/" + idle + "/volumes", "{\"name\":\"quiet\",\"sizeBytes\":1048576}"));
        }
        id(api.post("/api/v1/nodes", "{\"name\":\"" + unique("spare") + "\"}"));
        acme = UUID.fromString(id(api.post("/api/v1/tenants", "{\"name\":\"" + unique("acme") + "\",\"displayName\":\"Acme Corp\"}")));
        UUID globex = UUID.fromString(id(api.post("/api/v1/tenants", "{\"name\":\"" + unique("globex") + "\"}")));
        n1 = UUID.fromString(id(api.post("/api/v1/nodes", "{\"name\":\"" + unique("store-a") + "\",\"address\":\"10.0.0.11:10809\"}")));
        n2 = UUID.fromString(id(api.post("/api/v1/nodes", "{\"name\":\"" + unique("store-b") + "\",\"address\":\"10.0.0.12:10809\"}")));
        // 3000 IOPS per GiB, at least 100, at most 16000: each 1 GiB volume is limited to 3000 by its per-GiB term
        String gp = id(api.post("/api/v1/policies", "{\"name\":\"" + unique("gp") + "\",\"maxIopsPerGiB\":3000,"
                + "\"maxIopsFloor\":100,\"maxIops\":16000}"));
        String[][] volumes = {{"db", "1"}, {"logs", "1"}, {"analytics", "2"}};
        for (String[] v : volumes) {
            String body = "{\"name\":\"" + v[0] + "\",\"sizeBytes\":1073741824,\"policyId\":\"" + gp + "\",\"nodeIds\":[\""
                    + (v[1].equals("1") ? n1 : n2) + "\"]}";
            UUID vid = UUID.fromString(id(api.post("/api/v1/tenants/" + acme + "/volumes", body)));
            (v[1].equals("1") ? onN1 : onN2).add(vid);
        }
        onN2.add(UUID.fromString(id(api.post("/api/v1/tenants/" + globex + "/volumes",
                "{\"name\":\"web\",\"sizeBytes\":1073741824,\"policyId\":\"" + gp + "\",\"nodeIds\":[\"" + n2 + "\"]}"))));
        busyTenants.addAll(List.of(acme, globex));
        // more busy tenants than the tenant table shows (12), each a little busy: the cluster's
        // figures count them all
        n3 = UUID.fromString(id(api.post("/api/v1/nodes", "{\"name\":\"" + unique("store-c") + "\",\"address\":\"10.0.0.13:10809\"}")));
        for (int i = 0; i < 13; i++) {
            UUID small = UUID.fromString(id(api.post("/api/v1/tenants", "{\"name\":\"" + unique("small") + "\"}")));
            busyTenants.add(small);
            onN3.add(UUID.fromString(id(api.post("/api/v1/tenants/" + small + "/volumes",
                    "{\"name\":\"app\",\"sizeBytes\":1073741824,\"nodeIds\":[\"" + n3 + "\"]}"))));
        }
        // push status as an agent would leave it: store-a applied the current revision, store-b is behind
        jdbc.update("UPDATE data_node SET applied_revision = (SELECT revision FROM config_revision), last_ack_at = now() WHERE id = ?", n1);
        jdbc.update("UPDATE data_node SET applied_revision = GREATEST((SELECT revision FROM config_revision) - 2, 0) WHERE id = ?", n2);

        Instant start = clock.instant().truncatedTo(ChronoUnit.SECONDS).minus(Duration.ofMinutes(62));
        List<Delivery> deliveries = new ArrayList<>();
        for (int i = 0; i < 372; i++) {
            Instant from = start.plusSeconds(10L * i);
            deliveries.add(new Delivery(n1, report(i + 1, from, onN1, i, 0)));
            deliveries.add(new Delivery(n3, report(i + 1, from, onN3, i, 1, 0.05)));
            if (i < 200 || i > 202) { // store-b's agent dropped reports 201 to 203, and its next one says so
                UsageReport r = report(i + 1, from, onN2, i, 3);
                deliveries.add(new Delivery(n2, i != 203 ? r : new UsageReport(r.sequence(), r.from(), r.to(), r.volumes(),
                        r.tasks(), List.of(new UsageReport.Gap(201, 203, start.plusSeconds(2000), start.plusSeconds(2030))))));
            }
        }
        for (int i = 0; i < deliveries.size(); i += 200) {
            ingest.ingestAll(deliveries.subList(i, Math.min(i + 200, deliveries.size())));
        }
        sequence = 372;
        reportedUntil = start.plusSeconds(3720);
    }

    /** Keeps reporting, as the two nodes' agents would, while the browser looks: the page is live. */
    private synchronized void reportUpToNow() {
        Instant now = clock.instant();
        while (!reportedUntil.plusSeconds(10).isAfter(now)) {
            int i = (int) ++sequence;
            ingest.ingestAll(List.of(new Delivery(n1, report(i, reportedUntil, onN1, i, 0)),
                    new Delivery(n2, report(i, reportedUntil, onN2, i, 3)), new Delivery(n3, report(i, reportedUntil, onN3, i, 1, 0.05))));
            reportedUntil = reportedUntil.plusSeconds(10);
        }
    }

    /** Ten seconds of a node whose volumes follow slow waves of load, with a throttled burst now and then. */
    private static UsageReport report(long seq, Instant from, List<UUID> volumes, int i, int phase) {
        return report(seq, from, volumes, i, phase, 1);
    }

    /** As {@link #report(long, Instant, List, int, int)}, its IO scaled by {@code load}. */
    private static UsageReport report(long seq, Instant from, List<UUID> volumes, int i, int phase, double load) {
        List<VolumeUsage> vs = new ArrayList<>();
        long cpuTotal = 0;
        for (int k = 0; k < volumes.size(); k++) {
            double wave = 1 + 0.6 * Math.sin((i + 17 * (k + phase)) / 18.0) + 0.25 * Math.sin((i + 5 * k) / 4.0);
            long reads = Math.round(10 * (2200 + 900 * k) * wave * load);
            long writes = Math.round(10 * (900 + 400 * phase) * wave * load);
            boolean throttled = (i / 30 + k + phase) % 4 == 0;
            long p50 = Math.round(180 + 60 * wave + (throttled ? 400 : 0));
            long cpu = (reads + writes) * 9_000;
            cpuTotal += cpu;
            long replica = writes / 2; // applied as a copy for a primary elsewhere: the dashboard draws it apart
            vs.add(new VolumeUsage(volumes.get(k), reads, writes, reads * 4096, writes * 16384, p50, p50 * 4, p50 * 11,
                    2 + 6 * wave + (throttled ? 20 : 0), throttled ? 2_500_000_000L : 0, 0, cpu, 0, 0, replica, replica * 16384));
        }
        long gc = Math.round(cpuTotal * (0.08 + 0.05 * Math.sin(i / 25.0)));
        long flush = Math.round(cpuTotal * (0.12 + 0.08 * Math.sin(i / 11.0)));
        // worker time: CPU time plus time blocked in the store, where flush and scrub wait most
        List<TaskUsage> tasks = List.of(new TaskUsage("foreground", 0, cpuTotal, cpuTotal * 2, 700),
                new TaskUsage("gc", 40, gc, gc, 100),
                new TaskUsage("flush", 60, flush, flush * 4, 100 + 200 * Math.max(0, Math.sin(i / 11.0))),
                new TaskUsage("replication", 20, cpuTotal / 20, cpuTotal / 10, 50),
                new TaskUsage("scrub", 5, cpuTotal / 50, cpuTotal / 10, 50));
        return new UsageReport(seq, from, from.plusSeconds(10), vs, tasks, List.of());
    }

    private String browse(String token, String screenshot, String expect) throws IOException, InterruptedException {
        ScheduledExecutorService agents = Executors.newSingleThreadScheduledExecutor();
        agents.scheduleAtFixedRate(this::reportUpToNow, 0, 1, TimeUnit.SECONDS);
        try {
            return DashboardBrowser.check("http://127.0.0.1:" + port, token, screenshot, expect);
        } finally {
            agents.shutdownNow();
            agents.awaitTermination(1, TimeUnit.MINUTES);
        }
    }

    @Test
    void anAdminSignsInAndSeesTheClusterWithLiveCharts() throws Exception {
        String out = browse(ADMIN_TOKEN, "dashboard-admin.png", "admin");
        assertThat(out).contains("\"nodeRows\":[[").contains("Acme Corp");
        JsonNode seen = JSON.readTree(out);
        assertThat(seen.get("tenantRows")).hasSize(12);
        assertCountsEveryTenant(seen.get("kpi"), api, busyTenants);
        // the reports the nodes dropped in the range, each once, though store-b's are in the series
        // of both of its tenants: store-b's three, and any another test left in the shared database
        String banner = seen.get("gaps").asString();
        List<String> ranges = List.of(banner.substring(banner.indexOf('(') + 1, banner.lastIndexOf(')')).split(", "));
        JsonNode gaps = api.get("/api/v1/usage/total?from=" + clock.instant().minus(Duration.ofHours(1))).json().get("gaps");
        long dropped = 0;
        for (JsonNode g : gaps) {
            dropped += g.get("lastSequence").asLong() - g.get("firstSequence").asLong() + 1;
        }
        assertThat(ranges).as(banner).hasSize(gaps.size()).doesNotHaveDuplicates();
        assertThat(banner).contains("dropped " + dropped + " unacknowledged report(s)");
        assertThat(dropped).isGreaterThanOrEqualTo(3);
        // the chosen volume's numbers in force, with the term that produced each
        assertThat(out).contains("[\"IOPS limit\",\"3000\",\"per GiB\"]").contains("[\"Reservation\",\"none\",\"–\"]");
    }

    @Test
    void aTenantAdminSeesOnlyItsTenant() throws Exception {
        String token = mintToken("tenant-admin", acme, null);
        String out = browse(token, "dashboard-tenant-admin.png", "tenant");
        assertThat(out).contains("\"tenants\":\"1\"").contains("\"volumes\":\"3\"").contains("\"nodeRows\":null");
        assertCountsEveryTenant(JSON.readTree(out).get("kpi"), apiAs(token), List.of(acme));
    }

    /**
     * The "IOPS now" figure is the caller's total at the point it shows ({@code /usage/total},
     * whose sums {@code UsageQueryTest} checks against the reports), and it counts each of
     * {@code tenants}: not only the tenants the table has room for.
     */
    private void assertCountsEveryTenant(JsonNode kpi, HttpApi as, List<UUID> tenants) {
        assertThat(kpi.get("ts").asString()).as("the point the IOPS figure shows").isNotEmpty();
        Instant ts = Instant.parse(kpi.get("ts").asString());
        String point = "?from=" + ts + "&to=" + ts.plusSeconds(10) + "&step=10s";
        JsonNode total = as.get("/api/v1/usage/total" + point).json().get("points").get(0);
        assertThat(Double.parseDouble(kpi.get("value").asString())).isEqualTo(total.get("iops").asDouble());
        long ofTenants = 0;
        for (UUID t : tenants) {
            long ops = ops(as.get("/api/v1/usage/tenants/" + t + point).json().get("points").get(0));
            assertThat(ops).as("tenant " + t + " at " + ts).isPositive();
            ofTenants += ops;
        }
        assertThat(ops(total)).isGreaterThanOrEqualTo(ofTenants);
    }

    private static long ops(JsonNode point) {
        return point.get("readOps").asLong() + point.get("writeOps").asLong();
    }
}
