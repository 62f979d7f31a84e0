package io.weir.datanode;

import io.weir.agent.ServerCertificate;
import io.weir.protocol.ClientCertificateEntry;
import io.weir.protocol.TlsConfig;
import io.weir.support.TestConfigs;
import io.weir.support.TestPki;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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
 * certificates), and against nbdkit's file plugin with {@code --tls=require --tls-verify-peer},
 * serving the same kind of 1 GiB file of random data, in one run, alternating server by server
 * each round. Workloads: 4 KiB random reads at iodepth 32, and 1 MiB sequential reads at
 * iodepth 8. fio reads its certificates from {@code $HOME/.pki/libnbd} (its nbd engine takes no
 * path), so it runs as {@code nobody} with a home of its own when this runs as root. Prints each
 * server's median over the rounds, and the ratios TLS / plaintext and Weir TLS / nbdkit TLS; the
 * targets are 0.9 and 0.5 of plaintext at 4 KiB and 1 MiB, and at least nbdkit's.
 *
 * <pre>
 * mvn -o -q -Pbench test-compile exec:exec -Dbench.main=io.weir.datanode.NbdTlsBenchmark \
 *     -Djmh.args="--rounds 3 --seconds 10 --workers 2"
 * </pre>
 * {@code --size-mib} sets the size of the backing files (default 1024).
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
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
                case "--workers" -> workers = Integer.parseInt(args[i + 1]);
                case "--size-mib" -> size = Long.parseLong(args[i + 1]) << 20;
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Path work = Files.createTempDirectory("weir-tls-bench");
        Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwx--x--x"));
        Process nbdkit = null;
        DataNode node = null;
        try {
            TestPki ca = TestPki.create("weir bench CA");
            TestPki.Issued server = ca.issueServer("node", 0x99, "127.0.0.1");
            TestPki.Issued client = ca.issue("client", 0x10);
            // the client's libnbd directory, in a home of its own
            Path home = Files.createDirectories(work.resolve("home"));
            Path libnbd = Files.createDirectories(home.resolve(".pki/libnbd"));
            Files.writeString(libnbd.resolve("ca-cert.pem"), TestPki.pem(ca.certificate()));
            Files.writeString(libnbd.resolve("client-cert.pem"), client.certificatePem());
            Files.writeString(libnbd.resolve("client-key.pem"), client.privateKeyPem());
            boolean root = "root".equals(System.getProperty("user.name"));
            if (root) {
                var nobody = work.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
                try (var files = Files.walk(home)) {
                    for (Path p : files.toList()) {
                        Files.setOwner(p, nobody);
                    }
                }
            }
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
            nbdkit = new ProcessBuilder("nbdkit", "-f", "-i", "127.0.0.1", "-p", String.valueOf(kitPort), "--tls=require",
                    "--tls-certificates=" + kitPki, "--tls-verify-peer", "file", "file=" + kitFile)
                    .redirectErrorStream(true).redirectOutput(work.resolve("nbdkit.log").toFile()).start();
            awaitPort(kitPort);

            Map<String, String> servers = new LinkedHashMap<>();
            servers.put("weir plaintext", "nbd://127.0.0.1:" + weirPort + "/bench/vol");
            servers.put("weir tls", "nbds://127.0.0.1:" + weirPort + "/bench/vol");
            servers.put("nbdkit tls", "nbds://127.0.0.1:" + kitPort + "/");
            System.out.printf(Locale.ROOT, "# %d rounds x %d s, %d workers, load average before: %s%n", rounds, seconds,
                    workers, Files.readString(Path.of("/proc/loadavg")).strip());
            Map<String, Map<String, List<Double>>> results = new LinkedHashMap<>();
            List<String> order = new ArrayList<>(servers.keySet());
            for (int r = 0; r < rounds; r++) {
                for (Workload w : WORKLOADS) {
                    for (String s : order) {
                        double v = fio(home, root, servers.get(s), w, seconds);
                        results.computeIfAbsent(w.name(), k -> new LinkedHashMap<>()).computeIfAbsent(s, k -> new ArrayList<>())
                                .add(v);
                    }
                }
                java.util.Collections.rotate(order, 1); // alternate which server goes first
            }
            System.out.printf(Locale.ROOT, "%-18s %16s %16s %16s %12s %14s%n", "workload", "weir plaintext", "weir tls",
                    "nbdkit tls", "tls/plain", "weir/nbdkit");
            for (Workload w : WORKLOADS) {
                Map<String, List<Double>> m = results.get(w.name());
                double plain = median(m.get("weir plaintext"));
                double tls = median(m.get("weir tls"));
                double kit = median(m.get("nbdkit tls"));
                String unit = w.bs().equals("4k") ? "IOPS" : "MiB/s";
                System.out.printf(Locale.ROOT, "%-18s %11.0f %s %11.0f %s %11.0f %s %12.3f %14.3f%n", w.name(), plain, unit,
                        tls, unit, kit, unit, tls / plain, tls / kit);
            }
            System.out.printf(Locale.ROOT, "# load average after: %s%n", Files.readString(Path.of("/proc/loadavg")).strip());
        } finally {
            if (nbdkit != null) {
                nbdkit.destroy();
                nbdkit.waitFor(10, TimeUnit.SECONDS);
            }
            if (node != null) {
                node.close();
            }
            try (var files = Files.walk(work)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** IOPS (4 KiB) or MiB/s (others) of one fio run. */
    private static double fio(Path home, boolean root, String uri, Workload w, int seconds) throws Exception {
        List<String> cmd = new ArrayList<>();
        if (root) {
            cmd.addAll(List.of("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"));
        }
        cmd.addAll(List.of("env", "HOME=" + home, "fio", "--name=bench", "--ioengine=nbd", "--uri=" + uri,
                "--rw=" + w.rw(), "--bs=" + w.bs(), "--iodepth=" + w.depth(), "--runtime=" + seconds, "--time_based",
                "--size=" + size, "--output-format=json"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
        String out = new String(p.getInputStream().readAllBytes());
        String err = new String(p.getErrorStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IOException("fio against " + uri + " failed: " + err + out);
        }
        JsonNode read = JSON.readTree(out.substring(out.indexOf('{'))).get("jobs").get(0).get("read");
        return w.bs().equals("4k") ? read.get("iops").asDouble() : read.get("bw_bytes").asDouble() / (1 << 20);
    }

    private static double median(List<Double> v) {
        List<Double> s = v.stream().sorted().toList();
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
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
