package io.weir.controlplane.usage;

import static io.weir.controlplane.database.SqlSums.sum;

import io.weir.controlplane.usage.TaskUsageSeries.TaskPoint;
import io.weir.controlplane.usage.TaskUsageSeries.TaskSeries;
import io.weir.controlplane.usage.UsageSeries.UsageGap;
import io.weir.controlplane.usage.UsageSeries.UsagePoint;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;

/**
 * Reads usage series from the level a {@link UsageRange} picked. Points come from
 * {@code date_bin(step, time, from)} over the level's rows, so a sample counts in the point that
 * contains its bucket (for raw samples: the start of the report's interval). Points without rows
 * are filled with zeros (latency null), so a series has exactly {@link UsageRange#points()}
 * points.
 */
@Service
class UsageQueries {

    /*
     * Stored extremes never break a query (a row from before the protocol's bounds, or sums that
     * reached them): sums of bigint columns are numeric in PostgreSQL and are clamped to a bigint
     * ({@link SqlSums#sum}), products are taken in float8, and float terms are clamped so that a sum of them
     * stays finite (no "Infinity" in a series, no out-of-range error for every caller).
     */

    /** Largest mean queue depth a raw row counts with (the protocol's bound). */
    static final String MAX_QUEUE_DEPTH = "4294967296";

    /** Largest float term a sum takes: a billion of them stay finite. */
    static final String MAX_FLOAT_TERM = "1e290";

    /** The aggregate columns of a raw-sample select, in {@link #point} order. */
    private static final String RAW_SUMS = sum("read_ops") + ", " + sum("write_ops") + ", " + sum("read_bytes") + ", "
            + sum("write_bytes") + ", sum(latency_p50_us::float8 * (read_ops::float8 + write_ops)), "
            + "sum(latency_p99_us::float8 * (read_ops::float8 + write_ops)), max(latency_max_us), "
            + "sum(LEAST(queue_depth, " + MAX_QUEUE_DEPTH + ") * duration_ms), " + sum("throttled_ns") + ", "
            + sum("rejected") + ", " + sum("cpu_ns") + ", sum(queued_p50_us::float8 * (read_ops::float8 + write_ops)), "
            + "sum(queued_p99_us::float8 * (read_ops::float8 + write_ops)), " + sum("replica_ops") + ", " + sum("replica_bytes");

    /** The aggregate columns of a rollup select, in {@link #point} order. */
    private static final String ROLLUP_SUMS = sum("read_ops") + ", " + sum("write_ops") + ", " + sum("read_bytes") + ", "
            + sum("write_bytes") + ", sum(latency_p50_wsum::float8), sum(latency_p99_wsum::float8), max(latency_max_us), "
            + "sum(LEAST(queue_depth_ms, " + MAX_FLOAT_TERM + ")), " + sum("throttled_ns") + ", " + sum("rejected") + ", "
            + sum("cpu_ns") + ", sum(queued_p50_wsum::float8), sum(queued_p99_wsum::float8), " + sum("replica_ops") + ", "
            + sum("replica_bytes");

    private final JdbcTemplate jdbc;

