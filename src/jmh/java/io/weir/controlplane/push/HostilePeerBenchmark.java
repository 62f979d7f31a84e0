package io.weir.controlplane.push;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;

/**
 * Hostile-peer benchmark of the control plane's agent channel and usage pipeline (issue 23, the
 * control-plane half; a main, not a test). One control-plane replica runs in a JVM of its own (the
 * packaged jar or a class path, its embedded PostgreSQL, a fixed heap limit), on loopback. An
 * honest node sends one usage report every {@code --period-ms} and the benchmark times each
 * report from its send to its {@code usageAck}. Phases of {@code --seconds} each:
 * <ol>
 *   <li>{@code quiet}: the honest node alone (the baseline);</li>
 *   <li>{@code poison}: beside it a hostile node sends {@code --poison-per-s} poison reports a
 *       second, in turn: counters of 2^63 - 11, {@code to} 30 days ahead, a task name with a NUL,
 *       a task name of 10,000 characters, a queue depth of 1e308, an interval in year 9999;</li>
 *   <li>{@code flood}: beside it a hostile node sends {@code --flood-burst} valid task-only reports
 *       as fast as the socket takes them, every second (issue 23: 12,000 in 0.4 s), after one
 *       poison report.</li>
 * </ol>
 * For each phase it prints the honest node's ack latency (p50, p99, max, in ms, from an HdrHistogram
 * of every report), their ratio to the quiet phase's, how often the honest node was disconnected,
 * the hostile node's answers (refused, acked) and closes, and at the end the replica's used heap
 * after a full GC ({@code jcmd}). The goal: p50 and p99 within 20% of quiet, no disconnect; the
 * verdict is computed, not typed.
 *
 * <pre>
 * mvn -o -q package -DskipTests
 * mvn -o -q -Pbench test-compile exec:exec -Dbench.main=io.weir.controlplane.push.HostilePeerBenchmark \
 *     -Djmh.args="--seconds 30 --heap 512m"
 * </pre>
 * Options: {@code --jar} (default {@code target/weir-0.1.0-SNAPSHOT.jar}) or {@code --cp} (a class
 * path to run {@code io.weir.Main} from), {@code --heap}, {@code --seconds} (per phase, default 30),
 * {@code --period-ms} (honest report period, default 100), {@code --poison-per-s} (default 20),
 * {@code --flood-burst} (default 12000).
 */
public final class HostilePeerBenchmark {

    private static final String ADMIN = "weir_000000000000000000000000000000c1_hostile-peer-benchmark-admin-token-0000000";
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final int port;

    private HostilePeerBenchmark(int port) {
        this.port = port;
    }

    /** One raw agent connection: frames in, closes counted. */
    private final class Peer implements WebSocket.Listener {
        final UUID node;
        final String token;
        volatile WebSocket socket;
        final AtomicInteger closes = new AtomicInteger();
        final AtomicLong refused = new AtomicLong();
        final AtomicLong acked = new AtomicLong();
        final Map<Long, Long> sentAt = new ConcurrentHashMap<>();
        volatile Histogram latency = new Histogram(3_600_000_000L, 3);
        final StringBuilder text = new StringBuilder();
        volatile CompletableFuture<Void> configured = new CompletableFuture<>();

        Peer(UUID node, String token) {
            this.node = node;
            this.token = token;
        }

        void connect() {
            configured = new CompletableFuture<>();
            socket = http.newWebSocketBuilder().header("Authorization", "Bearer " + token)
                    .buildAsync(URI.create("ws://127.0.0.1:" + port + "/api/v1/agent/connect"), this).join();
            send("{\"type\":\"hello\",\"protocolVersion\":1,\"appliedRevision\":0,\"agentVersion\":\"bench\"}");
            configured.orTimeout(60, TimeUnit.SECONDS).join();
        }

