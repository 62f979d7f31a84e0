package io.weir.controlplane.usage;

import io.weir.protocol.UsageReport;
import io.weir.protocol.UsageReport.Gap;
import io.weir.protocol.UsageReport.TaskUsage;
import io.weir.protocol.UsageReport.VolumeUsage;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;

/**
 * What the usage reports stored in one transaction become, before any SQL: the raw rows (in
 * {@code COPY}'s text format), the sums added to the 1-minute and 1-hour rollups of each volume,
 * tenant and task, the gaps, and each tenant's totals for the metrics. Pure: {@link UsageIngest}
 * writes it. Rollup keys are sorted, so that concurrent transactions upsert the same rows in the
 * same order and never deadlock.
 */
final class UsageBatch {

    /** Which levels keep a sample that starts at a given instant (their retention reaches it). */
    @FunctionalInterface
    interface Retention {
        boolean keeps(UsageLevel level, Instant start);
    }

    final StringBuilder volumeCopy = new StringBuilder();
    final StringBuilder taskCopy = new StringBuilder();
    final Map<UsageLevel, TreeMap<VolumeKey, Sums>> volumeRollups = new HashMap<>();
    final Map<UsageLevel, TreeMap<VolumeKey, Sums>> tenantRollups = new HashMap<>();
    final Map<UsageLevel, TreeMap<TaskKey, TaskSums>> taskRollups = new HashMap<>();
    final Map<GapKey, GapRow> gaps = new TreeMap<>();
    final Map<UUID, long[]> tenantTotals = new HashMap<>();
    long volumeSamples;
    long skippedSamples;

    /**
     * Adds the rows of one stored report: raw rows for the levels {@code retained} keeps at its
     * start, and additions to the rollups of its volumes, their tenants ({@code tenantOf}; an
     * unknown volume has none) and its tasks, and the gaps it announces.
     */
    void add(UsageIngest.Delivery d, Map<UUID, Optional<UUID>> tenantOf, Retention retained) {
        UsageReport r = d.report();
        long durationMs = Duration.between(r.from(), r.to()).toMillis();
        String ts = r.from().toString();
        boolean raw = retained.keeps(UsageLevel.RAW, r.from());
        for (VolumeUsage v : r.volumes()) {
            UUID tenant = tenantOf.getOrDefault(v.volumeId(), Optional.empty()).orElse(null);
            if (raw) {
                volumeCopy.append(ts).append('\t').append(durationMs).append('\t').append(d.nodeId()).append('\t')
                        .append(v.volumeId()).append('\t').append(tenant == null ? "\\N" : tenant.toString())
                        .append('\t').append(v.readOps()).append('\t').append(v.writeOps()).append('\t')
                        .append(v.readBytes()).append('\t').append(v.writeBytes()).append('\t')
                        .append(v.latencyP50Us()).append('\t').append(v.latencyP99Us()).append('\t')
                        .append(v.latencyMaxUs()).append('\t').append(v.queueDepth()).append('\t')
                        .append(v.throttledNanos()).append('\t').append(v.rejected()).append('\t')
                        .append(v.cpuNanos()).append('\t').append(v.queuedP50Us()).append('\t')
                        .append(v.queuedP99Us()).append('\t').append(v.replicaOps()).append('\t')
                        .append(v.replicaBytes()).append('\n');
                volumeSamples++;
            } else {
                skippedSamples++;
            }
            for (UsageLevel level : List.of(UsageLevel.MINUTE, UsageLevel.HOUR)) {
                if (!retained.keeps(level, r.from())) {
                    continue;
                }
                Instant bucket = level.bucket(r.from());
                volumeRollups.computeIfAbsent(level, k -> new TreeMap<>())
                        .computeIfAbsent(new VolumeKey(v.volumeId(), bucket), k -> new Sums(tenant))
                        .add(v, durationMs);
                if (tenant != null) {
                    tenantRollups.computeIfAbsent(level, k -> new TreeMap<>())
                            .computeIfAbsent(new VolumeKey(tenant, bucket), k -> new Sums(null))
                            .add(v, durationMs);
                }
            }
            if (tenant != null) {
                long[] t = tenantTotals.computeIfAbsent(tenant, k -> new long[2]);
                t[0] = plus(t[0], v.ops());
                t[1] = plus(t[1], plus(v.readBytes(), v.writeBytes()));
            }
        }
        for (TaskUsage t : r.tasks()) {
            if (raw) {
                taskCopy.append(ts).append('\t').append(durationMs).append('\t').append(d.nodeId()).append('\t')
                        .append(copyText(t.name())).append('\t').append(t.ops()).append('\t').append(t.cpuNanos())
                        .append('\t').append(t.effectiveShare()).append('\t').append(t.workerNanos()).append('\n');
            }
            for (UsageLevel level : List.of(UsageLevel.MINUTE, UsageLevel.HOUR)) {
                if (retained.keeps(level, r.from())) {
                    taskRollups.computeIfAbsent(level, k -> new TreeMap<>())
                            .computeIfAbsent(new TaskKey(d.nodeId(), level.bucket(r.from()), t.name()),
                                    k -> new TaskSums())
                            .add(t, durationMs);
                }
            }
        }
        for (Gap g : r.gaps()) {
            gaps.merge(new GapKey(d.nodeId(), g.firstSequence()), new GapRow(g.lastSequence(), g.from(), g.to()),
                    GapRow::widen);
        }
    }

