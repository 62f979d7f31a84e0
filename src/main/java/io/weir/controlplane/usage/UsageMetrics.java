package io.weir.controlplane.usage;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The usage feature's Prometheus metrics. Cardinality is bounded: no label names a volume or a
 * node; per-tenant totals carry one {@code tenant} label (the tenant id), so their number of
 * series is the number of tenants.
 *
 * <table>
 *   <caption>Metrics (Prometheus names)</caption>
 *   <tr><td>{@code weir_usage_reports_total{outcome=stored|duplicate|expired}}</td><td>reports received</td></tr>
 *   <tr><td>{@code weir_usage_samples_total}</td><td>raw volume samples stored (the ingest rate)</td></tr>
 *   <tr><td>{@code weir_usage_samples_skipped_total}</td><td>volume samples older than the raw retention (rollups only)</td></tr>
 *   <tr><td>{@code weir_usage_samples_unplaced_total}</td><td>volume samples dropped: the volume is not placed on the reporting node</td></tr>
 *   <tr><td>{@code weir_usage_ingest_seconds}</td><td>time per ingest call (one transaction)</td></tr>
 *   <tr><td>{@code weir_usage_dropped_reports}</td><td>reports agents dropped unacknowledged, as recorded gaps (within gap retention)</td></tr>
 *   <tr><td>{@code weir_usage_gaps}</td><td>recorded gap ranges</td></tr>
 *   <tr><td>{@code weir_usage_tenant_ops_total{tenant}}, {@code weir_usage_tenant_bytes_total{tenant}}</td><td>per-tenant client IO since start (not what copies apply for their primaries)</td></tr>
 * </table>
 */
@Component
class UsageMetrics {

    private final MeterRegistry registry;
    private final Counter samples;
    private final Counter skipped;
    private final Counter unplaced;
    private final Timer ingestTime;
    private final Map<UsageIngest.Outcome, Counter> outcomes;

    UsageMetrics(MeterRegistry registry, JdbcTemplate jdbc) {
        this.registry = registry;
        this.samples = Counter.builder("weir.usage.samples").description("Raw volume samples stored").register(registry);
        this.skipped = Counter.builder("weir.usage.samples.skipped")
                .description("Volume samples older than the raw retention, kept in rollups only").register(registry);
        this.unplaced = Counter.builder("weir.usage.samples.unplaced")
                .description("Volume samples dropped because the volume is not placed on the reporting node")
                .register(registry);
        this.ingestTime = Timer.builder("weir.usage.ingest").description("Time per ingest transaction").register(registry);
        this.outcomes = Map.of(
                UsageIngest.Outcome.STORED, outcome(registry, "stored"),
                UsageIngest.Outcome.DUPLICATE, outcome(registry, "duplicate"),
                UsageIngest.Outcome.EXPIRED, outcome(registry, "expired"));
        Gauge.builder("weir.usage.dropped.reports", jdbc, j -> count(j,
                        "SELECT COALESCE(sum(last_sequence - first_sequence + 1), 0) FROM usage_gap"))
                .description("Reports agents dropped unacknowledged (recorded gaps)").register(registry);
        Gauge.builder("weir.usage.gaps", jdbc, j -> count(j, "SELECT count(*) FROM usage_gap"))
                .description("Recorded gap ranges").register(registry);
    }

    private static Counter outcome(MeterRegistry registry, String outcome) {
        return Counter.builder("weir.usage.reports").tag("outcome", outcome).description("Usage reports received")
                .register(registry);
    }

    private static double count(JdbcTemplate jdbc, String sql) {
        Number n = jdbc.queryForObject(sql, Number.class);
        return n == null ? 0 : n.doubleValue();
    }

    void outcome(UsageIngest.Outcome o) {
        outcomes.get(o).increment();
    }

    void unplaced(long samples) {
        unplaced.increment(samples);
    }

    void ingested(int reports, long volumeSamples, long skippedSamples, Map<UUID, long[]> tenantTotals, long nanos) {
        samples.increment(volumeSamples);
        skipped.increment(skippedSamples);
        ingestTime.record(nanos, TimeUnit.NANOSECONDS);
        tenantTotals.forEach((tenant, t) -> {
            registry.counter("weir.usage.tenant.ops", "tenant", tenant.toString()).increment(t[0]);
            registry.counter("weir.usage.tenant.bytes", "tenant", tenant.toString()).increment(t[1]);
        });
    }
}
