package io.weir.scheduler;

import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of one scheduling round trip on the single-threaded {@link HierarchicalScheduler}:
 * {@code enqueue} + {@code next} + {@code complete}, with every flow backlogged.
 *
 * <h2>Workload</h2>
 * <ul>
 *   <li>{@link #flows} volumes (100, 10,000, 100,000) spread round-robin over {@value #TENANTS}
 *       tenants, under the default task set (foreground plus four idle background tasks). Tenant
 *       weights cycle through 100..400 and volume weights through 50..400; no limits and no
 *       reservations, so every decision goes through the weight phase at both levels.</li>
 *   <li>Each volume's queue is pre-filled with {@value #DEPTH} requests. One operation enqueues a
 *       request on the volume served by the previous operation, dispatches the next request and
 *       completes it: a closed loop at constant queue depth (like fio with {@code iodepth=4} on
 *       every volume), so all flows stay backlogged and the heaps keep their full size.</li>
 *   <li>Requests are 70% reads, 30% writes; sizes 4 KiB (40%), 8 KiB (20%), 16 KiB (15%),
 *       32 KiB (15%), 64 KiB (10%), drawn from a fixed-seed table.</li>
 *   <li>Time comes from a {@link ManualTimeSource} advanced by {@value #TICK_NANOS} ns per
 *       operation (a 1 M IOPS node); each completion charges {@value #CPU_NANOS} ns of CPU.</li>
 * </ul>
 * The request object is one shared constant, so the harness itself allocates nothing and
 * {@code gc.alloc.rate.norm} is what the scheduler allocates per operation. Before JMH's warmup,
 * setup runs operations until every volume has been served twice, so that each has allocated (and
 * grown) its latency histograms: the benchmark measures a node in steady state, not one filling
 * its heap.
 *
 * <h2>How to run</h2>
 * <pre>
 * mvn -Pbench test-compile exec:exec -Djmh.args="SchedulerBenchmark -prof gc"
 * </pre>
 *
 * <h2>Results</h2>
 * The conditions, the targets, the result on a named commit and what bounds a round trip are in
 * {@code docs/benchmarks.md} (benchmarks 1 and 2). A shared VM measures the same code tens of
 * percent apart from minute to minute; compare versions with {@link InterleavedComparison}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class SchedulerBenchmark {

    /** Number of tenants the volumes are spread over. */
    static final int TENANTS = 16;

    /** Requests kept queued on every volume. */
    static final int DEPTH = 4;

    /** Size of the (power of two) table of request sizes and kinds the operations cycle through. */
    static final int MIX = 1 << 12;

    /** Clock advance per operation. */
    static final long TICK_NANOS = 1_000;

    /** CPU time charged per completion. */
    static final long CPU_NANOS = 5_000;

    private static final Object REQUEST = new Object();

    /** Number of backlogged volumes (flows). */
    @Param({"100", "10000", "100000"})
    int flows;

    private HierarchicalScheduler<Object> scheduler;
    private ManualTimeSource clock;
    private final long[] sizes = new long[MIX];
    private final IoKind[] kinds = new IoKind[MIX];
    private int op;
    private VolumeHandle lastVolume;

    @Setup(Level.Trial)
    public void setUp() {
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < MIX; i++) {
            sizes[i] = size(random.nextInt(100));
            kinds[i] = random.nextInt(10) < 7 ? IoKind.READ : IoKind.WRITE;
        }
        SchedulerConfig.Builder b = SchedulerConfig.builder().defaultTasks();
        for (int t = 0; t < TENANTS; t++) {
            b.tenant(TenantSpec.of("tenant-" + t).withWeight(100 * (1 + t % 4)));
        }
        String[] ids = new String[flows];
        VolumeHandle[] handles = new VolumeHandle[flows];
        int[] volumeWeights = {50, 100, 100, 200, 400};
        for (int v = 0; v < flows; v++) {
            ids[v] = "volume-" + v;
            b.volume(VolumeSpec.of(ids[v], "tenant-" + (v % TENANTS)).withWeight(volumeWeights[v % volumeWeights.length]));
        }
        clock = new ManualTimeSource(1_000_000_000L);
        scheduler = new HierarchicalScheduler<>(b.build(), clock.nanoTime());
        for (int v = 0; v < flows; v++) {
            handles[v] = scheduler.volume(ids[v]);
        }
        for (int d = 0; d < DEPTH; d++) {
            for (int v = 0; v < flows; v++) {
                int k = op++ & (MIX - 1);
                scheduler.enqueue(handles[v], kinds[k], sizes[k], REQUEST, clock.nanoTime());
            }
        }
        // Start the closed loop: serve one request so there is a volume to refill.
        Ticket<Object> t = scheduler.next(clock.advance(TICK_NANOS));
        lastVolume = t.volume();
        scheduler.complete(t, CPU_NANOS, clock.nanoTime());
        // Reach steady state before JMH's warmup: run until every volume has been served twice, so
        // each one has allocated its latency histograms and grown them to the range of its waits.
        // (The lightest volume gets about 1/32 of the heaviest one's service, so this takes many
        // passes over the queued requests.)
        Map<String, Integer> index = new HashMap<>();
        for (int v = 0; v < flows; v++) {
            index.put(ids[v], v);
        }
        int[] served = new int[flows];
        int done = 0;
        for (long i = 0; done < flows && i < 100L * flows * DEPTH; i++) {
            enqueueNextComplete();
            if (++served[index.get(lastVolume.volumeId())] == 2) {
                done++;
            }
        }
        if (done < flows) {
            throw new IllegalStateException("only " + done + " of " + flows + " volumes reached steady state");
        }
    }

    private static long size(int percentile) {
        if (percentile < 40) {
            return 4 << 10;
        } else if (percentile < 60) {
            return 8 << 10;
        } else if (percentile < 75) {
            return 16 << 10;
        } else if (percentile < 90) {
            return 32 << 10;
        }
        return 64 << 10;
    }

    /**
     * Enqueue on the volume served last (through its {@link VolumeHandle}, as a data node that
     * resolved the volume when the connection opened), dispatch the next request, complete it.
     */
    @Benchmark
    public long enqueueNextComplete() {
        int k = op++ & (MIX - 1);
        long now = clock.advance(TICK_NANOS);
        scheduler.enqueue(lastVolume, kinds[k], sizes[k], REQUEST, now);
        Ticket<Object> t = scheduler.next(now);
        lastVolume = t.volume();
        long bytes = t.bytes();
        scheduler.complete(t, CPU_NANOS, now);
        return bytes;
    }

    /**
     * The same round trip through the {@code String} API: every enqueue looks the volume up by id.
     * The difference to {@link #enqueueNextComplete()} is the cost of that lookup.
     */
    @Benchmark
    public long enqueueNextCompleteById() {
        int k = op++ & (MIX - 1);
        long now = clock.advance(TICK_NANOS);
        scheduler.enqueue(lastVolume.volumeId(), kinds[k], sizes[k], REQUEST, now);
        Ticket<Object> t = scheduler.next(now);
        lastVolume = t.volume();
        long bytes = t.bytes();
        scheduler.complete(t, CPU_NANOS, now);
        return bytes;
    }
}