        synchronized void send(String frame) {
            socket.sendText(frame, true).join();
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                String frame = text.toString();
                text.setLength(0);
                if (frame.contains("\"type\":\"config\"")) {
                    Matcher m = Pattern.compile("\"revision\":(\\d+)").matcher(frame);
                    if (m.find()) {
                        ws.sendText("{\"type\":\"ack\",\"protocolVersion\":1,\"revision\":" + m.group(1) + "}", true);
                    }
                    configured.complete(null);
                } else if (frame.contains("\"type\":\"usageAck\"")) {
                    Matcher m = Pattern.compile("\"sequence\":(\\d+)").matcher(frame);
                    if (m.find()) {
                        Long t = sentAt.remove(Long.parseLong(m.group(1)));
                        if (t != null) {
                            latency.recordValue(Math.max(1, (System.nanoTime() - t) / 1000));
                        }
                    }
                    (frame.contains("\"refused\"") ? refused : acked).incrementAndGet();
                }
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int status, String reason) {
            closes.incrementAndGet();
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            closes.incrementAndGet();
        }
    }

    public static void main(String[] args) throws Exception {
        String jar = "target/weir-0.1.0-SNAPSHOT.jar";
        String classpath = null;
        String heap = "512m";
        int seconds = 30;
        int periodMs = 100;
        int poisonPerS = 20;
        int floodBurst = 12_000;
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--jar" -> jar = args[i + 1];
                case "--cp" -> classpath = args[i + 1];
                case "--heap" -> heap = args[i + 1];
                case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
                case "--period-ms" -> periodMs = Integer.parseInt(args[i + 1]);
                case "--poison-per-s" -> poisonPerS = Integer.parseInt(args[i + 1]);
                case "--flood-burst" -> floodBurst = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path work = Files.createTempDirectory("weir-hostile-bench");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + heap));
        command.addAll(classpath == null ? List.of("-jar", jar) : List.of("-cp", classpath, "io.weir.Main"));
        command.addAll(List.of("--server.port=" + port, "--weir.data-dir=" + work.resolve("cp"),
                "--weir.security.bootstrap-token=" + ADMIN, "--logging.level.root=WARN"));
        Process replica = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(work.resolve("replica.log").toFile()).start();
        System.out.printf(Locale.ROOT, "replica pid %d, -Xmx%s, port %d, log %s%n", replica.pid(), heap, port,
                work.resolve("replica.log"));
        HostilePeerBenchmark bench = new HostilePeerBenchmark(port);
        try {
            bench.run(seconds, periodMs, poisonPerS, floodBurst, replica.pid());
        } finally {
            replica.destroy();
            replica.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private void run(int seconds, int periodMs, int poisonPerS, int floodBurst, long pid) throws Exception {
        awaitUp();
        Peer honest = register();
        Peer hostile = register();
        UUID mine = volumeOn(honest.node);
        UUID theirs = volumeOn(hostile.node);
        honest.connect();
        hostile.connect();
        AtomicLong honestSeq = new AtomicLong();
        AtomicLong hostileSeq = new AtomicLong();

        // Warm-up, unrecorded: the ingest path compiled before it is timed.
        phase(honest, mine, honestSeq, periodMs, Math.max(5, seconds / 3), () -> { });
        System.out.println("phase   reports  p50_ms  p99_ms  max_ms  p50_ratio  p99_ratio  honest_closes  "
                + "hostile_sent  hostile_refused  hostile_acked  hostile_closes");
        Histogram quiet = phase(honest, mine, honestSeq, periodMs, seconds, () -> { });
        print("quiet", quiet, quiet, honest, 0, hostile, 0, 0, 0, 0);

        String[] poison = poisonFrames(theirs);
        AtomicLong sent = new AtomicLong();
        int closes0 = honest.closes.get();
        long ref0 = hostile.refused.get();
        long ack0 = hostile.acked.get();
        int hc0 = hostile.closes.get();
        long[] next = {System.nanoTime()};
        Histogram poisoned = phase(honest, mine, honestSeq, periodMs, seconds, () -> {
            long now = System.nanoTime();
            while (next[0] <= now) {
                long seq = hostileSeq.incrementAndGet();
                sendOrReconnect(hostile, String.format(Locale.ROOT, poison[(int) (seq % poison.length)], seq));
                sent.incrementAndGet();
                next[0] += 1_000_000_000L / poisonPerS;
            }
        });
        print("poison", poisoned, quiet, honest, honest.closes.get() - closes0, hostile, sent.get(),
                hostile.refused.get() - ref0, hostile.acked.get() - ack0, hostile.closes.get() - hc0);

        sent.set(0);
        closes0 = honest.closes.get();
        long ref1 = hostile.refused.get();
        long ack1 = hostile.acked.get();
        int hc1 = hostile.closes.get();
        AtomicBoolean stop = new AtomicBoolean();
        Thread flooder = new Thread(() -> {
            while (!stop.get()) {
                long t0 = System.nanoTime();
                long seq0 = hostileSeq.incrementAndGet();
                sendOrReconnect(hostile, String.format(Locale.ROOT, poison[0], seq0));
                sent.incrementAndGet();
                for (int i = 0; i < floodBurst && !stop.get(); i++) {
                    long seq = hostileSeq.incrementAndGet();
                    Instant to = Instant.now();
                    sendOrReconnect(hostile, "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":" + seq + ",\"from\":\""
                            + to.minusSeconds(10) + "\",\"to\":\"" + to + "\",\"tasks\":[{\"name\":\"foreground\",\"ops\":1,"
                            + "\"cpuNanos\":1,\"effectiveShare\":1.0}]}");
                    sent.incrementAndGet();
                }
                long left = 1_000_000_000L - (System.nanoTime() - t0);
                if (left > 0) {
                    try {
                        Thread.sleep(left / 1_000_000); // pacing the attacker's bursts, not synchronisation
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }, "flooder");
        flooder.start();
        Histogram flooded = phase(honest, mine, honestSeq, periodMs, seconds, () -> { });
        stop.set(true);
        flooder.join(60_000);
        print("flood", flooded, quiet, honest, honest.closes.get() - closes0, hostile, sent.get(),
                hostile.refused.get() - ref1, hostile.acked.get() - ack1, hostile.closes.get() - hc1);

        System.out.printf(Locale.ROOT, "replica used heap after full GC: %.1f MiB%n", heapUsedKb(pid) / 1024.0);
        boolean within = ratio(poisoned, quiet, 50) <= 1.2 && ratio(poisoned, quiet, 99) <= 1.2
                && ratio(flooded, quiet, 50) <= 1.2 && ratio(flooded, quiet, 99) <= 1.2;
        boolean stayed = honest.closes.get() == 0;
        System.out.println("goal (p50 and p99 within 20% of quiet, no disconnect): latency "
                + (within ? "met" : "missed") + ", disconnects " + (stayed ? "none" : honest.closes.get()));
    }

    private void sendOrReconnect(Peer p, String frame) {
        try {
            p.send(frame);
        } catch (RuntimeException e) {
            try {
                p.connect();
            } catch (RuntimeException again) {
                // the replica refused the reconnect for now; the next frame tries again
            }
        }
    }

    private static String[] poisonFrames(UUID volume) {
        Instant now = Instant.now();
        String head = "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":%d,";
        String vol = "\"volumes\":[{\"volumeId\":\"" + volume + "\",\"readOps\":READS,\"writeOps\":0,\"readBytes\":0,"
                + "\"writeBytes\":0,\"latencyP50Us\":1,\"latencyP99Us\":1,\"latencyMaxUs\":1,\"queueDepth\":DEPTH,"
                + "\"throttledNanos\":0,\"rejected\":0,\"cpuNanos\":0}]";
        String recent = "\"from\":\"" + now.minusSeconds(10) + "\",\"to\":\"" + now + "\",";
        return new String[] {
            head + recent + vol.replace("READS", String.valueOf(Long.MAX_VALUE - 10)).replace("DEPTH", "0") + "}",
            head + "\"from\":\"" + now + "\",\"to\":\"" + now.plus(Duration.ofDays(30)) + "\","
                    + vol.replace("READS", "1").replace("DEPTH", "0") + "}",
            head + recent + "\"tasks\":[{\"name\":\"a\\u0000b\",\"ops\":1,\"cpuNanos\":1,\"effectiveShare\":1}]}",
            head + recent + "\"tasks\":[{\"name\":\"" + "x".repeat(10_000) + "\",\"ops\":1,\"cpuNanos\":1,\"effectiveShare\":1}]}",
            head + recent + vol.replace("READS", "1").replace("DEPTH", "1e308") + "}",
            head + "\"from\":\"9999-01-01T00:00:00Z\",\"to\":\"9999-01-01T00:00:10Z\","
                    + vol.replace("READS", "1").replace("DEPTH", "0") + "}",
        };
    }

    /** Runs the honest node's reports for {@code seconds}, calling {@code beside} between them; answers their latencies. */
    private Histogram phase(Peer honest, UUID volume, AtomicLong seq, int periodMs, int seconds, Runnable beside)
            throws InterruptedException {
        honest.latency = new Histogram(3_600_000_000L, 3);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long next = System.nanoTime();
        while (System.nanoTime() < end) {
            if (System.nanoTime() >= next) {
                long s = seq.incrementAndGet();
                Instant to = Instant.now();
                String frame = "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":" + s + ",\"from\":\""
                        + to.minusMillis(periodMs) + "\",\"to\":\"" + to + "\",\"volumes\":[{\"volumeId\":\"" + volume
                        + "\",\"readOps\":10,\"writeOps\":5,\"readBytes\":40960,\"writeBytes\":20480,\"latencyP50Us\":100,"
                        + "\"latencyP99Us\":900,\"latencyMaxUs\":2000,\"queueDepth\":1.5,\"throttledNanos\":0,"
                        + "\"rejected\":0,\"cpuNanos\":5000}],\"tasks\":[{\"name\":\"foreground\",\"ops\":15,"
                        + "\"cpuNanos\":5000,\"effectiveShare\":700}]}";
                honest.sentAt.put(s, System.nanoTime());
                sendOrReconnect(honest, frame);
                next += periodMs * 1_000_000L;
            }
            beside.run();
            Thread.sleep(1); // pacing the senders of a benchmark, not synchronisation
        }
        // answers still in flight at the end count at their arrival, within 30 s
        long wait = System.nanoTime() + 30_000_000_000L;
        while (!honest.sentAt.isEmpty() && System.nanoTime() < wait) {
            Thread.sleep(10);
        }
        honest.sentAt.clear();
        return honest.latency;
    }

    private static double ratio(Histogram h, Histogram base, double percentile) {
        return (double) h.getValueAtPercentile(percentile) / Math.max(1, base.getValueAtPercentile(percentile));
    }

    private static void print(String phase, Histogram h, Histogram quiet, Peer honest, int honestCloses, Peer hostile,
            long hostileSent, long refused, long acked, int hostileCloses) {
        System.out.printf(Locale.ROOT, "%-6s  %7d  %6.2f  %6.2f  %6.2f  %9.2f  %9.2f  %13d  %12d  %15d  %13d  %14d%n", phase,
                h.getTotalCount(), h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3,
                h.getMaxValue() / 1e3, ratio(h, quiet, 50), ratio(h, quiet, 99), honestCloses, hostileSent, refused,
                acked, hostileCloses);
    }

    private void awaitUp() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base() + "/actuator/health")).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (java.io.IOException e) {
                // not listening yet
            }
            Thread.sleep(500); // polling a starting process
        }
        throw new IllegalStateException("the replica did not come up");
    }

    private String base() {
        return "http://127.0.0.1:" + port;
    }

    private String post(String path, String json) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base() + path))
                .header("Authorization", "Bearer " + ADMIN).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 != 2) {
            throw new IllegalStateException(path + ": " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }

    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":\"([^\"]+)\"").matcher(json);
        if (!m.find()) {
            throw new IllegalStateException("no " + name + " in " + json);
        }
        return m.group(1);
    }

    private Peer register() throws Exception {
        String node = post("/api/v1/nodes", "{\"name\":\"bench-" + UUID.randomUUID().toString().substring(0, 8) + "\"}");
        return new Peer(UUID.fromString(field(node, "id")), field(node, "token"));
    }

    private UUID volumeOn(UUID node) throws Exception {
        String tenant = post("/api/v1/tenants", "{\"name\":\"bench-" + UUID.randomUUID().toString().substring(0, 8) + "\"}");
        String volume = post("/api/v1/tenants/" + field(tenant, "id") + "/volumes", "{\"name\":\"v\",\"sizeBytes\":1048576,"
                + "\"nodeIds\":[\"" + node + "\"]}");
        return UUID.fromString(field(volume, "id"));
    }

    private static long heapUsedKb(long pid) throws Exception {
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        new ProcessBuilder(jcmd, Long.toString(pid), "GC.run").redirectErrorStream(true).start().waitFor();
        Process info = new ProcessBuilder(jcmd, Long.toString(pid), "GC.heap_info").redirectErrorStream(true).start();
        String out = new String(info.getInputStream().readAllBytes());
        info.waitFor();
        Matcher m = HEAP_USED.matcher(out);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }
}
