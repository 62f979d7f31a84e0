package io.weir.agent;

import io.weir.protocol.DesiredConfig;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import io.weir.support.ProcessCpu;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;

/**
 * Load benchmark of the push channel (a main, not a test): many real agents in this JVM against
 * one control-plane replica in a JVM of its own (the packaged jar, its embedded PostgreSQL, a
 * fixed heap limit), on loopback.
 *
 * <p>For each step of {@code --agents} (e.g. {@code 1000,2000,4000}) it registers that many nodes in
 * total (one volume each, all of one policy) with a node token each, starts an agent per node
 * (sharing one {@link HttpClient} and a small pool, each over its own {@link QosExecutor}), waits
 * until all are connected and applied, then changes the shared policy {@code --changes} times.
 * For every change and agent it records the time from just before the {@code PATCH} is sent to
 * the moment the agent has applied the snapshot and sends its ack (so the figure includes the
 * HTTP request that commits the change: commit-to-ack, rounded up). After each step it forces a
 * full GC in the replica ({@code jcmd GC.run}) and reads its used heap ({@code jcmd GC.heap_info}).
 * It stops after the first step whose p99 passes 1 s, or after the last step.
 *
 * <pre>
 * mvn -o -q package -DskipTests
 * mvn -o -q -Pbench test-compile exec:exec -Dbench.main=io.weir.agent.AgentLoadBenchmark \
 *     -Djmh.args="--agents 1000,2000,4000 --changes 20 --heap 512m"
 * </pre>
 * Options: {@code --jar} (default {@code target/weir-0.1.0-SNAPSHOT.jar}) or {@code --cp} (a class
 * path to run {@code io.weir.Main} from instead), {@code --agents},
 * {@code --changes}, {@code --heap} (the replica's -Xmx), {@code --replica-jvm} (more JVM options of
 * the replica, space-separated), {@code --profile DIR} (flight recordings of the replica and of the
 * agents' JVM during each step's changes, written to {@code DIR}), {@code --agent-state DIR} (where
 * the agents keep their state directories; default: beside the replica's data), {@code --warmup}
 * (unrecorded changes before each step's measured ones, default 5).
 */
public final class AgentLoadBenchmark {

    private static final String ADMIN = "weir_000000000000000000000000000000b1_agent-load-benchmark-admin-token-0000000000";
    /** The idle interval whose CPU use is taken as the background rate. */
    private static final long IDLE_MILLIS = 5_000;
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final String base;
    private final Path stateRoot;
    private final ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(4, r -> {
        Thread t = new Thread(r, "bench-agents");
        t.setDaemon(true);
        return t;
    });
    private final HttpClient agentHttp = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
    private final List<QosAgent> agents = new ArrayList<>();
    private final List<QosExecutor> executors = new ArrayList<>();
    /** Revision awaited and when each agent applied it (nanoTime), by agent index. */
    private volatile long targetRevision = Long.MAX_VALUE;
    private final ConcurrentHashMap<Integer, Long> appliedAt = new ConcurrentHashMap<>();
    /** When each agent had the snapshot in force in its executor (before saving it), by agent index. */
    private final ConcurrentHashMap<Integer, Long> inForceAt = new ConcurrentHashMap<>();
    private final AtomicInteger everApplied = new AtomicInteger();
    /** Commit to in force in the executor (before the agent saves the snapshot), of the last step. */
    private final Histogram inForce = new Histogram(TimeUnit.MINUTES.toMicros(5), 3);
    private String tenantId;
    private String policyId;
    /** PATCHes of the policy so far, warm-up included: each one sets the other of two values. */
    private long policyChanges;

    private AgentLoadBenchmark(int port, Path stateRoot) {
        this.base = "http://127.0.0.1:" + port;
        this.stateRoot = stateRoot;
    }