    UsageQueries(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** Points of one volume. */
    List<UsagePoint> volume(UUID volumeId, UsageRange range) {
        String table = range.level() == UsageLevel.RAW ? "usage_volume_raw" : "usage_volume_" + range.level().wireName();
        return series(table, "volume_id", volumeId, range);
    }

    /** Points of one tenant, summed over its volumes. */
    List<UsagePoint> tenant(UUID tenantId, UsageRange range) {
        String table = range.level() == UsageLevel.RAW ? "usage_volume_raw" : "usage_tenant_" + range.level().wireName();
        return series(table, "tenant_id", tenantId, range);
    }

    /** Points summed over every volume of every tenant. */
    List<UsagePoint> total(UsageRange range) {
        String table = range.level() == UsageLevel.RAW ? "usage_volume_raw" : "usage_tenant_" + range.level().wireName();
        return series(table, null, null, range);
    }

    /** Points of the rows whose {@code keyColumn} is {@code key}; of all rows if {@code keyColumn} is null. */
    private List<UsagePoint> series(String table, String keyColumn, UUID key, UsageRange range) {
        String time = range.level().timeColumn;
        String sums = range.level() == UsageLevel.RAW ? RAW_SUMS : ROLLUP_SUMS;
        String sql = "SELECT date_bin(make_interval(secs => ?), " + time + ", ?) AS p, " + sums + " FROM " + table
                + " WHERE " + (keyColumn == null ? "" : keyColumn + " = ? AND ") + time + " >= ? AND " + time
                + " < ? GROUP BY p ORDER BY p";
        List<Object> args = new ArrayList<>(List.of(range.step().toSeconds(), at(range.from())));
        if (keyColumn != null) {
            args.add(key);
        }
        args.addAll(List.of(at(range.from()), at(range.to())));
        UsagePoint[] points = new UsagePoint[range.points()];
        double stepSec = range.step().toMillis() / 1000.0;
        jdbc.query(sql, rs -> {
            Instant ts = rs.getObject(1, OffsetDateTime.class).toInstant();
            int i = index(range, ts);
            if (i >= 0 && i < points.length) {
                points[i] = point(ts, rs, 2, stepSec, range.step().toMillis());
            }
        }, args.toArray());
        for (int i = 0; i < points.length; i++) {
            if (points[i] == null) {
                points[i] = new UsagePoint(ts(range, i), 0, 0, 0, 0, 0, 0, null, null, null, 0, 0, 0, 0, null, null, 0, 0);
            }
        }
        return List.of(points);
    }

    /** The point of one aggregated row, columns from {@code c} in RAW_SUMS/ROLLUP_SUMS order. */
    private static UsagePoint point(Instant ts, ResultSet rs, int c, double stepSec, long stepMs) throws SQLException {
        long readOps = rs.getLong(c), writeOps = rs.getLong(c + 1), readBytes = rs.getLong(c + 2),
                writeBytes = rs.getLong(c + 3);
        long ops = add(readOps, writeOps);
        Long p50 = ops == 0 ? null : Math.round(rs.getDouble(c + 4) / ops);
        Long p99 = ops == 0 ? null : Math.round(rs.getDouble(c + 5) / ops);
        Long max = ops == 0 ? null : rs.getLong(c + 6);
        double queueDepth = finite(rs.getDouble(c + 7) / stepMs);
        Long queuedP50 = ops == 0 ? null : Math.round(rs.getDouble(c + 11) / ops);
        Long queuedP99 = ops == 0 ? null : Math.round(rs.getDouble(c + 12) / ops);
        return new UsagePoint(ts, readOps, writeOps, readBytes, writeBytes, ops / stepSec,
                ((double) readBytes + writeBytes) / stepSec, p50, p99, max, queueDepth, rs.getLong(c + 8) / 1e6,
                rs.getLong(c + 9), rs.getLong(c + 10) / 1e6, queuedP50, queuedP99, rs.getLong(c + 13), rs.getLong(c + 14));
    }

    /** One node's task series. */
    List<TaskSeries> tasks(UUID nodeId, UsageRange range) {
        String time = range.level().timeColumn;
        boolean raw = range.level() == UsageLevel.RAW;
        String table = raw ? "usage_task_raw" : "usage_task_" + range.level().wireName();
        String sql = "SELECT date_bin(make_interval(secs => ?), " + time + ", ?) AS p, task, " + sum("ops") + ", "
                + sum("cpu_ns") + ", " + sum("GREATEST(worker_ns, cpu_ns)::numeric") + ", " // CPU where no worker time was reported
                + (raw ? "sum(LEAST(share, 1e6) * duration_ms), sum(duration_ms::float8)"
                        : "sum(LEAST(share_ms, " + MAX_FLOAT_TERM + ")), sum(duration_ms::float8)")
                + " FROM " + table + " WHERE node_id = ? AND " + time + " >= ? AND " + time + " < ? GROUP BY p, task";
        int n = range.points();
        Map<String, long[][]> byTask = new TreeMap<>(); // [point][ops, cpu, worker]
        Map<String, double[][]> shares = new TreeMap<>(); // [point][shareMs, durationMs]
        long[] cpuPerPoint = new long[n];
        long[] workerPerPoint = new long[n];
        jdbc.query(sql, rs -> {
            int i = index(range, rs.getObject(1, OffsetDateTime.class).toInstant());
            if (i < 0 || i >= n) {
                return;
            }
            String task = rs.getString(2);
            long[][] v = byTask.computeIfAbsent(task, k -> new long[n][3]);
            v[i][0] = add(v[i][0], rs.getLong(3));
            v[i][1] = add(v[i][1], rs.getLong(4));
            v[i][2] = add(v[i][2], rs.getLong(5));
            double[][] s = shares.computeIfAbsent(task, k -> new double[n][2]);
            s[i][0] += rs.getDouble(6);
            s[i][1] += rs.getDouble(7);
            cpuPerPoint[i] = add(cpuPerPoint[i], rs.getLong(4));
            workerPerPoint[i] = add(workerPerPoint[i], rs.getLong(5));
        }, range.step().toSeconds(), at(range.from()), nodeId, at(range.from()), at(range.to()));
        List<TaskSeries> result = new ArrayList<>();
        byTask.forEach((task, v) -> {
            double[][] s = shares.get(task);
            List<TaskPoint> points = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                double cpuFraction = cpuPerPoint[i] == 0 ? 0 : (double) v[i][1] / cpuPerPoint[i];
                double workerFraction = workerPerPoint[i] == 0 ? 0 : (double) v[i][2] / workerPerPoint[i];
                Double share = s[i][1] == 0 ? null : s[i][0] / s[i][1];
                points.add(new TaskPoint(ts(range, i), v[i][0], v[i][1] / 1e6, cpuFraction, v[i][2] / 1e6,
                        workerFraction, share));
            }
            result.add(new TaskSeries(task, points));
        });
        return result;
    }

