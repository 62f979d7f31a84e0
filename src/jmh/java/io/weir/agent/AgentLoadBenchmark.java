package io.weir.agent;

import io.weir.protocol.DesiredConfig;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
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
 * {@code --changes}, {@code --heap} (the replica's -Xmx).
 */
public final class AgentLoadBenchmark {

    private static final String ADMIN = "weir_000000000000000000000000000000b1_agent-load-benchmark-admin-token-0000000000";
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
    private final AtomicInteger everApplied = new AtomicInteger();
    private String tenantId;
    private String policyId;

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
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--jar" -> jar = args[i + 1];
                case "--cp" -> classpath = args[i + 1];
                case "--heap" -> heap = args[i + 1];
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
        AgentLoadBenchmark bench = new AgentLoadBenchmark(port, work.resolve("agents"));
        try {
            bench.awaitUp();
            bench.setUp();
            System.out.println("agents  changes  p50_ms  p90_ms  p99_ms  max_ms  replica_heap_after_gc_MiB  setup_s");
            for (int n : steps) {
                long t0 = System.nanoTime();
                bench.grow(n);
                double setup = (System.nanoTime() - t0) / 1e9;
                Histogram h = bench.measure(changes);
                long heapKb = heapUsedKb(replica.pid());
                System.out.printf(Locale.ROOT, "%6d  %7d  %6.1f  %6.1f  %6.1f  %6.1f  %25.1f  %7.1f%n", n, changes,
                        h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(90) / 1e3,
                        h.getValueAtPercentile(99) / 1e3, h.getMaxValue() / 1e3, heapKb / 1024.0, setup);
                if (h.getValueAtPercentile(99) > 1_000_000) {
                    System.out.println("p99 passed 1 s at " + n + " agents; stopping");
                    break;
                }
            }
        } finally {
            bench.close();
            replica.destroy();
            replica.waitFor(30, TimeUnit.SECONDS);
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
        for (int c = 0; c < changes; c++) {
            appliedAt.clear();
            long before = agents.stream().mapToLong(a -> a.state().appliedRevision()).max().orElse(0);
            targetRevision = before + 1;
            long t0 = System.nanoTime();
            HttpResponse<String> r = send("PATCH", "/api/v1/policies/" + policyId, "{\"maxIops\":" + (2000 + c % 2) + "}");
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
        }
        return h;
    }

    private void close() {
        agents.forEach(QosAgent::close);
        executors.forEach(QosExecutor::close);
        pool.shutdownNow();
    }
}
