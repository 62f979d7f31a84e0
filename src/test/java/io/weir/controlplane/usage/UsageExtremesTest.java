package io.weir.controlplane.usage;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.UsageReport;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Stored extremes (issue 23, items 8 and 9): rows the database holds with values at the edge of
 * their columns, written here as SQL (as reports accepted before the protocol's bounds could
 * leave them), never break a query for everyone, never answer 400 for the server's data, never
 * serve "Infinity"; and a tenant's rollup at the edge of a bigint does not make the next report
 * of that tenant fail. Real PostgreSQL; the clock is the tests' MutableClock (now).
 */
class UsageExtremesTest extends IntegrationTest {

    private static final long MAX = Long.MAX_VALUE;

    @Autowired
    UsageIngest ingest;

    @Autowired
    UsagePartitions partitions;

    @Autowired
    JdbcTemplate jdbc;

    private UUID tenant;
    private UUID node;
    private UUID volume;
    private Instant minute;

    @BeforeEach
    void setUp() {
        partitions.maintain();
        node = UsageFixtures.node(api, unique("n"));
        tenant = UsageFixtures.tenant(api, unique("t"));
        volume = UsageFixtures.volume(api, tenant, unique("v"), node);
        minute = clock.instant().truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(2));
        partitions.ensure(UsageLevel.RAW, minute);
        partitions.ensure(UsageLevel.MINUTE, minute);
        partitions.ensure(UsageLevel.HOUR, minute);
    }

    private void rawRow(long readOps, long latencyUs, double queueDepth) {
        jdbc.update("INSERT INTO usage_volume_raw (ts, duration_ms, node_id, volume_id, tenant_id, read_ops, write_ops, "
                + "read_bytes, write_bytes, latency_p50_us, latency_p99_us, latency_max_us, queue_depth, throttled_ns, "
                + "rejected, cpu_ns) VALUES (?, 10000, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, 0, ?)",
                Timestamp.from(minute.plusSeconds(5)), node, volume, tenant, readOps, readOps, readOps, latencyUs,
                latencyUs, latencyUs, queueDepth, MAX, MAX);
    }

    private void minuteRow(String table, String keyColumn, UUID key, Instant bucket) {
        jdbc.update("INSERT INTO " + table + " (bucket, " + keyColumn + ", samples, read_ops, write_ops, read_bytes, "
                + "write_bytes, latency_p50_wsum, latency_p99_wsum, latency_max_us, queue_depth_ms, throttled_ns, "
                + "rejected, cpu_ns) VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, 1e308, ?, ?, ?)", Timestamp.from(bucket), key,
                MAX - 11, MAX - 11, MAX, MAX, MAX, MAX, MAX, MAX, MAX, MAX);
    }

    private void assertServes(HttpApi.Response r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.body()).doesNotContain("Infinity").doesNotContain("NaN");
    }

    @Test
    void rawRowsAtTheEdgeOfTheirColumnsBreakNoQuery() {
        // readOps near 2^63 twice (their sum overflows a bigint), latency 2^40 µs over 2^30 ops
        // (the product overflows one), queue depth 1e308 (its product with the duration is infinite).
        rawRow(MAX - 11, 1L << 40, 1e308);
        rawRow(MAX - 11, 1L << 40, 1e308);
        rawRow(1L << 30, 1L << 40, 1e308);
        String range = "from=" + minute.minus(Duration.ofMinutes(5)) + "&to=" + minute.plus(Duration.ofMinutes(5));

        for (String by : List.of("iops", "bytes", "latency", "throttled")) {
            assertServes(api.get("/api/v1/usage/top?by=" + by + "&step=10s&" + range));
        }
        assertServes(api.get("/api/v1/usage/volumes/" + volume + "?step=10s&" + range));
        assertServes(api.get("/api/v1/usage/tenants/" + tenant + "?step=10s&" + range));
        assertServes(api.get("/api/v1/usage/total?step=10s&" + range));
        HttpApi.Response top = api.get("/api/v1/usage/top?by=iops&step=10s&tenantId=" + tenant + "&" + range);
        assertServes(top);
        assertThat(top.json().get("volumes").get(0).get("readOps").asLong()).as("clamped, not wrapped").isEqualTo(MAX);
    }

    @Test
    void rollupRowsAtTheEdgeOfTheirColumnsBreakNoQuery() {
        minuteRow("usage_volume_1m", "volume_id", volume, minute);
        minuteRow("usage_volume_1m", "volume_id", volume, minute.plus(Duration.ofMinutes(1)));
        minuteRow("usage_tenant_1m", "tenant_id", tenant, minute);
        minuteRow("usage_tenant_1m", "tenant_id", tenant, minute.plus(Duration.ofMinutes(1)));
        String range = "from=" + minute.minus(Duration.ofMinutes(5)) + "&to=" + minute.plus(Duration.ofMinutes(5));

        assertServes(api.get("/api/v1/usage/top?by=iops&step=1m&" + range));
        assertServes(api.get("/api/v1/usage/top?by=latency&step=5m&" + range));
        assertServes(api.get("/api/v1/usage/volumes/" + volume + "?step=5m&" + range));
        assertServes(api.get("/api/v1/usage/tenants/" + tenant + "?step=5m&" + range));
    }

    @Test
    void aTenantsRollupAtTheEdgeOfABigintDoesNotFailTheNextReport() {
        UUID other = UsageFixtures.volume(api, tenant, unique("v"), node);
        Instant from = clock.instant().minusSeconds(30);
        // A report accepted before the protocol's bounds: readOps 2^63 - 11 in the tenant's rollups.
        minuteRow("usage_tenant_1m", "tenant_id", tenant, UsageLevel.MINUTE.bucket(from));
        minuteRow("usage_tenant_1h", "tenant_id", tenant, UsageLevel.HOUR.bucket(from));
        UsageReport next = new UsageReport(1, from, from.plusSeconds(10),
                List.of(UsageFixtures.figures(other, 1000), new UsageReport.VolumeUsage(volume, UsageReport.MAX_COUNT, 0, 0, 0, 100,
                        200, 300, 0.5, 0, 0, 0)),
                List.of(), List.of());

        assertThat(ingest.ingest(node, next)).isEqualTo(UsageIngest.Outcome.STORED);
        assertThat(jdbc.queryForObject("SELECT read_ops FROM usage_tenant_1h WHERE tenant_id = ?", Long.class, tenant))
                .as("clamped at the largest bigint").isEqualTo(MAX);
    }
}
