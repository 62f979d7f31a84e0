package io.weir.datanode;

import io.weir.agent.ServerCertificate;
import io.weir.protocol.ClientCertificateEntry;
import io.weir.protocol.TlsConfig;
import io.weir.support.LibnbdHome;
import io.weir.support.ProcessCpu;
import io.weir.support.TestConfigs;
import io.weir.support.TestPki;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What TLS costs on the NBD data path (issue 19, item 6; a main, not a test): fio's nbd engine
 * against one Weir data node in plaintext and over TLS (NBD_OPT_STARTTLS, TLS 1.3, client
 * certificates), and against nbdkit's file plugin in plaintext and with {@code --tls=require
 * --tls-verify-peer}, serving the same kind of 1 GiB file of random data, in one run, alternating
 * server by server each round. Workloads: 4 KiB random reads at iodepth 32, and 1 MiB sequential
 * reads at iodepth 8. fio reads its certificates from {@code $HOME/.pki/libnbd} (its nbd engine
 * takes no path), so it runs as {@code nobody} with a home of its own when this runs as root.
 * Prints each server's median over the rounds with the CPU seconds its process and fio spent per
 * GiB moved (medians too: the node's is this JVM's, which does nothing else meanwhile), then the
 * ratios TLS / plaintext and Weir TLS / nbdkit TLS; the targets are 0.9 and 0.5 of plaintext at
 * 4 KiB and 1 MiB, and at least nbdkit's.
 *
 * <pre>
 * mvn -o -q -Pbench test-compile exec:exec -Dbench.main=io.weir.datanode.NbdTlsBenchmark \
 *     -Djmh.args="--rounds 3 --seconds 10 --workers 2"
 * </pre>
 * {@code --size-mib} sets the size of the backing files (default 1024); {@code --workload 4k} or
 * {@code 1m} runs one workload, {@code --server weir-tls} (a prefix of a server's name, {@code -}
 * for a space) the servers it names (then without ratios); {@code --warmup 10} first runs each
 * workload on each server for that many seconds, unrecorded (the node's code is compiled by then).
 * Needs fio, nbdkit and (as root) setpriv.
 */
public final class NbdTlsBenchmark {

    /** Bytes of each backing file; {@code --size-mib} (default 1024). */
    private static long size = 1L << 30;
    private static final JsonMapper JSON = JsonMapper.builder().build();

    record Workload(String name, String rw, String bs, int depth) {
    }

    private static final List<Workload> WORKLOADS = List.of(new Workload("4k randread qd32", "randread", "4k", 32),
            new Workload("1m read qd8", "read", "1m", 8));

    private NbdTlsBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = 3;
        int seconds = 10;
        int workers = 2;
        String only = "";
        String onlyServer = "";
        int warmup = 0;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
                case "--workers" -> workers = Integer.parseInt(args[i + 1]);
                case "--size-mib" -> size = Long.parseLong(args[i + 1]) << 20;
                case "--workload" -> only = args[i + 1];
                case "--server" -> onlyServer = args[i + 1];
                case "--warmup" -> warmup = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Path work = Files.createTempDirectory("weir-tls-bench");
        Process nbdkit = null;
        Process nbdkitPlain = null;
        DataNode node = null;
        try {
            TestPki ca = TestPki.create("weir bench CA");
            TestPki.Issued server = ca.issueServer("node", 0x99, "127.0.0.1");
            TestPki.Issued client = ca.issue("client", 0x10);
            // the client's certificate directory, in a home of its own, and how fio runs as its user
            Path clientPki = Files.createDirectories(work.resolve("client-pki"));
            Files.writeString(clientPki.resolve("ca-cert.pem"), TestPki.pem(ca.certificate()));
            Files.writeString(clientPki.resolve("client-cert.pem"), client.certificatePem());
            Files.writeString(clientPki.resolve("client-key.pem"), client.privateKeyPem());
            List<String> asUser = LibnbdHome.prefix(work.resolve("home"), clientPki);
            // nbdkit's server directory
            Path kitPki = Files.createDirectories(work.resolve("nbdkit-pki"));
            Files.writeString(kitPki.resolve("ca-cert.pem"), TestPki.pem(ca.certificate()));
            Files.writeString(kitPki.resolve("server-cert.pem"), server.certificatePem());
            Files.writeString(kitPki.resolve("server-key.pem"), server.privateKeyPem());

            // the same kind of backing file for both: 1 GiB of random data
            Path data = Files.createDirectories(work.resolve("data"));
            var config = TestConfigs.config().tenant("bench").volume("bench", "vol", size)
                    .tls(new TlsConfig(List.of(TestPki.pem(ca.certificate())),
                            List.of(new ClientCertificateEntry("10", TestConfigs.id("tenant:bench"),
                                    Instant.now().plusSeconds(86_400))), List.of()))
                    .build();
            fill(data.resolve(TestConfigs.volumeId("bench", "vol") + ".img"));
            Path kitFile = work.resolve("nbdkit.img");
            fill(kitFile);

            node = DataNode.builder().dataDir(data).listen(new InetSocketAddress("127.0.0.1", 0)).workers(workers).build();
            node.apply(config);
            node.serverCertificate(new ServerCertificate(server.keys().getPrivate(), server.certificate(),
                    List.of(ca.certificate())));
            int weirPort = node.listenAddress().getPort();
            int kitPort = freePort();
            int kitPlainPort = freePort();
            nbdkit = startNbdkit(work, "nbdkit-tls.log", kitPort, kitFile, "--tls=require", "--tls-certificates=" + kitPki,
                    "--tls-verify-peer");
            nbdkitPlain = startNbdkit(work, "nbdkit.log", kitPlainPort, kitFile);

            // each server's URI and a reader of its process's CPU time (ns): the node runs in this JVM
            var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            Map<String, Server> servers = new LinkedHashMap<>();
            servers.put("weir plaintext", new Server("nbd://127.0.0.1:" + weirPort + "/bench/vol", os::getProcessCpuTime));
            servers.put("weir tls", new Server("nbds://127.0.0.1:" + weirPort + "/bench/vol", os::getProcessCpuTime));
            Process kit = nbdkit;
            Process kitPlain = nbdkitPlain;
            servers.put("nbdkit plaintext", new Server("nbd://127.0.0.1:" + kitPlainPort + "/", () -> ProcessCpu.nanos(kitPlain.pid())));
            servers.put("nbdkit tls", new Server("nbds://127.0.0.1:" + kitPort + "/", () -> ProcessCpu.nanos(kit.pid())));
            String prefix = only;
            List<Workload> workloads = WORKLOADS.stream().filter(w -> w.name().startsWith(prefix)).toList();
            System.out.printf(Locale.ROOT, "# %d rounds x %d s after %d s of warm-up per server and workload, %d workers, load average before: %s%n",
                    rounds, seconds, warmup, workers, Files.readString(Path.of("/proc/loadavg")).strip());
            String serverPrefix = onlyServer.replace('-', ' ');
            servers.keySet().removeIf(s -> !s.startsWith(serverPrefix));
            List<String> order = new ArrayList<>(servers.keySet());
            for (String s : warmup > 0 ? order : List.<String>of()) {
                for (Workload w : workloads) {
                    fio(asUser, servers.get(s), w, warmup); // unrecorded: compiles the paths measured
                }
            }
            Map<String, Map<String, List<Run>>> results = new LinkedHashMap<>();
            for (int r = 0; r < rounds; r++) {
                for (Workload w : workloads) {
                    for (String s : order) {
                        Run run = fio(asUser, servers.get(s), w, seconds);
                        results.computeIfAbsent(w.name(), k -> new LinkedHashMap<>()).computeIfAbsent(s, k -> new ArrayList<>())
                                .add(run);
                    }
                }
                java.util.Collections.rotate(order, 1); // alternate which server goes first
            }
            System.out.printf(Locale.ROOT, "%-18s %-17s %12s %6s %18s %18s%n", "workload", "server", "median", "unit",
                    "server cpu/GiB", "fio cpu/GiB");
            for (Workload w : workloads) {
                Map<String, List<Run>> m = results.get(w.name());
                String unit = w.bs().equals("4k") ? "IOPS" : "MiB/s";
                Map<String, Double> rate = new LinkedHashMap<>();
                for (String s : servers.keySet()) {
                    List<Run> runs = m.get(s);
                    rate.put(s, median(runs, Run::value));
                    System.out.printf(Locale.ROOT, "%-18s %-17s %12.0f %6s %16.2f s %16.2f s%n", w.name(), s, rate.get(s), unit,
                            median(runs, Run::serverCpuPerGib), median(runs, Run::clientCpuPerGib));
                }
                if (rate.size() == 4) {
                    System.out.printf(Locale.ROOT, "%-18s weir tls/plain %.3f, weir tls/nbdkit tls %.3f, nbdkit tls/plain %.3f%n",
                            w.name(), rate.get("weir tls") / rate.get("weir plaintext"), rate.get("weir tls") / rate.get("nbdkit tls"),
                            rate.get("nbdkit tls") / rate.get("nbdkit plaintext"));
                }
            }
            System.out.printf(Locale.ROOT, "# load average after: %s%n", Files.readString(Path.of("/proc/loadavg")).strip());
        } finally {
            for (Process p : new Process[] {nbdkit, nbdkitPlain}) {
                if (p != null) {
                    p.destroy();
                    p.waitFor(10, TimeUnit.SECONDS);
                }
            }
            if (node != null) {
                node.close();
            }
            try (var files = Files.walk(work)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** A server under test: its URI, and its process's CPU time so far in ns. */
    record Server(String uri, java.util.function.LongSupplier cpuNanos) {
    }

    /**
     * One fio run: IOPS (4 KiB) or MiB/s (others), and the CPU seconds the server's process and
     * fio spent per GiB moved.
     */
    record Run(double value, double serverCpuPerGib, double clientCpuPerGib) {
    }

    /** Runs fio with the command prefix {@code asUser} ({@link LibnbdHome#prefix}). */
    private static Run fio(List<String> asUser, Server server, Workload w, int seconds) throws Exception {
        List<String> cmd = new ArrayList<>(asUser);
        cmd.addAll(List.of("fio", "--name=bench", "--ioengine=nbd", "--uri=" + server.uri(),
                "--rw=" + w.rw(), "--bs=" + w.bs(), "--iodepth=" + w.depth(), "--runtime=" + seconds, "--time_based",
                "--size=" + size, "--output-format=json"));
        long cpuBefore = server.cpuNanos().getAsLong();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
        String out = new String(p.getInputStream().readAllBytes());
        String err = new String(p.getErrorStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IOException("fio against " + server.uri() + " failed: " + err + out);
        }
        double serverCpu = (server.cpuNanos().getAsLong() - cpuBefore) / 1e9;
        JsonNode job = JSON.readTree(out.substring(out.indexOf('{'))).get("jobs").get(0);
        JsonNode read = job.get("read");
        double gib = read.get("io_bytes").asDouble() / (1 << 30);
        // fio reports its CPU as percentages of one CPU over the job's run time (ms)
        double clientCpu = (job.get("usr_cpu").asDouble() + job.get("sys_cpu").asDouble()) / 100 * job.get("job_runtime").asDouble()
                / 1000;
        double value = w.bs().equals("4k") ? read.get("iops").asDouble() : read.get("bw_bytes").asDouble() / (1 << 20);
        return new Run(value, serverCpu / gib, clientCpu / gib);
    }

    private static Process startNbdkit(Path work, String log, int port, Path file, String... tls) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("nbdkit", "-f", "-i", "127.0.0.1", "-p", String.valueOf(port)));
        cmd.addAll(List.of(tls));
        cmd.addAll(List.of("file", "file=" + file));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(work.resolve(log).toFile()).start();
        awaitPort(port);
        return p;
    }

    /** The median of {@code f} over {@code runs}. */
    private static double median(List<Run> runs, java.util.function.ToDoubleFunction<Run> f) {
        double[] s = runs.stream().mapToDouble(f).sorted().toArray();
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static void fill(Path file) throws IOException {
        byte[] chunk = new byte[1 << 20];
        Random random = new Random(42);
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            for (long off = 0; off < size; off += chunk.length) {
                random.nextBytes(chunk);
                f.write(chunk);
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void awaitPort(int port) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
                return;
            } catch (IOException e) {
                Thread.sleep(50); // polling a port a child process opens; not synchronisation of our own threads
            }
        }
        throw new IllegalStateException("nbdkit did not listen on " + port);
    }
}
