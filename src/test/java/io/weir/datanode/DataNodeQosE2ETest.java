package io.weir.datanode;

import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.support.Patience.PATIENCE;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.weir.protocol.DesiredConfig;
import io.weir.protocol.IoCost;
import io.weir.protocol.ReplicationConfig;
import io.weir.scheduler.Stats;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * QoS end to end: fio's nbd engine drives real volumes of a data node while the scheduler
 * enforces weights, limits and task shares.
 *
 * <p>A policy changed through the REST API while fio runs: {@link PolicyChangeOverRestE2ETest}.
 *
 * <p>The sharing checks come twice. With no limits anywhere, as a user runs it: the node's own
 * saturation is the contention, one fio process per job shares the machine's cores with the node
 * (one worker per core, the default), and the backlog waits wherever the machine puts it, mostly
 * outside the scheduler; the weights hold there because the scheduler anticipates (see
 * "Anticipation" in the {@code io.weir.scheduler} package documentation). And with a tenant
 * limit that both volumes together exceed, so the scheduler is the point of contention whatever
 * else runs on the machine. fio's own figures (IOPS, bytes) are compared; a ramp-up second is
 * left out.
 *
 * <p>The no-limits sharing checks compare fio's IOPS per 250 ms interval and assert the median
 * interval; the whole run's figure goes into the message. The clients share the node's two
 * cores, and a client that is one process (tenant a's single job against tenant b's ten) is now
 * and then left off the CPU by the OS for hundreds of milliseconds: in such intervals the node
 * had none of its requests for most of the time (sampled: in 97% of the samples of an interval in
 * which its share fell to 0.02), so there was nothing to schedule, and a fair scheduler gives no
 * credit for time a flow did not ask for service. Such outages took tenant a's whole-run share to
 * 0.667 in one full CI run, and to 0.56-0.73 with two CPU-bound processes beside the test, while
 * the median interval stayed at 0.75. The median interval is the share while the clients kept
 * their requests coming, which is what the weights govern.
 *
 * <p>The weights and a cap also hold while the node copies a replicated volume to a second node
 * under its replication task ({@code ...WhileACopyResyncs}).
 */
@Tag("e2e")
class DataNodeQosE2ETest {

