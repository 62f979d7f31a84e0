package io.weir.scheduler;

import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.zip.CRC32C;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Throughput of {@link QosExecutor} against a plain FIFO {@link ThreadPoolExecutor} doing the same
 * work with the same number of workers: what the QoS machinery (one lock, the scheduling decision,
 * per-request CPU-time measurement) costs when the work items are short.
 *
 * <h2>Workload</h2>
 * <ul>
 *   <li>Each work item computes the CRC32C ({@link CRC32C}) of a 4 KiB buffer (one of
 *       {@value #BUFFERS} pre-filled random buffers) and returns it.</li>
 *   <li>{@value #WORKERS} workers; {@value #SUBMITTERS} submitter threads ({@link Threads}), each
 *       submitting a batch of {@value #BATCH} items and then waiting for all of them. Both
 *       executors hand out a {@link CompletableFuture} per item
 *       ({@link QosExecutor#submit}, {@link CompletableFuture#supplyAsync(Supplier, java.util.concurrent.Executor)}),
 *       and the submitter joins each one.</li>
 *   <li>{@code qos}: {@value #VOLUMES} unlimited volumes over {@value #TENANTS} tenants, the
 *       default task set, items submitted round-robin over the volumes as 4 KiB reads, with the
 *       production CPU clock ({@link CpuClock#threadCpuTime()}, a system call per request).
 *       {@code qos-wallclock}: the same with {@link CpuClock#wallClock()}, to show what the CPU
 *       clock costs. {@code fifo}: a {@code ThreadPoolExecutor} with an unbounded
 *       {@link LinkedBlockingQueue}.</li>
 * </ul>
 * The score is work items per second ({@link OperationsPerInvocation} = {@value #BATCH}). Note that
 * {@value #WORKERS} workers plus {@value #SUBMITTERS} submitters oversubscribe a 2-core machine,
 * equally for both executors.
 *
 * <h2>How to run</h2>
 * <pre>
 * mvn -Pbench test-compile exec:exec -Djmh.args="QosExecutorBenchmark"
 * </pre>
 *
 * <h2>Results</h2>
 * The conditions, the target and the result on a named commit are in {@code docs/benchmarks.md}
 * (benchmark 3), with what bounds it.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(QosExecutorBenchmark.SUBMITTERS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class QosExecutorBenchmark {

    /** Worker threads of either executor. */
    static final int WORKERS = 2;

    /** Submitting threads. */
    static final int SUBMITTERS = 2;

    /** Items each submitter submits before waiting for them. */
    static final int BATCH = 64;

    /** Size of each buffer to checksum. */
    static final int BUFFER_BYTES = 4096;

    /** Number of distinct buffers. */
    static final int BUFFERS = 16;

    /** Volumes of the QoS configuration. */
    static final int VOLUMES = 16;

    /** Tenants of the QoS configuration. */
    static final int TENANTS = 4;

    /** Which executor runs the work. */
    @Param({"qos", "qos-wallclock", "fifo"})
    String executor;

    private QosExecutor qos;
    private ThreadPoolExecutor fifo;
    private Callable<Long>[] callables;
    private Supplier<Long>[] suppliers;
    private String[] volumes;

    /** Per-submitter state. */
    @State(Scope.Thread)
    public static class Submitter {
        final CompletableFuture<?>[] futures = new CompletableFuture<?>[BATCH];
        int next;
    }

    @Setup(Level.Trial)
    @SuppressWarnings("unchecked")
    public void setUp() {
        SplittableRandom random = new SplittableRandom(7);
        callables = new Callable[BUFFERS];
        suppliers = new Supplier[BUFFERS];
        for (int i = 0; i < BUFFERS; i++) {
            byte[] buf = new byte[BUFFER_BYTES];
            for (int j = 0; j < buf.length; j++) {
                buf[j] = (byte) random.nextInt();
            }
            callables[i] = () -> crc32c(buf);
            suppliers[i] = () -> crc32c(buf);
        }
        if (executor.startsWith("qos")) {
            SchedulerConfig.Builder b = SchedulerConfig.builder().defaultTasks();
            for (int t = 0; t < TENANTS; t++) {
                b.tenant(TenantSpec.of("tenant-" + t));
            }
            volumes = new String[VOLUMES];
            for (int v = 0; v < VOLUMES; v++) {
                volumes[v] = "volume-" + v;
                b.volume(VolumeSpec.of(volumes[v], "tenant-" + (v % TENANTS)));
            }
            CpuClock cpu = executor.equals("qos-wallclock") ? CpuClock.wallClock() : CpuClock.threadCpuTime();
            qos = QosExecutor.builder(b.build()).workers(WORKERS).cpuClock(cpu).build();
        } else {
            fifo = new ThreadPoolExecutor(WORKERS, WORKERS, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>());
            fifo.prestartAllCoreThreads();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        if (qos != null) {
            qos.close();
        }
        if (fifo != null) {
            fifo.shutdown();
            fifo.awaitTermination(1, TimeUnit.MINUTES);
        }
    }

    static long crc32c(byte[] buf) {
        CRC32C crc = new CRC32C();
        crc.update(buf, 0, buf.length);
        return crc.getValue();
    }

    /** Submits a batch of checksums and waits for all of them. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void crc32c4k(Submitter s, Blackhole bh) {
        CompletableFuture<?>[] futures = s.futures;
        if (qos != null) {
            for (int i = 0; i < BATCH; i++) {
                int n = s.next++;
                futures[i] = qos.submit(volumes[n % VOLUMES], IoKind.READ, BUFFER_BYTES, callables[n % BUFFERS]);
            }
        } else {
            for (int i = 0; i < BATCH; i++) {
                int n = s.next++;
                futures[i] = CompletableFuture.supplyAsync(suppliers[n % BUFFERS], fifo);
            }
        }
        for (int i = 0; i < BATCH; i++) {
            bh.consume(futures[i].join());
        }
    }
}