    /** Measures a top-N ranks by. */
    enum TopMeasure {
        IOPS("sum(read_ops::numeric + write_ops)"),
        BYTES("sum(read_bytes::numeric + write_bytes)"),
        LATENCY(null),
        THROTTLED("sum(throttled_ns::numeric)");

        final String rollupOrder;

        TopMeasure(String rollupOrder) {
            this.rollupOrder = rollupOrder;
        }
    }

    /** The top volumes over the range, optionally of one tenant. */
    List<TopVolumes.Entry> top(TopMeasure by, int limit, UUID tenantId, UsageRange range, UsageDirectory directory) {
        boolean raw = range.level() == UsageLevel.RAW;
        String table = raw ? "usage_volume_raw" : "usage_volume_" + range.level().wireName();
        String time = range.level().timeColumn;
        String p99 = raw ? "sum(latency_p99_us::float8 * (read_ops::float8 + write_ops))" : "sum(latency_p99_wsum::float8)";
        String order = by == TopMeasure.LATENCY ? p99 + " / NULLIF(sum(read_ops::float8 + write_ops), 0)" : by.rollupOrder;
        // the tenant stored with a volume's rows: a volume deleted since keeps it
        String sql = "SELECT volume_id, " + sum("read_ops") + ", " + sum("write_ops") + ", " + sum("read_bytes") + ", "
                + sum("write_bytes") + ", " + p99 + ", " + sum("throttled_ns")
                + ", (array_agg(tenant_id) FILTER (WHERE tenant_id IS NOT NULL))[1] FROM " + table + " WHERE " + time
                + " >= ? AND " + time + " < ?"
                + (tenantId != null ? " AND tenant_id = ?" : "") + " GROUP BY volume_id"
                + (by == TopMeasure.LATENCY ? " HAVING sum(read_ops::numeric + write_ops) > 0" : "")
                + " ORDER BY " + order + " DESC, volume_id LIMIT ?";
        List<Object> args = new ArrayList<>(List.of(at(range.from()), at(range.to())));
        if (tenantId != null) {
            args.add(tenantId);
        }
        args.add(limit);
        double seconds = (range.to().toEpochMilli() - range.from().toEpochMilli()) / 1000.0;
        List<Object[]> rows = jdbc.query(sql, (rs, i) -> new Object[] {rs.getObject(1, UUID.class), rs.getLong(2),
                rs.getLong(3), rs.getLong(4), rs.getLong(5), rs.getDouble(6), rs.getLong(7), rs.getObject(8, UUID.class)},
                args.toArray());
        Map<UUID, UsageVolumes.VolumeInfo> info = directory.volumes(rows.stream().map(r -> (UUID) r[0]).toList());
        List<TopVolumes.Entry> entries = new ArrayList<>();
        for (Object[] r : rows) {
            UUID id = (UUID) r[0];
            long readOps = (long) r[1], writeOps = (long) r[2], readBytes = (long) r[3], writeBytes = (long) r[4];
            long ops = add(readOps, writeOps);
            UsageVolumes.VolumeInfo v = info.get(id);
            entries.add(new TopVolumes.Entry(id, v != null ? v.tenantId() : r[7] != null ? (UUID) r[7] : tenantId,
                    v == null ? null : v.name(),
                    readOps, writeOps, readBytes, writeBytes, ops / seconds, ((double) readBytes + writeBytes) / seconds,
                    ops == 0 ? null : Math.round((double) r[5] / ops), (long) r[6] / 1e6));
        }
        return entries;
    }

