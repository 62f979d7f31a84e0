package io.weir.controlplane.usage;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.weir.controlplane.database.EmbeddedPostgresServer;
import io.weir.controlplane.usage.UsageIngest.Delivery;
import io.weir.controlplane.volume.VolumeUsageDirectory;
import io.weir.protocol.UsageReport;
import io.weir.protocol.UsageReport.TaskUsage;
import io.weir.protocol.UsageReport.VolumeUsage;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.flywaydb.core.Flyway;
import org.postgresql.PGConnection;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Usage ingest at cluster scale, with a dashboard query running beside it: a scripted run, not
 * JMH, since what counts is a sustained rate and a latency distribution over minutes.
 *
 * <h2>Workload</h2>
 * 1,000 simulated nodes with 100 volumes each (100,000 volumes of 1,000 tenants, one tenant per
 * node), each node reporting every 10 s: 10,000 volume samples per second, plus five task samples
 * per report. Reports go through {@link UsageIngest#ingestAll} in batches (one transaction each)
 * from {@code ingestThreads} threads, against the production embedded PostgreSQL 17 (fsync and
 * synchronous commit on) with the real schema (Flyway). Before the run, 24 h of 1-minute tenant
 * rollups are stored for every tenant, so the dashboard query reads a full day. Meanwhile one
 * thread runs the dashboard's query for one tenant over the last 24 h at its default step (5 min,
 * 288 points, from the 1-minute rollups: the controller's existence check, the series and the
 * gaps) twice a second and records its latency.
 *
 * <p>Phases: {@code paced} ingests at the target rate (default 10,000 samples/s) for the given
 * seconds; {@code max} ingests as fast as the threads can for the same time. Each prints the
 * samples/s reached and the query's p50/p95/max.
 *
 * <h2>How to run</h2>
 * <pre>
 * mvn -B -q -Pbench test-compile exec:exec -Dbench.main=io.weir.controlplane.usage.UsageIngestBenchmark \
 *     -Dbench.jvmArgs="-Xmx4g" -Djmh.args="60 10000 2 20"
 * </pre>
 * Arguments: seconds per phase, target samples/s of the paced phase, ingest threads, reports per
 * transaction.
 */
public final class UsageIngestBenchmark {

    static final int NODES = 1000;
    static final int VOLUMES_PER_NODE = 100;
    static final Duration REPORT_INTERVAL = Duration.ofSeconds(10);