    /*
     * Rollups never overflow: a bucket's sums grow with every report of its hour, so the
     * protocol's per-report bounds alone cannot keep them in a bigint. Sums are added in Java
     * clamped at Long.MAX_VALUE (add, times) and in SQL in numeric, clamped back to a bigint
     * (sat); float sums clamp their terms (satFloat). A clamped sum is wrong, but it is stored,
     * and every other report of the tenant's hour still is.
     */

    /** {@code a + b} of non-negative figures, clamped to {@code Long.MAX_VALUE}. */
    static long plus(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }

    /** {@code a * b} of non-negative figures, clamped to {@code Long.MAX_VALUE}. */
    static long times(long a, long b) {
        return Math.multiplyHigh(a, b) != 0 || a * b < 0 ? Long.MAX_VALUE : a * b;
    }

    /** Escapes a value for COPY's text format. */
    static String copyText(String s) {
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r");
    }

    record VolumeKey(UUID id, Instant bucket) implements Comparable<VolumeKey> {
        private static final Comparator<VolumeKey> ORDER =
                Comparator.comparing(VolumeKey::id).thenComparing(VolumeKey::bucket);

        @Override
        public int compareTo(VolumeKey o) {
            return ORDER.compare(this, o);
        }
    }

    record TaskKey(UUID nodeId, Instant bucket, String task) implements Comparable<TaskKey> {
        private static final Comparator<TaskKey> ORDER = Comparator.comparing(TaskKey::nodeId)
                .thenComparing(TaskKey::bucket).thenComparing(TaskKey::task);

        @Override
        public int compareTo(TaskKey o) {
            return ORDER.compare(this, o);
        }
    }

    record GapKey(UUID nodeId, long firstSequence) implements Comparable<GapKey> {
        private static final Comparator<GapKey> ORDER =
                Comparator.comparing(GapKey::nodeId).thenComparingLong(GapKey::firstSequence);

        @Override
        public int compareTo(GapKey o) {
            return ORDER.compare(this, o);
        }
    }

    record GapRow(long lastSequence, Instant from, Instant to) {
        GapRow widen(GapRow o) {
            return new GapRow(Math.max(lastSequence, o.lastSequence), from.isBefore(o.from) ? from : o.from,
                    to.isAfter(o.to) ? to : o.to);
        }
    }

    /** Rollup sums of one volume or tenant bucket. */
    static final class Sums {
        final UUID tenant;
        long samples, readOps, writeOps, readBytes, writeBytes, p50Wsum, p99Wsum, maxUs, throttledNs, rejected, cpuNs,
                queuedP50Wsum, queuedP99Wsum, replicaOps, replicaBytes;
        double queueDepthMs;

        Sums(UUID tenant) {
            this.tenant = tenant;
        }

        void add(VolumeUsage v, long durationMs) {
            samples++;
            readOps = plus(readOps, v.readOps());
            writeOps = plus(writeOps, v.writeOps());
            readBytes = plus(readBytes, v.readBytes());
            writeBytes = plus(writeBytes, v.writeBytes());
            long ops = plus(v.readOps(), v.writeOps());
            p50Wsum = plus(p50Wsum, times(v.latencyP50Us(), ops));
            p99Wsum = plus(p99Wsum, times(v.latencyP99Us(), ops));
            maxUs = Math.max(maxUs, v.latencyMaxUs());
            queueDepthMs += v.queueDepth() * durationMs;
            throttledNs = plus(throttledNs, v.throttledNanos());
            rejected = plus(rejected, v.rejected());
            cpuNs = plus(cpuNs, v.cpuNanos());
            queuedP50Wsum = plus(queuedP50Wsum, times(v.queuedP50Us(), ops));
            queuedP99Wsum = plus(queuedP99Wsum, times(v.queuedP99Us(), ops));
            replicaOps = plus(replicaOps, v.replicaOps());
            replicaBytes = plus(replicaBytes, v.replicaBytes());
        }
    }

    /** Rollup sums of one task bucket. */
    static final class TaskSums {
        long samples, ops, cpuNs, workerNs, durationMs;
        double shareMs;

        void add(TaskUsage t, long duration) {
            samples++;
            ops = plus(ops, t.ops());
            cpuNs = plus(cpuNs, t.cpuNanos());
            workerNs = plus(workerNs, t.workerNanos());
            shareMs += t.effectiveShare() * duration;
            durationMs = plus(durationMs, duration);
        }
    }
}