    /** Gaps of the given nodes (all nodes if null) overlapping the range. */
    List<UsageGap> gaps(Collection<UUID> nodes, UsageRange range) {
        if (nodes != null && nodes.isEmpty()) {
            return List.of();
        }
        String sql = "SELECT node_id, first_sequence, last_sequence, gap_from, gap_to FROM usage_gap "
                + "WHERE gap_from < ? AND gap_to > ?" + (nodes != null ? " AND node_id = ANY(?)" : "")
                + " ORDER BY gap_from, node_id LIMIT 1000";
        List<Object> args = new ArrayList<>(List.of(at(range.to()), at(range.from())));
        if (nodes != null) {
            args.add(nodes.toArray(UUID[]::new));
        }
        return jdbc.query(sql, (rs, i) -> new UsageGap(rs.getObject(1, UUID.class), rs.getLong(2), rs.getLong(3),
                rs.getObject(4, OffsetDateTime.class).toInstant(), rs.getObject(5, OffsetDateTime.class).toInstant()),
                args.toArray());
    }

    /** {@code a + b} of two counts, clamped to {@code Long.MAX_VALUE} instead of overflowing. */
    static long add(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? (a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE) : r;
    }

    /** {@code x} if finite, else the largest finite double of its sign (0 for NaN). */
    static double finite(double x) {
        return Double.isNaN(x) ? 0 : Math.max(-Double.MAX_VALUE, Math.min(Double.MAX_VALUE, x));
    }

    private static int index(UsageRange range, Instant ts) {
        return (int) Math.floorDiv(ts.toEpochMilli() - range.from().toEpochMilli(), range.step().toMillis());
    }

    private static Instant ts(UsageRange range, int i) {
        return range.from().plusMillis(i * range.step().toMillis());
    }

    private static OffsetDateTime at(Instant t) {
        return OffsetDateTime.ofInstant(t, ZoneOffset.UTC);
    }
}