    @TempDir
    Path dir;
    @TempDir
    Path fioLogs;
    DataNode node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
    }

    private void start(DesiredConfig config, Duration scrubPeriod, int workers) throws Exception {
        start(config, scrubPeriod, workers, null);
    }

    /** With {@code serviceTime} added to each transfer of data (null: the store as it is). */
    private void start(DesiredConfig config, Duration scrubPeriod, int workers, VolumeStore.ServiceTime serviceTime)
            throws Exception {
        node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(workers)
                .scrubPeriod(scrubPeriod).serviceTime(serviceTime).build();
        node.apply(config);
    }

    /** The service time of {@link #slowStore}. */
    private static final long SLOW_STORE_NANOS = 500_000;

    /**
     * A store slower than the CPU: each transfer holds its worker {@link #SLOW_STORE_NANOS} (a
     * test-only service time, as a synchronous read from a slow device would; not a wait for an
     * event), so the node serves at most its workers over that time, far below what its CPU
     * could, and the backlog waits in the scheduler's queues.
     */
    private static void slowStore(long bytes) {
        LockSupport.parkNanos(SLOW_STORE_NANOS);
    }

    /**
     * The node served {@code iops} in all close to what {@link #slowStore} lets its workers serve
     * at most (their number over its service time): the store, not the CPU, bound it.
     */
    private static void assertTheSlowStoreBinds(double iops) {
        double capacity = CORES * 1e9 / SLOW_STORE_NANOS;
        assertThat(iops).as("IOPS in all, of the slow store's %.0f at most", capacity).isBetween(0.6 * capacity, capacity);
    }

    private String url(String export) {
        return "nbd://127.0.0.1:" + node.listenAddress().getPort() + "/" + export;
    }

    private static final int CORES = Runtime.getRuntime().availableProcessors();

    @Test
    void withNoLimitsWeightsThreeToOneGiveAnIopsRatioOfThree() throws Exception {
        threeToOne(null);
    }

    @Test
    void withNoLimitsAndAStoreSlowerThanTheCpuWeightsThreeToOneGiveAnIopsRatioOfThree() throws Exception {
        assertTheSlowStoreBinds(threeToOne(DataNodeQosE2ETest::slowStore));
    }

    /** Returns the IOPS of both volumes together. */
    private double threeToOne(VolumeStore.ServiceTime serviceTime) throws Exception {
        start(config().tenant("t").volume("t", "heavy", 256 * MiB, 300, null, null)
                .volume("t", "light", 256 * MiB, 100, null, null).build(), Duration.ofHours(1), CORES, serviceTime);
        Map<String, JsonNode> jobs = fio(8, job("heavy", "randread", "4k"), job("light", "randread", "4k"));
        double whole = iops(jobs.get("t/heavy")) / iops(jobs.get("t/light"));
        double median = medianInterval(i -> i.get("t/heavy") / i.get("t/light"));
        assertThat(median).as("IOPS ratio heavy:light, no limits, median 250 ms interval (whole run: %.3f)", whole)
                .isCloseTo(3.0, within(0.15));
        return iops(jobs.get("t/heavy")) + iops(jobs.get("t/light"));
    }

    @Test
    void withNoLimitsATenantOfWeight300WithOneVolumeGets75PercentBesideATenantOfWeight100WithTen() throws Exception {
        oneVolumeBesideTen(null);
    }

    @Test
    void withNoLimitsAndAStoreSlowerThanTheCpuATenantOfWeight300WithOneVolumeGets75PercentBesideATenantOfWeight100WithTen()
            throws Exception {
        assertTheSlowStoreBinds(oneVolumeBesideTen(DataNodeQosE2ETest::slowStore));
    }

    /** Returns the IOPS of all eleven volumes together. */
    private double oneVolumeBesideTen(VolumeStore.ServiceTime serviceTime) throws Exception {
        TestConfigs c = config().tenant("a", 300, null, null).volume("a", "v", 64 * MiB).tenant("b", 100, null, null);
        List<Job> jobs = new ArrayList<>(List.of(new Job("a/v", "randread", "4k")));
        for (int i = 0; i < 10; i++) {
            c.volume("b", "v" + i, 64 * MiB);
            jobs.add(new Job("b/v" + i, "randread", "4k"));
        }
        start(c.build(), Duration.ofHours(1), CORES, serviceTime);
        Map<String, JsonNode> result = fio(8, 16, jobs.toArray(Job[]::new));
        double total = result.values().stream().mapToDouble(DataNodeQosE2ETest::iops).sum();
        double whole = iops(result.get("a/v")) / total;
        double median = medianInterval(i -> i.get("a/v") / i.values().stream().mapToDouble(Double::doubleValue).sum());
        assertThat(median).as("tenant a's share of the IOPS, no limits, median 250 ms interval (whole run: %.3f)", whole)
                .isCloseTo(0.75, within(0.03));
        return total;
    }

    /**
     * Equal weights share the scheduler's currency, the cost model's cost: the node's default
     * fixed cost of a read plus its bytes ({@link IoCost#DEFAULT}).
     */
    @Test
    void withNoLimitsEqualWeightsShareTheCostOf4KiBAnd64KiBReadsEqually() throws Exception {
        smallBesideLarge(null);
    }

    /**
     * The store serves a 4 KiB and a 64 KiB read in the same time here, but the scheduler's
     * currency is still the cost model's: the share follows the currency, not the device.
     */
    @Test
    void withNoLimitsAndAStoreSlowerThanTheCpuEqualWeightsShareTheCostOf4KiBAnd64KiBReadsEqually() throws Exception {
        assertTheSlowStoreBinds(smallBesideLarge(DataNodeQosE2ETest::slowStore));
    }

    /** Returns the IOPS of both volumes together. */
    private double smallBesideLarge(VolumeStore.ServiceTime serviceTime) throws Exception {
        start(config().tenant("t").volume("t", "small", 256 * MiB).volume("t", "large", 256 * MiB).build(),
                Duration.ofHours(1), CORES, serviceTime);
        Map<String, JsonNode> jobs = fio(8, job("small", "randread", "4k"), job("large", "randread", "64k"));
        double whole = cost(jobs.get("t/small"), 4096) / cost(jobs.get("t/large"), 65536);
        double median = medianInterval(i -> i.get("t/small") * (IoCost.DEFAULT_READ_PER_IO_BYTES + 4096)
                / (i.get("t/large") * (IoCost.DEFAULT_READ_PER_IO_BYTES + 65536)));
        assertThat(median).as("cost ratio 4 KiB:64 KiB, no limits, median 250 ms interval (whole run: %.3f)", whole)
                .isCloseTo(1.0, within(0.10));
        return iops(jobs.get("t/small")) + iops(jobs.get("t/large"));
    }

    /**
     * The foreground's weights hold while a copy resyncs under the replication task (the node's
     * default share, its urgency ramping up as the copy stays behind), with a store slower than
     * the CPU, so that the backlog waits in the scheduler's queues: heavy (300) and light (100)
     * read with no limits beside big, replicated to a second node whose copy is copied whole
     * meanwhile. With the store as it is (a variant of this check, on the node code of 6981591)
     * the median interval was 2.79-3.01 over 16 runs on these two cores: where it fell, heavy's
     * fio process was waiting for a core (180-230 ms of each 250 ms interval, from its
     * schedstat) with nothing queued at the node, while both nodes' workers, the resync and
     * light's fio ran. A node on a machine of its own does not take its clients' cores; the
     * replication bench measures the shared case. The two volumes together get less than the
     * slow store's capacity here: the replication task has its share of the workers.
     */
    @Test
    void withNoLimitsAndAStoreSlowerThanTheCpuWeightsThreeToOneHoldWhileACopyResyncs() throws Exception {
        Map<String, JsonNode> jobs = duringAResync(DataNodeQosE2ETest::slowStore,
                c -> c.volume("t", "heavy", 256 * MiB, 300, null, null).volume("t", "light", 256 * MiB, 100, null, null),
                job("heavy", "randread", "4k"), job("light", "randread", "4k"));
        double whole = iops(jobs.get("t/heavy")) / iops(jobs.get("t/light"));
        double median = medianInterval(i -> i.get("t/heavy") / i.get("t/light"));
        assertThat(median).as("IOPS ratio heavy:light during the resync, no limits, median 250 ms interval (whole run: %.3f)",
                whole).isCloseTo(3.0, within(0.15));
    }

    /**
     * A volume's cap holds while a copy resyncs, and the other volume takes the rest; the store as
     * it is. The capped volume gets at most its cap (the 3% of the check without a resync) and
     * not far below it: its client shares the two cores with both nodes, the resync and the other
     * client, and got 1,934-1,994 IOPS in this check's first runs.
     */
    @Test
    void aVolumeCappedAt2000IopsHoldsItWhileACopyResyncs() throws Exception {
        Map<String, JsonNode> jobs = duringAResync(null,
                c -> c.volume("t", "capped", 256 * MiB, 1000, null, 2000L).volume("t", "free", 256 * MiB),
                job("capped", "randread", "4k"), job("free", "randread", "4k"));
        assertThat(iops(jobs.get("t/capped"))).isBetween(1800.0, 2060.0);
        assertThat(iops(jobs.get("t/free"))).isGreaterThan(iops(jobs.get("t/capped")));
    }

    /**
     * Runs {@code jobs} for 6 s on this test's node (a) while it resyncs a copy: a serves the
     * volumes {@code foreground} adds to tenant t, and big (2 GiB, written whole by fio first),
     * then replicates big to a second node whose copy is out of sync, so that a copies it whole
     * under its replication task. The copy's store takes {@link #COPY_NANOS_PER_MIB} per MiB it
     * writes (a test-only service time), so that on any machine the resync lasts past the run:
     * at most 200 MB/s with its two workers, where this machine resyncs at 130-170 MB/s anyway.
     * Checks that the resync began before the run and had not ended when it ended. fio's results
     * by export.
     */
    private Map<String, JsonNode> duringAResync(VolumeStore.ServiceTime serviceTime, Consumer<TestConfigs> foreground,
            Job... jobs) throws Exception {
        UUID a = TestConfigs.id("node:a");
        UUID b = TestConfigs.id("node:b");
        long bigSize = 2048 * MiB;
        node = DataNode.builder().dataDir(dir.resolve("a")).listen(new InetSocketAddress("127.0.0.1", 0))
                .replicationListen(new InetSocketAddress("127.0.0.1", 0)).workers(CORES).serviceTime(serviceTime).build();
        try (DataNode copyNode = DataNode.builder().dataDir(dir.resolve("b")).listen(new InetSocketAddress("127.0.0.1", 0))
                .replicationListen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .serviceTime(bytes -> LockSupport.parkNanos(bytes * COPY_NANOS_PER_MIB / MiB)).build()) {
            node.apply(configOfA(a, 1, foreground, bigSize, null));
            Programs.ok(300, "fio", "--name=fill", "--ioengine=nbd", "--uri=" + url("t/big"), "--rw=write", "--bs=1m",
                    "--iodepth=8", "--size=" + bigSize);
            ReplicationConfig rc = new ReplicationConfig(1, a, 0, List.of(new ReplicationConfig.Copy(a, null, true),
                    new ReplicationConfig.Copy(b, copyNode.replicationAddress(), false)));
            copyNode.apply(config().node(b).revision(1).tenant("t").volume("t", "big", bigSize).replicated(rc).build());
            node.apply(configOfA(a, 2, foreground, bigSize, rc));
            await().atMost(PATIENCE).until(() -> resyncRemaining(b) < bigSize);
            long before = resyncRemaining(b);
            Map<String, JsonNode> results = fio(6, jobs);
            long after = resyncRemaining(b);
            assertThat(after).as("bytes the resync had left to copy when fio ended (%d when it began)", before)
                    .isPositive().isLessThan(before);
            return results;
        }
    }

    /** What the resync's copy spends per MiB it writes ({@link #duringAResync}). */
    private static final long COPY_NANOS_PER_MIB = 10_000_000;

    /** Node {@code a}'s config {@code revision}: tenant t with the volumes of {@code foreground}, and big (replicated if {@code big}). */
    private static DesiredConfig configOfA(UUID a, long revision, Consumer<TestConfigs> foreground, long bigSize,
            ReplicationConfig big) {
        TestConfigs c = config().node(a).revision(revision).tenant("t");
        foreground.accept(c);
        c.volume("t", "big", bigSize);
        return (big == null ? c : c.replicated(big)).build();
    }

    /** What node a reports its copy on {@code copy} still has to get of big: all of it until the resync begins. */
    private long resyncRemaining(UUID copy) {
        return node.replicationStatus().stream().flatMap(s -> s.copies().stream()).filter(c -> c.nodeId().equals(copy))
                .findFirst().map(c -> c.resyncRemainingBytes()).orElse(Long.MAX_VALUE);
    }

    @Test
    void weightsThreeToOneGiveAnIopsRatioOfThree() throws Exception {
        start(config().tenant("t", 100, 4000L, null).volume("t", "heavy", 256 * MiB, 300, null, null)
                .volume("t", "light", 256 * MiB, 100, null, null).build(), Duration.ofHours(1), 2);
        Map<String, JsonNode> jobs = fio(8, job("heavy", "randread", "4k"), job("light", "randread", "4k"));
        double ratio = iops(jobs.get("t/heavy")) / iops(jobs.get("t/light"));
        assertThat(ratio).as("IOPS ratio heavy:light").isCloseTo(3.0, within(0.15));
    }

    @Test
    void equalWeightsShareTheCostOf4KiBAnd64KiBReadsEquallyUnderATenantLimit() throws Exception {
        start(config().tenant("t", 100, null, 8 * MiB).volume("t", "small", 256 * MiB).volume("t", "large", 256 * MiB)
                .build(), Duration.ofHours(1), 2);
        Map<String, JsonNode> jobs = fio(8, job("small", "randread", "4k"), job("large", "randread", "64k"));
        assertThat(cost(jobs.get("t/small"), 4096) / cost(jobs.get("t/large"), 65536))
                .as("cost ratio 4 KiB:64 KiB").isCloseTo(1.0, within(0.10));
    }

    @Test
    void aVolumeCappedAt2000IopsHoldsItWhileTheOtherTakesTheRest() throws Exception {
        // ten times the other's weight: uncapped it would take most of the node, so the cap is what binds
        start(config().tenant("t").volume("t", "capped", 256 * MiB, 1000, null, 2000L).volume("t", "free", 256 * MiB)
                .build(), Duration.ofHours(1), 2);
        Map<String, JsonNode> jobs = fio(8, job("capped", "randread", "4k"), job("free", "randread", "4k"));
        assertThat(iops(jobs.get("t/capped"))).isCloseTo(2000, within(60.0));
        assertThat(iops(jobs.get("t/free"))).isGreaterThan(iops(jobs.get("t/capped")));
    }

    /**
     * Scrub, which always has work, against one fio client (4 KiB randread, QD32) with no limits,
     * one worker per core and the client on the same cores, over the whole run. The foreground's
     * queue runs dry between the client's requests; a work-conserving root then hands the worker
     * to scrub each time, and scrub took more CPU than the foreground, whose share is three times
     * scrub's (0.63:1 with anticipation off). The root's wait for the foreground gives it the
     * larger part back (2.05:1 when this test was written); the 3:1 it is owed when it saturates
     * is not reached yet, so this checks at least 1.8:1.
     */
    @Test
    void withNoLimitsScrubDoesNotTakeTheCpuOfAForegroundThatRunsDryBetweenRequests() throws Exception {
        start(scrubBesideForeground(), Duration.ZERO, CORES);
        fillForScrub();
        Map<String, Stats> before = node.executor().snapshot(false).tasks();
        fio(8, job("v", "randread", "4k"));
        Map<String, Stats> after = node.executor().snapshot(false).tasks();
        double fg = after.get("foreground").cpuNanos() - before.get("foreground").cpuNanos();
        double scrub = after.get("scrub").cpuNanos() - before.get("scrub").cpuNanos();
        assertThat(node.scrubCounts()[1]).as("no checksum mismatches").isZero();
        assertThat(fg / scrub).as("CPU foreground:scrub over the run").isGreaterThan(1.8);
    }

    /**
     * The root splits CPU by share among the tasks that have work. Scrub always has work here;
     * the foreground only while fio's requests wait in its queue. On a loaded 2-core machine fio
     * cannot keep that queue full (it sampled empty 25-45% of the time), and then the
     * work-conserving scheduler rightly gives the idle worker to scrub; over the whole run the
     * split was 1.1-2.1:1. So the CPU each task was charged is summed only over the millisecond
     * intervals in which the foreground queue held work at both ends, where the 75:25 shares
     * must hold, and those intervals must make up enough of the run to mean something.
     */
    @Test
    void taskSharesHoldWhileScrubRuns() throws Exception {
        start(scrubBesideForeground(), Duration.ZERO, 1);
        fillForScrub();
        WhileQueued cpu = whileTheForegroundQueues(tasks -> tasks.get("foreground").cpuNanos(),
                tasks -> tasks.get("scrub").cpuNanos(), job("v", "randread", "64k"), job("v", "randread", "64k"),
                job("v", "randread", "64k"), job("v", "randread", "64k"));
        assertThat(node.scrubCounts()[0]).as("scrub verified blocks").isPositive();
        assertThat(node.scrubCounts()[1]).as("no checksum mismatches").isZero();
        assertThat(cpu.foreground() + cpu.scrub()).as("CPU charged in intervals where both tasks had work (ns)")
                .isGreaterThan(500e6);
        assertThat(cpu.foreground() / cpu.scrub()).as("CPU foreground:scrub while both had work, " + cpu)
                .isCloseTo(3.0, within(0.45));
    }

    /**
     * Task shares divide the workers' time, not only their CPU. On a store slower than the CPU
     * every transfer holds its worker about the same service time, so the transfers each task
     * made are its part of the store's time. They are counted, as in {@link #taskSharesHoldWhileScrubRuns},
     * over the intervals in which the foreground queue held work: fio's start and exit, half a
     * second or more of a run in which scrub has the store to itself, took the whole run's split
     * to 0.71 while the intervals gave 0.754. Charged only its CPU (c19bdec), scrub at a share of
     * 25 took 0.40 of the intervals' transfers beside the foreground's 64 KiB reads (0.44 of the
     * whole run's): a 64 KiB read costs the foreground more CPU per transfer than a block's
     * checksum costs scrub. The foreground
     * saturates the store (two clients at QD32 against at most 4,000 transfers a second), and
     * scrub always has work.
     */
    @Test
    void withAStoreSlowerThanTheCpuScrubIsChargedItsTimeInTheStore() throws Exception {
        start(scrubBesideForeground(), Duration.ZERO, CORES, DataNodeQosE2ETest::slowStore);
        fillForScrub();
        long t0 = System.nanoTime();
        long transfers0 = transfers();
        WhileQueued split = whileTheForegroundQueues(tasks -> tasks.get("foreground").ops(),
                tasks -> node.scrubCounts()[0], job("v", "randread", "64k"), job("v", "randread", "64k"));
        assertThat(node.scrubCounts()[1]).as("no checksum mismatches").isZero();
        assertTheSlowStoreBinds((transfers() - transfers0) / ((System.nanoTime() - t0) / 1e9));
        assertThat(split.intervals()).as("intervals in which the foreground queued, " + split)
                .isGreaterThan(split.samples() / 2);
        assertThat(split.foreground() / (split.foreground() + split.scrub()))
                .as("the foreground's part of the store's transfers, owed 0.75, " + split).isCloseTo(0.75, within(0.03));
    }

    /** The store's transfers so far: foreground requests and blocks scrub read. */
    private long transfers() {
        return node.executor().snapshot(false).tasks().get("foreground").ops() + node.scrubCounts()[0];
    }

    /**
     * What two counters grew while the foreground had work: the sums over {@link #whileTheForegroundQueues}'s
     * millisecond intervals in which the foreground queue held work at both ends, and how many of
     * the samples' intervals those were.
     */
    private record WhileQueued(double foreground, double scrub, long intervals, long samples) {
    }

    /**
     * Runs the jobs in fio and, every millisecond meanwhile, reads the node's task statistics and
     * two counters of them: the foreground's and scrub's. Sums what each counter grew over the
     * intervals in which the foreground queue held work at both ends, where the root must split
     * by share; in the others the work-conserving root rightly gives an idle worker to scrub.
     */
    private WhileQueued whileTheForegroundQueues(ToLongFunction<Map<String, Stats>> foreground,
            ToLongFunction<Map<String, Stats>> scrub, Job... jobs) {
        CompletableFuture<Map<String, JsonNode>> run = CompletableFuture.supplyAsync(() -> {
            try {
                return fio(8, jobs);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        double fg = 0;
        double sc = 0;
        long intervals = 0;
        long samples = 0;
        Map<String, Stats> before = null;
        long fg0 = 0;
        long sc0 = 0;
        while (!run.isDone()) {
            Map<String, Stats> tasks = node.executor().snapshot(false).tasks();
            long fg1 = foreground.applyAsLong(tasks);
            long sc1 = scrub.applyAsLong(tasks);
            if (before != null) {
                samples++;
                if (before.get("foreground").queueDepth() > 0 && tasks.get("foreground").queueDepth() > 0) {
                    fg += fg1 - fg0;
                    sc += sc1 - sc0;
                    intervals++;
                }
            }
            before = tasks;
            fg0 = fg1;
            sc0 = sc1;
            LockSupport.parkNanos(1_000_000); // the sampling period, not a wait for an event
        }
        run.join();
        return new WhileQueued(fg, sc, intervals, samples);
    }

    /** One 64 MiB volume t/v; the foreground at a share of 75, scrub at 25, gc and flush at 10. */
    private static DesiredConfig scrubBesideForeground() {
        return config().tenant("t").volume("t", "v", 64 * MiB).task("foreground", 75).task("scrub", 25)
                .task("gc", 10).task("flush", 10).build();
    }

    /** Writes all of t/v, the data for scrub to verify. */
    private void fillForScrub() throws Exception {
        Programs.ok(120, "fio", "--name=fill", "--ioengine=nbd", "--uri=" + url("t/v"), "--rw=write", "--bs=1m",
                "--iodepth=8", "--size=64m");
    }

    private record Job(String export, String rw, String bs) {
    }

    /** A job on volume {@code volume} of tenant {@code t}. */
    private static Job job(String volume, String rw, String bs) {
        return new Job("t/" + volume, rw, bs);
    }

    private Map<String, JsonNode> fio(int seconds, Job... jobs) throws Exception {
        return fio(seconds, 32, jobs);
    }

    /** fio's IOPS log interval: {@link #medianInterval} compares the jobs over these. */
    private static final int LOG_INTERVAL_MS = 250;

    /** fio's IOPS log of the last {@link #fio} run, by export (its first job's, as in the results). */
    private final Map<String, List<Double>> intervalIops = new HashMap<>();

    /**
     * Runs the jobs side by side in one fio for {@code seconds} (plus a 1 s ramp), each job in a
     * process of its own (fio's default); results by export ({@code tenant/volume}). Each job also
     * logs its IOPS per {@value #LOG_INTERVAL_MS} ms (after the ramp) into {@link #intervalIops}.
     */
    private Map<String, JsonNode> fio(int seconds, int iodepth, Job... jobs) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("fio", "--output-format=json", "--ioengine=nbd",
                "--iodepth=" + iodepth, "--time_based", "--runtime=" + seconds, "--ramp_time=1", "--size=64m",
                "--log_avg_msec=" + LOG_INTERVAL_MS));
        for (int i = 0; i < jobs.length; i++) {
            Job j = jobs[i];
            cmd.addAll(List.of("--name=" + j.export() + "#" + i, "--uri=" + url(j.export()), "--rw=" + j.rw(),
                    "--bs=" + j.bs(), "--write_iops_log=" + fioLogs.resolve("job" + i)));
        }
        String out = Programs.ok(seconds + 120L, cmd.toArray(String[]::new));
        JsonNode root = JsonMapper.builder().build().readTree(out.substring(out.indexOf('{')));
        Map<String, JsonNode> byVolume = new HashMap<>();
        for (JsonNode j : root.get("jobs")) {
            String name = j.get("jobname").asString();
            byVolume.putIfAbsent(name.substring(0, name.indexOf('#')), j);
        }
        intervalIops.clear();
        for (int i = 0; i < jobs.length; i++) {
            // fio names the file <prefix>_iops.<job number>.log; lines "msec, IOPS, direction, ..."
            Path log = fioLogs.resolve("job" + i + "_iops." + (i + 1) + ".log");
            intervalIops.putIfAbsent(jobs[i].export(), Files.readAllLines(log).stream()
                    .map(line -> Double.parseDouble(line.split(",")[1].trim())).toList());
        }
        return byVolume;
    }

    /**
     * The median over the last run's log intervals of {@code figure}, which gets one interval's
     * IOPS by export. Intervals that not every job logged (the last, cut short) are left out.
     */
    private double medianInterval(ToDoubleFunction<Map<String, Double>> figure) {
        int n = intervalIops.values().stream().mapToInt(List::size).min().orElseThrow();
        assertThat(n).as("fio log intervals").isGreaterThanOrEqualTo(8);
        double[] values = new double[n];
        for (int k = 0; k < n; k++) {
            Map<String, Double> interval = new HashMap<>();
            for (Map.Entry<String, List<Double>> e : intervalIops.entrySet()) {
                interval.put(e.getKey(), e.getValue().get(k));
            }
            values[k] = figure.applyAsDouble(interval);
        }
        Arrays.sort(values);
        return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    }

    private static double iops(JsonNode job) {
        return job.get("read").get("iops").asDouble();
    }

    /** The scheduler's currency a job's reads of {@code size} bytes cost: the node's default fixed cost plus bytes. */
    private static double cost(JsonNode job, long size) {
        return job.get("read").get("total_ios").asDouble() * (IoCost.DEFAULT_READ_PER_IO_BYTES + size);
    }
}