    public static void main(String[] args) throws Exception {
        String jar = "target/weir-0.1.0-SNAPSHOT.jar";
        String classpath = null;
        String heap = "512m";
        List<Integer> steps = List.of(1000);
        int changes = 20;
        List<String> replicaJvm = new ArrayList<>();
        Path profile = null;
        Path agentState = null;
        int warmup = 5;
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--jar" -> jar = args[i + 1];
                case "--cp" -> classpath = args[i + 1];
                case "--heap" -> heap = args[i + 1];
                case "--replica-jvm" -> replicaJvm.addAll(List.of(args[i + 1].trim().split("\\s+")));
                case "--profile" -> profile = Path.of(args[i + 1]);
                case "--agent-state" -> agentState = Path.of(args[i + 1]);
                case "--warmup" -> warmup = Integer.parseInt(args[i + 1]);
                case "--changes" -> changes = Integer.parseInt(args[i + 1]);
                case "--agents" -> steps = java.util.Arrays.stream(args[i + 1].split(",")).map(Integer::parseInt).toList();
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path work = Files.createTempDirectory("weir-agent-bench");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + heap));
        command.addAll(replicaJvm);
        command.addAll(classpath == null ? List.of("-jar", jar) : List.of("-cp", classpath, "io.weir.Main"));
        command.addAll(List.of("--server.port=" + port, "--weir.data-dir=" + work.resolve("cp"),
                "--weir.security.bootstrap-token=" + ADMIN,
                "--logging.level.root=WARN"));
        Process replica = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(work.resolve("replica.log").toFile())
                .directory(Path.of(".").toFile())
                .start();
        System.out.printf(Locale.ROOT, "replica pid %d, -Xmx%s, port %d, log %s%n", replica.pid(), heap, port,
                work.resolve("replica.log"));
        Path agentsDir = agentState == null ? work.resolve("agents") : Files.createTempDirectory(agentState, "weir-agents");
        AgentLoadBenchmark bench = new AgentLoadBenchmark(port, agentsDir);
        try {
            bench.awaitUp();
            bench.setUp();
            System.out.println("agents  changes  p50_ms  p90_ms  p99_ms  max_ms  replica_heap_after_gc_MiB  setup_s"
                    + "  in_force_p50_ms  in_force_p99_ms  cpu_us_per_push(replica postgres agents)");
            for (int n : steps) {
                long t0 = System.nanoTime();
                bench.grow(n);
                double setup = (System.nanoTime() - t0) / 1e9;
                bench.measure(warmup); // unrecorded: the push path's code compiled before it is timed
                // the background (heartbeats, usage reports) over an idle while, subtracted below
                long[] idle0 = cpuNanos(replica, work.resolve("cp/postgres"));
                long i0 = System.nanoTime();
                Thread.sleep(IDLE_MILLIS); // measuring a quiet interval of a benchmark, not a test
                long idleNanos = System.nanoTime() - i0;
                long[] cpu0 = cpuNanos(replica, work.resolve("cp/postgres"));
                long m0 = System.nanoTime();
                Histogram h = profile == null ? bench.measure(changes) : profiled(profile, n, replica.pid(), bench, changes);
                long[] cpu1 = cpuNanos(replica, work.resolve("cp/postgres"));
                double scale = (System.nanoTime() - m0) / (double) idleNanos;
                double pushes = (double) n * changes;
                double[] perPush = new double[3];
                for (int k = 0; k < 3; k++) {
                    perPush[k] = Math.max(0, (cpu1[k] - cpu0[k]) - (cpu0[k] - idle0[k]) * scale) / pushes / 1e3;
                }
                long heapKb = heapUsedKb(replica.pid());
                System.out.printf(Locale.ROOT, "%6d  %7d  %6.1f  %6.1f  %6.1f  %6.1f  %25.1f  %7.1f  %15.1f  %15.1f  %6.0f %6.0f %6.0f%n",
                        n, changes, h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(90) / 1e3,
                        h.getValueAtPercentile(99) / 1e3, h.getMaxValue() / 1e3, heapKb / 1024.0, setup,
                        bench.inForce.getValueAtPercentile(50) / 1e3, bench.inForce.getValueAtPercentile(99) / 1e3,
                        perPush[0], perPush[1], perPush[2]);
                if (h.getValueAtPercentile(99) > 1_000_000) {
                    System.out.println("p99 passed 1 s at " + n + " agents; stopping");
                    break;
                }
            }
        } finally {
            bench.close();
            replica.destroy();
            replica.waitFor(30, TimeUnit.SECONDS);
            try (java.util.stream.Stream<String> lines = Files.lines(work.resolve("replica.log"))) {
                lines.filter(l -> l.contains("refresh: ")).forEach(l -> System.out.println("replica: " + l));
            }
            for (Path dir : List.of(work, agentsDir)) { // thousands of agents' state dirs
                if (!Files.exists(dir)) {
                    continue; // the agents' dir is inside work unless --agent-state put it elsewhere
                }
                try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
                    files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    /**
     * Runs {@link #measure} under flight recordings of the replica ({@code jcmd JFR.start}) and of
     * this JVM (the agents), written to {@code dir} as {@code replica-N.jfr} and {@code agents-N.jfr}.
     */
    private static Histogram profiled(Path dir, int n, long replicaPid, AgentLoadBenchmark bench, int changes)
            throws Exception {
        Files.createDirectories(dir);
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        Path replicaFile = dir.resolve("replica-" + n + ".jfr").toAbsolutePath();
        new ProcessBuilder(jcmd, Long.toString(replicaPid), "JFR.start", "name=bench", "settings=profile")
                .redirectErrorStream(true).start().waitFor();
        try (jdk.jfr.Recording agents = new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration("profile"))) {
            agents.start();
            Histogram h = bench.measure(changes);
            agents.stop();
            agents.dump(dir.resolve("agents-" + n + ".jfr"));
            return h;
        } finally {
            new ProcessBuilder(jcmd, Long.toString(replicaPid), "JFR.stop", "name=bench", "filename=" + replicaFile)
                    .redirectErrorStream(true).start().waitFor();
        }
    }

    /**
     * CPU time (user + system, from {@code /proc}) of the replica, of its embedded PostgreSQL (the
     * postmaster named in {@code postmaster.pid} of {@code pgData}, and its backends) and of this
     * JVM (the agents), in nanoseconds.
     */
    private static long[] cpuNanos(Process replica, Path pgData) {
        long own = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
        long postgres = 0;
        try {
            long postmaster = Long.parseLong(Files.readAllLines(pgData.resolve("postmaster.pid")).get(0).trim());
            postgres = procCpuNanos(postmaster) + ProcessHandle.of(postmaster).stream().flatMap(ProcessHandle::descendants)
                    .mapToLong(p -> procCpuNanos(p.pid())).sum();
        } catch (IOException | RuntimeException e) {
            // no embedded server found: reported as 0
        }
        return new long[] {procCpuNanos(replica.pid()), postgres, own};
    }

    private static long procCpuNanos(long pid) {
        try {
            return ProcessCpu.nanos(pid);
        } catch (RuntimeException e) {
            return 0; // a process that ended (a PostgreSQL backend): its time is lost, a small undercount
        }
    }

    private static long heapUsedKb(long pid) throws IOException, InterruptedException {
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        new ProcessBuilder(jcmd, Long.toString(pid), "GC.run").redirectErrorStream(true).start().waitFor();
        Process info = new ProcessBuilder(jcmd, Long.toString(pid), "GC.heap_info").redirectErrorStream(true).start();
        String out = new String(info.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        info.waitFor();
        Matcher m = HEAP_USED.matcher(out);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private void awaitUp() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (System.nanoTime() < deadline) {
            try {
                if (send("GET", "/actuator/health/readiness", null).statusCode() == 200) {
                    return;
                }
            } catch (UncheckedIOException e) {
                // not listening yet
            }
            Thread.sleep(500); // polling a child process's start-up, not a test
        }
        throw new IllegalStateException("the replica did not come up; see its log");
    }

    private HttpResponse<String> send(String method, String path, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Authorization", "Bearer " + ADMIN);
        if (body != null) {
            b.header("Content-Type", method.equals("PATCH") ? "application/merge-patch+json" : "application/json");
        }
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        try {
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private String create(String path, String body) {
        HttpResponse<String> r = send("POST", path, body);
        if (r.statusCode() != 201) {
            throw new IllegalStateException("POST " + path + " answered " + r.statusCode() + ": " + r.body());
        }
        return field(r.body(), path.endsWith("/tokens") ? "token" : "id");
    }

    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\"\\s*:\\s*\"([^\"]+)\"").matcher(json);
        if (!m.find()) {
            throw new IllegalStateException("no " + name + " in " + json);
        }
        return m.group(1);
    }

    private void setUp() {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        tenantId = create("/api/v1/tenants", "{\"name\":\"bench-" + suffix + "\"}");
        policyId = create("/api/v1/policies", "{\"name\":\"bench-" + suffix + "\",\"maxIops\":1000}");
    }

    /** Registers nodes and starts agents until there are {@code total}, all connected and applied. */
    private void grow(int total) throws Exception {
        int from = agents.size();
        ExecutorService setup = Executors.newFixedThreadPool(8);
        List<Future<String[]>> nodes = new ArrayList<>();
        for (int i = from; i < total; i++) {
            int index = i;
            nodes.add(setup.submit(() -> {
                String nodeId = create("/api/v1/nodes", "{\"name\":\"bench-node-" + index + "-" + UUID.randomUUID().toString().substring(0, 6) + "\"}");
                create("/api/v1/tenants/" + tenantId + "/volumes", "{\"name\":\"v-" + index + "\",\"sizeBytes\":1048576,"
                        + "\"nodeIds\":[\"" + nodeId + "\"],\"policyId\":\"" + policyId + "\"}");
                String token = create("/api/v1/tokens", "{\"name\":\"bench-token-" + index + "-" + UUID.randomUUID().toString().substring(0, 6)
                        + "\",\"role\":\"node\",\"nodeId\":\"" + nodeId + "\"}");
                return new String[] {nodeId, token};
            }));
        }
        int target = everApplied.get() + (total - from);
        for (int i = from; i < total; i++) {
            String[] node = nodes.get(i - from).get();
            int index = i;
            QosExecutor executor = QosExecutor.builder(SchedulerConfig.builder().defaultTasks().build()).workers(1).build();
            QosAgent agent = QosAgent.builder()
                    .controlPlane(URI.create(base))
                    .nodeId(UUID.fromString(node[0]))
                    .token(node[1])
                    .stateDir(stateRoot.resolve(node[0]))
                    .executor(executor)
                    .httpClient(agentHttp)
                    .scheduler(pool)
                    .heartbeatInterval(Duration.ofSeconds(10))
                    .heartbeatTimeout(Duration.ofSeconds(60))
                    .backoff(Duration.ofMillis(200), Duration.ofSeconds(5))
                    .listener(new AgentListener() {
                        private boolean first = true;

                        @Override
                        public void applying(DesiredConfig config) {
                            if (config.revision() >= targetRevision) {
                                inForceAt.putIfAbsent(index, System.nanoTime());
                            }
                        }

                        @Override
                        public void applied(DesiredConfig config) {
                            if (first) {
                                first = false;
                                everApplied.incrementAndGet();
                            }
                            if (config.revision() >= targetRevision) {
                                appliedAt.putIfAbsent(index, System.nanoTime());
                            }
                        }
                    })
                    .build();
            executors.add(executor);
            agents.add(agent);
            agent.start();
        }
        setup.shutdown();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (everApplied.get() < target || agents.stream().filter(a -> a.state().connected()).count() < total) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + agents.stream().filter(a -> a.state().connected()).count()
                        + " of " + total + " agents connected");
            }
            Thread.sleep(100); // waiting for a benchmark's set-up, not a test
        }
    }

    /** Changes the shared policy {@code changes} times, each after every agent acked the one before. */
    private Histogram measure(int changes) throws InterruptedException {
        Histogram h = new Histogram(TimeUnit.MINUTES.toMicros(5), 3);
        inForce.reset();
        for (int c = 0; c < changes; c++) {
            appliedAt.clear();
            inForceAt.clear();
            long before = agents.stream().mapToLong(a -> a.state().appliedRevision()).max().orElse(0);
            targetRevision = before + 1;
            long t0 = System.nanoTime();
            // Alternates across calls, not per call: an odd warm-up must not leave the value the
            // first measured change writes again (a write that changes nothing is no new revision).
            HttpResponse<String> r = send("PATCH", "/api/v1/policies/" + policyId,
                    "{\"maxIops\":" + (2000 + policyChanges++ % 2) + "}");
            if (r.statusCode() != 200) {
                throw new IllegalStateException("PATCH answered " + r.statusCode() + ": " + r.body());
            }
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (appliedAt.size() < agents.size()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("only " + appliedAt.size() + " of " + agents.size() + " agents applied change " + c);
                }
                Thread.sleep(5); // waiting for the acks of a benchmark round, not a test
            }
            for (long t : appliedAt.values()) {
                h.recordValue(Math.max(0, (t - t0) / 1000));
            }
            for (long t : inForceAt.values()) {
                inForce.recordValue(Math.max(0, (t - t0) / 1000));
            }
        }
        return h;
    }

    private void close() {
        agents.forEach(QosAgent::close);
        executors.forEach(QosExecutor::close);
        pool.shutdownNow();
    }
}
