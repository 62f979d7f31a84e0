package io.weir.controlplane.usage;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.weir.protocol.UsageReport;
import io.weir.protocol.UsageReport.VolumeUsage;
import java.io.StringReader;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Function;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Stores agents' usage reports: the one way usage gets into the database. The agent channel
 * ({@code controlplane.push}) hands it what agents send, through {@link #ingestPlaced}.
 *
 * <h2>What a report becomes</h2>
 * <ol>
 *   <li>A row in the ledger {@code usage_report}, keyed by (node, sequence). If the key is there
 *       already the report is a duplicate (a resend after a reconnect, a replay) and nothing else
 *       happens: every report is counted once, whatever the order reports arrive in.</li>
 *   <li>One raw row per volume and per task, written with PostgreSQL's {@code COPY}.</li>
 *   <li>Additions to the 1-minute and 1-hour rollups of the volume, its tenant and the task
 *       ({@code INSERT ... ON CONFLICT DO UPDATE} of set-valued arrays, one statement per
 *       table), so every level holds the same sums.</li>
 *   <li>The gaps the report announces ({@code usage_gap}), widened if already known.</li>
 * </ol>
 * All of it happens in one transaction: a report is stored entirely or not at all, and the
 * acknowledgement the caller sends afterwards means it is durable.
 *
 * <h2>Thread safety and batching</h2>
 * Safe for concurrent use. {@link #ingestAll} stores many reports in one transaction, which is
 * how a busy control plane should feed it (a queue drained by one or two threads); rollup rows
 * are written in key order, so concurrent batches touching the same rows wait for each other
 * and never deadlock.
 *
 * <h2>Time</h2>
 * A sample belongs to the bucket containing the start of its interval. A report whose interval
 * ended before the raw retention (the dedupe window of the ledger) is refused as
 * {@link Outcome#EXPIRED}: it could no longer be told from one already counted. Rollup levels
 * with a shorter reach than a sample's age leave that sample out.
 */
@Service
public class UsageIngest {

    /** What became of a report. */
    public enum Outcome {
        /** Stored now. */
        STORED,
        /** Stored before (same node and sequence); not counted again. */
        DUPLICATE,
        /** Older than the dedupe window; not stored. Acknowledge it anyway, resending cannot help. */
        EXPIRED
    }

    /** One report as received from one node. */
    public record Delivery(UUID nodeId, UsageReport report) {
        public Delivery {
            Objects.requireNonNull(nodeId, "nodeId");
            Objects.requireNonNull(report, "report");
        }
    }

    private final DataSource dataSource;
    private final TransactionTemplate transactions;
    private final UsagePartitions partitions;
    private final UsageDirectory directory;
    private final UsageMetrics metrics;
    private final Clock clock;
    /** Volume id to tenant id (empty for unknown volumes); a volume never changes tenant. */
    private final Cache<UUID, Optional<UUID>> tenants = Caffeine.newBuilder()
            .maximumSize(1_000_000).expireAfterWrite(Duration.ofMinutes(1)).build();

    UsageIngest(DataSource dataSource, TransactionTemplate transactions, UsagePartitions partitions,
            UsageDirectory directory, UsageMetrics metrics, Clock clock) {
        this.dataSource = dataSource;
        this.transactions = transactions;
        this.partitions = partitions;
        this.directory = directory;
        this.metrics = metrics;
        this.clock = clock;
    }

    /**
     * Stores reports as received from agents: first keeps, of each report, only the volumes that
     * are placed on the reporting node now (a node reports what its scheduler saw, and a volume
     * that is not placed there is not the node's to report: a stale or foreign id), then stores
     * them like {@link #ingestAll}. The volume samples left out of reports that are stored are
     * counted in {@code weir_usage_samples_unplaced_total}; tasks and gaps are kept whole.
     *
     * <p>Deviation: placement is read at ingest, not as it was during the report's interval, so
     * a report of a volume moved away since (a resend after a long disconnect) loses that
     * volume's samples; they are counted as unplaced.
     */
    public List<Outcome> ingestPlaced(List<Delivery> deliveries) {
        Set<UUID> volumeIds = new HashSet<>();
        deliveries.forEach(d -> d.report().volumes().forEach(v -> volumeIds.add(v.volumeId())));
        Map<UUID, Set<UUID>> placed = directory.nodesOfVolumes(volumeIds);
        List<Delivery> kept = new ArrayList<>(deliveries.size());
        long[] unplaced = new long[deliveries.size()];
        for (int i = 0; i < deliveries.size(); i++) {
            Delivery d = deliveries.get(i);
            UsageReport r = d.report();
            List<VolumeUsage> volumes = r.volumes().stream()
                    .filter(v -> placed.getOrDefault(v.volumeId(), Set.of()).contains(d.nodeId())).toList();
            unplaced[i] = r.volumes().size() - volumes.size();
            kept.add(unplaced[i] == 0 ? d
                    : new Delivery(d.nodeId(), new UsageReport(r.sequence(), r.from(), r.to(), volumes, r.tasks(), r.gaps())));
        }
        List<Outcome> outcomes = ingestAll(kept);
        long dropped = 0;
        for (int i = 0; i < unplaced.length; i++) {
            if (outcomes.get(i) == Outcome.STORED) {
                dropped += unplaced[i];
            }
        }
        metrics.unplaced(dropped);
        return outcomes;
    }

    /** Stores one report of node {@code nodeId}; see {@link #ingestAll}. */
    public Outcome ingest(UUID nodeId, UsageReport report) {
        return ingestAll(List.of(new Delivery(nodeId, report))).get(0);
    }

    /**
     * Stores reports in one transaction and answers, for each, what became of it (in the same
     * order). The caller may acknowledge every report once this returns.
     */
    public List<Outcome> ingestAll(List<Delivery> deliveries) {
        long started = System.nanoTime();
        Instant now = clock.instant();
        Outcome[] outcomes = new Outcome[deliveries.size()];
        Map<ReportKey, Integer> candidates = new LinkedHashMap<>();
        Set<UUID> volumeIds = new HashSet<>();
        for (int i = 0; i < deliveries.size(); i++) {
            Delivery d = deliveries.get(i);
            if (!partitions.retains(UsageLevel.RAW, d.report().to(), now)) {
                outcomes[i] = Outcome.EXPIRED;
            } else if (candidates.putIfAbsent(new ReportKey(d.nodeId(), d.report().sequence()), i) != null) {
                outcomes[i] = Outcome.DUPLICATE; // twice in this batch
            } else {
                d.report().volumes().forEach(v -> volumeIds.add(v.volumeId()));
            }
        }
        if (candidates.isEmpty()) {
            metrics.ingested(deliveries.size(), 0, 0, Map.of(), System.nanoTime() - started);
            countOutcomes(outcomes);
            return List.of(outcomes);
        }
        Map<UUID, Optional<UUID>> tenantOf = tenantsOf(volumeIds);
        for (int i : candidates.values()) {
            Instant from = deliveries.get(i).report().from();
            for (UsageLevel level : UsageLevel.values()) {
                if (partitions.retains(level, from, now)) {
                    partitions.ensure(level, from);
                }
            }
        }
        UsageBatch.Retention retained = (level, start) -> partitions.retains(level, start, now);
        UsageBatch batch = transactions.execute(status -> {
            try {
                Connection c = DataSourceUtils.getConnection(dataSource);
                Set<ReportKey> fresh = insertLedger(c, deliveries, candidates.values(), now);
                UsageBatch b = new UsageBatch();
                for (var e : candidates.entrySet()) {
                    int i = e.getValue();
                    if (fresh.contains(e.getKey())) {
                        outcomes[i] = Outcome.STORED;
                        b.add(deliveries.get(i), tenantOf, retained);
                    } else {
                        outcomes[i] = Outcome.DUPLICATE;
                    }
                }
                write(c, b);
                return b;
            } catch (SQLException e) {
                throw new IllegalStateException("could not store usage reports", e);
            }
        });
        metrics.ingested(deliveries.size(), batch.volumeSamples, batch.skippedSamples, batch.tenantTotals,
                System.nanoTime() - started);
        countOutcomes(outcomes);
        return List.of(outcomes);
    }

    private void countOutcomes(Outcome[] outcomes) {
        for (Outcome o : outcomes) {
            metrics.outcome(o);
        }
    }

    private Map<UUID, Optional<UUID>> tenantsOf(Set<UUID> volumeIds) {
        return tenants.getAll(volumeIds, missing -> {
            Map<UUID, UsageVolumes.VolumeInfo> found = directory.volumes(List.copyOf(missing));
            Map<UUID, Optional<UUID>> result = new HashMap<>();
            for (UUID id : missing) {
                UsageVolumes.VolumeInfo v = found.get(id);
                result.put(id, Optional.ofNullable(v == null ? null : v.tenantId()));
            }
            return result;
        });
    }

    private record ReportKey(UUID nodeId, long sequence) {
    }

    /**
     * Inserts the ledger rows; answers the keys that were new. The rows go in key order: two
     * transactions delivering the same reports in different orders would otherwise each hold a
     * key the other waits for (a deadlock PostgreSQL breaks by failing one of them). The rollup
     * upserts after it follow their maps' sorted order for the same reason.
     */
    private static Set<ReportKey> insertLedger(Connection c, List<Delivery> deliveries, Iterable<Integer> indexes,
            Instant now) throws SQLException {
        List<UUID> nodes = new ArrayList<>();
        List<Long> seqs = new ArrayList<>();
        List<String> froms = new ArrayList<>();
        List<String> tos = new ArrayList<>();
        for (int i : indexes) {
            Delivery d = deliveries.get(i);
            nodes.add(d.nodeId());
            seqs.add(d.report().sequence());
            froms.add(d.report().from().toString());
            tos.add(d.report().to().toString());
        }
        Set<ReportKey> fresh = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO usage_report (node_id, sequence, interval_from, "
                + "interval_to, received_at) SELECT n, s, f::timestamptz, t::timestamptz, ? FROM unnest(?::uuid[], "
                + "?::bigint[], ?::text[], ?::text[]) AS r(n, s, f, t) ORDER BY n, s ON CONFLICT DO NOTHING "
                + "RETURNING node_id, sequence")) {
            ps.setObject(1, java.time.OffsetDateTime.ofInstant(now, java.time.ZoneOffset.UTC));
            ps.setArray(2, c.createArrayOf("uuid", nodes.toArray()));
            ps.setArray(3, c.createArrayOf("bigint", seqs.toArray()));
            ps.setArray(4, c.createArrayOf("text", froms.toArray()));
            ps.setArray(5, c.createArrayOf("text", tos.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    fresh.add(new ReportKey(rs.getObject(1, UUID.class), rs.getLong(2)));
                }
            }
        }
        return fresh;
    }

        /** Writes {@code batch}: its raw rows with COPY, then its rollups and gaps, in key order. */
    private static void write(Connection c, UsageBatch batch) throws SQLException {
            try {
                var copy = c.unwrap(PGConnection.class).getCopyAPI();
                if (!batch.volumeCopy.isEmpty()) {
                    copy.copyIn("COPY usage_volume_raw (ts, duration_ms, node_id, volume_id, tenant_id, read_ops, "
                            + "write_ops, read_bytes, write_bytes, latency_p50_us, latency_p99_us, latency_max_us, "
                            + "queue_depth, throttled_ns, rejected, cpu_ns, queued_p50_us, queued_p99_us, replica_ops, replica_bytes) FROM STDIN", new StringReader(batch.volumeCopy.toString()));
                }
                if (!batch.taskCopy.isEmpty()) {
                    copy.copyIn("COPY usage_task_raw (ts, duration_ms, node_id, task, ops, cpu_ns, share, worker_ns) FROM STDIN",
                            new StringReader(batch.taskCopy.toString()));
                }
            } catch (java.io.IOException e) {
                throw new SQLException("COPY failed", e);
            }
            for (UsageLevel level : List.of(UsageLevel.MINUTE, UsageLevel.HOUR)) {
                upsertSums(c, "usage_volume_" + level.wireName(), "volume_id", true,
                        batch.volumeRollups.getOrDefault(level, new TreeMap<>()));
                upsertSums(c, "usage_tenant_" + level.wireName(), "tenant_id", false,
                        batch.tenantRollups.getOrDefault(level, new TreeMap<>()));
                upsertTasks(c, "usage_task_" + level.wireName(), batch.taskRollups.getOrDefault(level, new TreeMap<>()));
            }
            upsertGaps(c, batch.gaps);
        }

        private static void upsertGaps(Connection c, Map<UsageBatch.GapKey, UsageBatch.GapRow> gaps) throws SQLException {
            if (gaps.isEmpty()) {
                return;
            }
            List<Map.Entry<UsageBatch.GapKey, UsageBatch.GapRow>> rows = new ArrayList<>(gaps.entrySet());
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO usage_gap AS g (node_id, first_sequence, "
                    + "last_sequence, gap_from, gap_to, recorded_at) SELECT n, f, l, a::timestamptz, b::timestamptz, now() "
                    + "FROM unnest(?::uuid[], ?::bigint[], ?::bigint[], ?::text[], ?::text[]) AS r(n, f, l, a, b) "
                    + "ON CONFLICT (node_id, first_sequence) DO UPDATE SET last_sequence = GREATEST(g.last_sequence, "
                    + "excluded.last_sequence), gap_from = LEAST(g.gap_from, excluded.gap_from), "
                    + "gap_to = GREATEST(g.gap_to, excluded.gap_to)")) {
                ps.setArray(1, array(c, "uuid", rows, e -> e.getKey().nodeId()));
                ps.setArray(2, array(c, "bigint", rows, e -> e.getKey().firstSequence()));
                ps.setArray(3, array(c, "bigint", rows, e -> e.getValue().lastSequence()));
                ps.setArray(4, array(c, "text", rows, e -> e.getValue().from().toString()));
                ps.setArray(5, array(c, "text", rows, e -> e.getValue().to().toString()));
                ps.executeUpdate();
            }
        }

        private static void upsertSums(Connection c, String table, String keyColumn, boolean withTenant,
                TreeMap<UsageBatch.VolumeKey, UsageBatch.Sums> rows) throws SQLException {
            if (rows.isEmpty()) {
                return;
            }
            List<Map.Entry<UsageBatch.VolumeKey, UsageBatch.Sums>> list = new ArrayList<>(rows.entrySet());
            String cols = "bucket, " + keyColumn + (withTenant ? ", tenant_id" : "") + ", samples, read_ops, write_ops, "
                    + "read_bytes, write_bytes, latency_p50_wsum, latency_p99_wsum, latency_max_us, queue_depth_ms, "
                    + "throttled_ns, rejected, cpu_ns, queued_p50_wsum, queued_p99_wsum, replica_ops, replica_bytes";
            String sql = "INSERT INTO " + table + " AS u (" + cols + ") SELECT b::timestamptz, k"
                    + (withTenant ? ", t" : "") + ", s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16 FROM unnest("
                    + "?::text[], ?::uuid[]" + (withTenant ? ", ?::uuid[]" : "") + ", ?::bigint[], ?::bigint[], "
                    + "?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::float8[], "
                    + "?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[]) AS r(b, k"
                    + (withTenant ? ", t" : "")
                    + ", s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16) ON CONFLICT (" + keyColumn + ", bucket) "
                    + "DO UPDATE SET " + sat("samples") + ", " + sat("read_ops") + ", " + sat("write_ops") + ", "
                    + sat("read_bytes") + ", " + sat("write_bytes") + ", " + sat("latency_p50_wsum") + ", "
                    + sat("latency_p99_wsum") + ", "
                    + "latency_max_us = GREATEST(u.latency_max_us, excluded.latency_max_us), "
                    + satFloat("queue_depth_ms") + ", " + sat("throttled_ns") + ", " + sat("rejected") + ", "
                    + sat("cpu_ns") + ", " + sat("queued_p50_wsum") + ", " + sat("queued_p99_wsum") + ", "
                    + sat("replica_ops") + ", " + sat("replica_bytes")
                    + (withTenant ? ", tenant_id = COALESCE(u.tenant_id, excluded.tenant_id)" : "");
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                int p = 1;
                ps.setArray(p++, array(c, "text", list, e -> e.getKey().bucket().toString()));
                ps.setArray(p++, array(c, "uuid", list, e -> e.getKey().id()));
                if (withTenant) {
                    ps.setArray(p++, array(c, "uuid", list, e -> e.getValue().tenant));
                }
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().samples));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().readOps));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().writeOps));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().readBytes));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().writeBytes));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().p50Wsum));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().p99Wsum));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().maxUs));
                ps.setArray(p++, array(c, "float8", list, e -> e.getValue().queueDepthMs));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().throttledNs));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().rejected));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().cpuNs));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().queuedP50Wsum));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().queuedP99Wsum));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().replicaOps));
                ps.setArray(p++, array(c, "bigint", list, e -> e.getValue().replicaBytes));
                ps.executeUpdate();
            }
        }

        private static void upsertTasks(Connection c, String table, TreeMap<UsageBatch.TaskKey, UsageBatch.TaskSums> rows) throws SQLException {
            if (rows.isEmpty()) {
                return;
            }
            List<Map.Entry<UsageBatch.TaskKey, UsageBatch.TaskSums>> list = new ArrayList<>(rows.entrySet());
            String sql = "INSERT INTO " + table + " AS u (bucket, node_id, task, samples, ops, cpu_ns, share_ms, duration_ms, "
                    + "worker_ns) SELECT b::timestamptz, n, t, s1, s2, s3, s4, s5, s6 FROM unnest(?::text[], ?::uuid[], "
                    + "?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::float8[], ?::bigint[], ?::bigint[]) "
                    + "AS r(b, n, t, s1, s2, s3, s4, s5, s6) "
                    + "ON CONFLICT (node_id, bucket, task) DO UPDATE SET " + sat("samples") + ", " + sat("ops") + ", "
                    + sat("cpu_ns") + ", " + satFloat("share_ms") + ", " + sat("duration_ms") + ", " + sat("worker_ns");
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setArray(1, array(c, "text", list, e -> e.getKey().bucket().toString()));
                ps.setArray(2, array(c, "uuid", list, e -> e.getKey().nodeId()));
                ps.setArray(3, array(c, "text", list, e -> e.getKey().task()));
                ps.setArray(4, array(c, "bigint", list, e -> e.getValue().samples));
                ps.setArray(5, array(c, "bigint", list, e -> e.getValue().ops));
                ps.setArray(6, array(c, "bigint", list, e -> e.getValue().cpuNs));
                ps.setArray(7, array(c, "float8", list, e -> e.getValue().shareMs));
                ps.setArray(8, array(c, "bigint", list, e -> e.getValue().durationMs));
                ps.setArray(9, array(c, "bigint", list, e -> e.getValue().workerNs));
                ps.executeUpdate();
            }
        }

        private static <T> Array array(Connection c, String type, List<T> rows, Function<T, Object> f)
                throws SQLException {
            Object[] values = new Object[rows.size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = f.apply(rows.get(i));
            }
            return c.createArrayOf(type, values);
        }

    /** {@code column = u.column + excluded.column}, in numeric, clamped to a bigint. */
    private static String sat(String column) {
        return column + " = LEAST(u." + column + "::numeric + excluded." + column + ", 9223372036854775807)::bigint";
    }

    /** {@code column = u.column + excluded.column} of a float8, its terms clamped so that it stays finite. */
    private static String satFloat(String column) {
        return column + " = LEAST(u." + column + ", 1e300) + LEAST(excluded." + column + ", 1e300)";
    }

}
