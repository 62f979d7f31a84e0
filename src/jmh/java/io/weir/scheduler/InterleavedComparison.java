package io.weir.scheduler;

import java.io.File;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Compares the {@link SchedulerBenchmark} round trip of this build with that of another build,
 * alternating between the two in one JVM: a fairer comparison than two JMH runs on a shared VM,
 * whose speed drifts by tens of percent over minutes.
 *
 * <h2>How it works</h2>
 * Each build's {@code target/classes} and {@code target/test-classes} are loaded by a class loader
 * of their own, so both schedulers are compiled and run independently in the same process. Both
 * loaders take the libraries (HdrHistogram, ...) from this build's class path, so a comparison
 * with a build that used other library versions runs it on this build's versions. Each side gets its own {@link SchedulerBenchmark} state, set up as JMH
 * would. After a warm-up, every round runs {@value #OPS_PER_ROUND} operations of
 * {@code enqueueNextComplete} on one side and then on the other, swapping the order every round;
 * it prints the minimum and the median of the rounds' ns/op for each side. The operation is
 * called through a {@link MethodHandle}, which adds the same few nanoseconds to both sides.
 *
 * <h2>How to run</h2>
 * Build the other version in its own checkout first ({@code git worktree add ../base <commit>},
 * then {@code mvn -B -q test-compile} there), then from this checkout:
 * <pre>
 * mvn -B -q -Pbench test-compile exec:exec -Dbench.main=io.weir.scheduler.InterleavedComparison \
 *     -Dbench.jvmArgs="-Xms10g -Xmx10g" -Djmh.args="10000 16 ../base"
 * </pre>
 * Arguments: the number of flows, the number of rounds, and the other checkout's directory
 * (relative paths are resolved against this checkout). The heap holds two schedulers: at 100,000
 * flows give it several gigabytes. Both builds must use Maven's default {@code target} directory;
 * this build's is found from where {@link SchedulerBenchmark} was loaded.
 *
 * <p>Garbage collection matters at this scale: scheduler state that a collection has already
 * moved to the old generation pays G1's write barriers and card refinement, state that is still
 * young does not. Both sides share one heap and so one collector; compare runs with the same heap
 * size.
 */
public final class InterleavedComparison {

    /** Operations per side and round: about a third of a second at 10,000 flows. */
    static final int OPS_PER_ROUND = 1_000_000;

    /** Rounds per side run before measuring, for the JIT and the caches. */
    static final int WARMUP_ROUNDS = 4;

    /** Where {@link #run} leaves its results, so that the operations are not optimised away. */
    private static long blackhole;

    private InterleavedComparison() {
    }

    public static void main(String[] args) throws Throwable {
        if (args.length != 3) {
            System.err.println("usage: InterleavedComparison <flows> <rounds> <other checkout>");
            System.exit(2);
        }
        int flows = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        if (flows < 1 || rounds < 1) {
            throw new IllegalArgumentException("flows and rounds must be at least 1");
        }
        Path other = Path.of(args[2]).toAbsolutePath().normalize();
        for (String dir : List.of("target/classes", "target/test-classes")) {
            if (!Files.isDirectory(other.resolve(dir))) {
                throw new IllegalArgumentException(other.resolve(dir) + " is missing: run mvn test-compile there first");
            }
        }
        Path self = Path.of(SchedulerBenchmark.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .getParent().getParent();
        String[] names = {"other (" + other + ")", "this (" + self + ")"};
        MethodHandle[] ops = {side(other, flows), side(self, flows)};

        for (int w = 0; w < WARMUP_ROUNDS; w++) {
            for (MethodHandle op : ops) {
                run(op);
            }
        }
        double[][] nsPerOp = new double[2][rounds];
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < 2; i++) {
                int s = r % 2 == 0 ? i : 1 - i;
                nsPerOp[s][r] = run(ops[s]);
            }
        }
        for (int s = 0; s < 2; s++) {
            double[] sorted = nsPerOp[s].clone();
            Arrays.sort(sorted);
            double median = (sorted[(rounds - 1) / 2] + sorted[rounds / 2]) / 2;
            System.out.printf(Locale.ROOT, "%s, %d flows: min %.1f, median %.1f ns/op%n", names[s], flows, sorted[0],
                    median);
        }
    }

    /** Loads one build in a class loader of its own and sets up its benchmark state. */
    private static MethodHandle side(Path checkout, int flows) throws Throwable {
        List<URL> urls = new ArrayList<>();
        urls.add(checkout.resolve("target/test-classes").toUri().toURL());
        urls.add(checkout.resolve("target/classes").toUri().toURL());
        urls.addAll(libraries());
        ClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
        Class<?> benchmark = loader.loadClass(SchedulerBenchmark.class.getName());
        Object state = benchmark.getConstructor().newInstance();
        Field f = benchmark.getDeclaredField("flows");
        f.setAccessible(true);
        f.setInt(state, flows);
        benchmark.getMethod("setUp").invoke(state);
        return MethodHandles.publicLookup()
                .findVirtual(benchmark, "enqueueNextComplete", MethodType.methodType(long.class))
                .bindTo(state);
    }

    /** This JVM's class path without the project's own class directories. */
    private static List<URL> libraries() throws MalformedURLException {
        List<URL> urls = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!entry.endsWith("classes") && !entry.endsWith("classes" + File.separator)) {
                urls.add(Path.of(entry).toUri().toURL());
            }
        }
        return urls;
    }

    /** Runs one round on one side; returns ns per operation. */
    private static double run(MethodHandle op) throws Throwable {
        long sink = 0;
        long start = System.nanoTime();
        for (int i = 0; i < OPS_PER_ROUND; i++) {
            sink += (long) op.invokeExact();
        }
        double ns = (double) (System.nanoTime() - start) / OPS_PER_ROUND;
        blackhole += sink; // keeps the results alive
        return ns;
    }
}