    private UsageIngestBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 60;
        int target = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        int batch = args.length > 3 ? Integer.parseInt(args[3]) : 20;
        Path dir = Files.createTempDirectory("weir-usage-bench");
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(dir.resolve("pg"), 0)) {
            HikariConfig hc = new HikariConfig();
            hc.setJdbcUrl(pg.jdbcUrl());
            hc.setUsername(EmbeddedPostgresServer.USER);
            hc.setPassword(pg.password());
            hc.setMaximumPoolSize(threads + 2);
            try (HikariDataSource ds = new HikariDataSource(hc)) {
                Flyway.configure().dataSource(ds).locations("filesystem:db/migration").load().migrate();
                run(ds, seconds, target, threads, batch);
            }
        }
    }

    private static void run(HikariDataSource ds, int seconds, int target, int threads, int batch) throws Exception {
        JdbcTemplate jdbc = new JdbcTemplate(ds);
        Clock clock = Clock.systemUTC();
        UsageProperties props = new UsageProperties(new UsageProperties.Retention(Duration.ofDays(2), Duration.ofDays(14),
                Duration.ofDays(400)), 3, Duration.ofHours(1), 2000, 100);
        UsagePartitions partitions = new UsagePartitions(jdbc, props, clock);
        partitions.createAhead(clock.instant().minus(Duration.ofDays(1)));
        partitions.createAhead(clock.instant());
        UsageDirectory directory = new UsageDirectory(new VolumeUsageDirectory(jdbc), id -> true, id -> true);
        UsageIngest ingest = new UsageIngest(ds, new TransactionTemplate(new DataSourceTransactionManager(ds)), partitions,
                directory, new UsageMetrics(new SimpleMeterRegistry(), jdbc), clock);
        UsageQueries queries = new UsageQueries(jdbc);

        UUID[] tenants = new UUID[NODES];
        UUID[][] volumes = new UUID[NODES][VOLUMES_PER_NODE];
        UUID[] nodes = new UUID[NODES];
        seed(ds, tenants, volumes, nodes);
        Instant now = clock.instant();
        long t0 = System.nanoTime();
        jdbc.update("INSERT INTO usage_tenant_1m (bucket, tenant_id, samples, read_ops, write_ops, read_bytes, write_bytes, "
                + "latency_p50_wsum, latency_p99_wsum, latency_max_us, queue_depth_ms, throttled_ns, rejected, cpu_ns) "
                + "SELECT b, t, 600, 600000, 200000, 2457600000, 819200000, 160000000, 800000000, 9000, 120000, 0, 0, 6000000000 "
                + "FROM generate_series(date_trunc('minute', ?::timestamptz) - interval '24 hours', "
                + "date_trunc('minute', ?::timestamptz) - interval '1 minute', interval '1 minute') AS b, unnest(?::uuid[]) AS t",
                java.sql.Timestamp.from(now), java.sql.Timestamp.from(now), tenants);
        jdbc.execute("ANALYZE");
        System.out.printf(Locale.ROOT, "seeded %d tenants, %d volumes, 24 h of 1-minute tenant rollups in %.1f s%n",
                NODES, NODES * VOLUMES_PER_NODE, (System.nanoTime() - t0) / 1e9);

        AtomicLong[] sequences = new AtomicLong[NODES];
        for (int i = 0; i < NODES; i++) {
            sequences[i] = new AtomicLong();
        }
        Instant simulatedStart = now;
        phase("warm-up (paced)", 15, target, threads, batch, ingest, queries, directory, props, tenants, volumes, nodes,
                sequences, simulatedStart);
        phase("paced", seconds, target, threads, batch, ingest, queries, directory, props, tenants, volumes, nodes,
                sequences, simulatedStart);
        phase("max", seconds, 0, threads, batch, ingest, queries, directory, props, tenants, volumes, nodes, sequences,
                simulatedStart);
        System.out.printf(Locale.ROOT, "raw samples stored: %d%n",
                jdbc.queryForObject("SELECT count(*) FROM usage_volume_raw", Long.class));
    }

    private static void seed(HikariDataSource ds, UUID[] tenants, UUID[][] volumes, UUID[] nodes) throws Exception {
        StringBuilder t = new StringBuilder();
        StringBuilder v = new StringBuilder();
        for (int n = 0; n < NODES; n++) {
            tenants[n] = UUID.randomUUID();
            nodes[n] = UUID.randomUUID();
            t.append(tenants[n]).append("\tbench-").append(n).append("\t100\t0\t2026-01-01T00:00:00Z\t2026-01-01T00:00:00Z\n");
            for (int k = 0; k < VOLUMES_PER_NODE; k++) {
                volumes[n][k] = UUID.randomUUID();
                v.append(volumes[n][k]).append('\t').append(tenants[n]).append("\tvol-").append(k)
                        .append("\t1073741824\t00000000-0000-4000-8000-000000000002\t0\t2026-01-01T00:00:00Z\t2026-01-01T00:00:00Z\n");
            }
        }
        try (Connection c = ds.getConnection()) {
            var copy = c.unwrap(PGConnection.class).getCopyAPI();
            copy.copyIn("COPY tenant (id, name, weight, version, created_at, updated_at) FROM STDIN", new StringReader(t.toString()));
            copy.copyIn("COPY volume (id, tenant_id, name, size_bytes, policy_id, version, created_at, updated_at) FROM STDIN",
                    new StringReader(v.toString()));
        }
    }

    private static UsageReport report(long seq, Instant from, UUID[] volumes) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        List<VolumeUsage> vs = new ArrayList<>(volumes.length);
        for (UUID v : volumes) {
            long reads = r.nextLong(0, 20_000), writes = r.nextLong(0, 8_000);
            long p50 = r.nextLong(80, 400);
            vs.add(new VolumeUsage(v, reads, writes, reads * 4096, writes * 8192, p50, p50 * 5, p50 * 20, r.nextDouble(8),
                    r.nextInt(10) == 0 ? r.nextLong(1, 10_000_000_000L) : 0, 0, (reads + writes) * 8_000));
        }
        List<TaskUsage> tasks = List.of(new TaskUsage("foreground", 0, 9_000_000_000L, 9_000_000_000L, 700),
                new TaskUsage("gc", 10, 500_000_000, 500_000_000, 100), new TaskUsage("flush", 10, 700_000_000, 900_000_000, 100),
                new TaskUsage("replication", 5, 100_000_000, 100_000_000, 50), new TaskUsage("scrub", 1, 50_000_000, 80_000_000, 50));
        return new UsageReport(seq, from, from.plus(REPORT_INTERVAL), vs, tasks, List.of());
    }

    private static void phase(String name, int seconds, int target, int threads, int batch, UsageIngest ingest,
            UsageQueries queries, UsageDirectory directory, UsageProperties props, UUID[] tenants, UUID[][] volumes,
            UUID[] nodes, AtomicLong[] sequences, Instant simulatedStart) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong samples = new AtomicLong();
        AtomicLong nextNode = new AtomicLong();
        Histogram ingestNanos = new Histogram(3);
        long start = System.nanoTime();
        long batchSamples = (long) batch * VOLUMES_PER_NODE;
        long nanosPerBatch = target == 0 ? 0 : 1_000_000_000L * batchSamples / target;
        AtomicLong batchesDue = new AtomicLong();
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    if (nanosPerBatch > 0) {
                        long due = start + batchesDue.getAndIncrement() * nanosPerBatch;
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait);
                        }
                        if (stop.get()) {
                            return;
                        }
                    }
                    List<Delivery> ds = new ArrayList<>(batch);
                    for (int i = 0; i < batch; i++) {
                        int n = (int) (nextNode.getAndIncrement() % NODES);
                        long seq = sequences[n].incrementAndGet();
                        Instant from = simulatedStart.plus(REPORT_INTERVAL.multipliedBy(seq - 1));
                        ds.add(new Delivery(nodes[n], report(seq, from, volumes[n])));
                    }
                    long t1 = System.nanoTime();
                    ingest.ingestAll(ds);
                    synchronized (ingestNanos) {
                        ingestNanos.recordValue(System.nanoTime() - t1);
                    }
                    samples.addAndGet(batchSamples);
                }
            }, "ingest-" + w);
            t.start();
            workers.add(t);
        }
        Histogram queryNanos = new Histogram(3);
        Thread dashboard = new Thread(() -> {
            int i = 0;
            while (!stop.get()) {
                UUID tenant = tenants[(i++ * 7919) % tenants.length];
                long t1 = System.nanoTime();
                Instant now = Instant.now();
                directory.tenantExists(tenant);
                UsageRange range = UsageRange.parse(now.minus(Duration.ofDays(1)).toString(), now.toString(), null, now, props);
                List<UsageSeries.UsagePoint> points = queries.tenant(tenant, range);
                queries.gaps(directory.nodesOfTenant(tenant), range);
                queryNanos.recordValue(System.nanoTime() - t1);
                if (points.size() < 288) {
                    throw new IllegalStateException("expected 288 or 289 points (24 h at 5 min, aligned), got " + points.size());
                }
                LockSupport.parkNanos(500_000_000L);
            }
        }, "dashboard");
        dashboard.start();
        long end = start + seconds * 1_000_000_000L;
        while (System.nanoTime() < end) {
            LockSupport.parkNanos(end - System.nanoTime());
        }
        long atStop = samples.get();
        double elapsed = (System.nanoTime() - start) / 1e9;
        stop.set(true);
        for (Thread t : workers) {
            t.join();
        }
        dashboard.join();
        System.out.printf(Locale.ROOT, "%-16s %3d s: %,9.0f samples/s (%d threads, %d reports = %d samples per transaction; "
                        + "transaction p50 %.0f ms, p95 %.0f ms) | tenant 24 h query: n=%d p50 %.1f ms, p95 %.1f ms, max %.1f ms%n",
                name, seconds, atStop / elapsed, threads, batch, batchSamples,
                ingestNanos.getValueAtPercentile(50) / 1e6, ingestNanos.getValueAtPercentile(95) / 1e6,
                queryNanos.getTotalCount(), queryNanos.getValueAtPercentile(50) / 1e6,
                queryNanos.getValueAtPercentile(95) / 1e6, queryNanos.getMaxValue() / 1e6);
    }
}
