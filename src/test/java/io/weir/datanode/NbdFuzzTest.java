package io.weir.datanode;

import io.weir.support.TestConfigs;
import io.weir.support.TestPki;
import static io.weir.support.Bytes.MiB;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Random and mutated frames against the handshake and the request parser, from a seeded generator
 * (the seed is in every failure message): the server never hangs or crashes, never writes outside
 * the volume a connection opened, and every connection it accepted is closed in the end with no
 * thread left behind.
 */
class NbdFuzzTest {
    static final int CONNECTIONS = 400;

    @TempDir
    Path dir;

    /** A new connection, ready for a fuzzed stream. */
    @FunctionalInterface
    interface Connector {
        NbdTestClient connect() throws IOException;
    }

    /** A real client of an export. */
    @FunctionalInterface
    interface Opener {
        NbdTestClient open(String export) throws IOException;
    }

    @Test
    void randomAndMutatedFramesNeverHangCrashOrWriteOutsideTheVolume() throws Exception {
        try (DataNode node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .writeStallTimeout(Duration.ofSeconds(2)).build()) {
            node.apply(config().tenant("t").volume("t", "fuzz", 4 * MiB).volume("t", "bystander", 4 * MiB).build());
            InetSocketAddress address = node.listenAddress();
            fuzz(node, CONNECTIONS, false, () -> new NbdTestClient(address),
                    export -> new NbdTestClient(address).open(export));
        }
    }

    /**
     * The same frames inside TLS, on a node that requires it: each connection negotiates
     * NBD_OPT_STARTTLS with a tenant's certificate, then sends its frames (without the client
     * flags, sent before) through the TLS session.
     */
    @Test
    void randomAndMutatedFramesInsideTlsNeverHangCrashOrWriteOutsideTheVolume() throws Exception {
        TestPki ca = TestPki.create("fuzz CA");
        TestPki.Issued server = ca.issue("node", 0x99);
        javax.net.ssl.SSLContext client = ca.clientContext(ca.issue("client", 0x10));
        try (DataNode node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .writeStallTimeout(Duration.ofSeconds(2)).tlsRequired(true).build()) {
            node.serverCertificate(new io.weir.agent.ServerCertificate(server.keys().getPrivate(), server.certificate(),
                    List.of(ca.certificate())));
            node.apply(config().tenant("t").volume("t", "fuzz", 4 * MiB).volume("t", "bystander", 4 * MiB)
                    .tls(new io.weir.protocol.TlsConfig(List.of(TestPki.pem(ca.certificate())),
                            List.of(new io.weir.protocol.ClientCertificateEntry("10", TestConfigs.id("tenant:t"),
                                    java.time.Instant.now().plusSeconds(86_400))), List.of()))
                    .build());
            InetSocketAddress address = node.listenAddress();
            Connector overTls = () -> {
                NbdTestClient c = new NbdTestClient(address).handshake();
                if (c.startTls(client).type() != Nbd.REP_ACK) {
                    c.close();
                    throw new IOException("STARTTLS refused");
                }
                return c;
            };
            fuzz(node, CONNECTIONS / 4, true, overTls, export -> overTls.connect().negotiate(export));
        }
    }

    /**
     * Sends random frames on {@code connections} connections {@code connect} made (in clear from
     * the first byte, or through STARTTLS: frames then go without the client flags, sent before),
     * then checks that nothing hung, the bystander volume and the directory are untouched, every
     * connection is closed with no thread left behind, and a client {@code open} makes is served.
     */
    private void fuzz(DataNode node, int connections, boolean tls, Connector connect, Opener open) throws Exception {
        try (NbdTestClient c = open.open("t/bystander")) {
            c.write(0, NbdServerTest.bytes((int) MiB, 77));
            c.flush();
        }
        open.open("t/fuzz").close(); // its files exist before the listing
        Path bystander = dir.resolve(TestConfigs.volumeId("t", "bystander") + ".img");
        String before = sha256(bystander);
        Set<String> files = listing();
        Set<String> threadsBefore = weirThreads();

        long seed = Long.getLong("fuzz.seed", System.nanoTime());
        Random random = new Random(seed);
        for (int i = 0; i < connections; i++) {
            byte[] frames = frames(random);
            if (tls) {
                frames = java.util.Arrays.copyOfRange(frames, Math.min(4, frames.length), frames.length);
            }
            boolean halfClose = !tls && random.nextBoolean(); // no half-close through a TLS session
            try (Socket s = connect.connect().socket) {
                s.setSoTimeout(15_000);
                try {
                    s.getOutputStream().write(frames);
                    s.getOutputStream().flush();
                    if (halfClose) {
                        s.shutdownOutput();
                        drainUntilClosed(s.getInputStream(), seed, i);
                    }
                } catch (IOException e) {
                    // the server may close first (bad magic, unknown flags): that is allowed
                    if (e instanceof SocketTimeoutException) {
                        throw new AssertionError("server hung on connection " + i + " (seed " + seed + ")", e);
                    }
                }
            }
        }
        await().atMost(Duration.ofSeconds(30)).alias("connections closed (seed " + seed + ")")
                .until(() -> node.connectionCount() == 0);
        assertThat(sha256(bystander)).as("bystander volume untouched (seed %d)", seed).isEqualTo(before);
        assertThat(listing()).as("no new files (seed %d)", seed).isEqualTo(files);
        for (String f : files) {
            if (f.endsWith(".img")) {
                assertThat(Files.size(dir.resolve(f))).as("%s keeps its size (seed %d)", f, seed).isEqualTo(4 * MiB);
            }
        }
        await().atMost(Duration.ofSeconds(10)).alias("no thread left behind (seed " + seed + ")")
                .until(() -> weirThreads().equals(threadsBefore));
        // and it still serves
        try (NbdTestClient c = open.open("t/fuzz")) {
            c.write(MiB, NbdServerTest.bytes(4096, 5));
            assertThat(c.read(MiB, 4096)).isEqualTo(NbdServerTest.bytes(4096, 5));
        }
    }

    private static void drainUntilClosed(InputStream in, long seed, int i) throws IOException {
        byte[] buf = new byte[1 << 16];
        try {
            while (in.read(buf) >= 0) {
                // discard replies
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("server did not close connection " + i + " after the client's EOF (seed " + seed + ")", e);
        } catch (IOException e) {
            // reset by the server: closed
        }
    }

    /** One connection's worth of input: garbage, a mutated handshake, or a valid handshake then mutated requests. */
    static byte[] frames(Random r) throws IOException {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        DataOutputStream d = new DataOutputStream(bo);
        switch (r.nextInt(4)) {
            case 0 -> {
                byte[] junk = new byte[r.nextInt(200)];
                r.nextBytes(junk);
                d.write(junk);
            }
            case 1 -> {
                d.writeInt(r.nextInt(4) == 0 ? r.nextInt() : 3);
                for (int k = r.nextInt(6); k > 0; k--) {
                    option(d, r);
                }
            }
            default -> {
                d.writeInt(3);
                if (r.nextBoolean()) {
                    raw(d, Nbd.OPT_STRUCTURED_REPLY, new byte[0]);
                    raw(d, Nbd.OPT_SET_META_CONTEXT, NbdTestClient.metaData("t/fuzz", "base:allocation"));
                }
                if (r.nextInt(5) == 0) {
                    raw(d, Nbd.OPT_EXPORT_NAME, "t/fuzz".getBytes(StandardCharsets.UTF_8));
                } else {
                    raw(d, Nbd.OPT_GO, NbdTestClient.goData("t/fuzz"));
                }
                for (int k = r.nextInt(30); k > 0; k--) {
                    request(d, r);
                }
            }
        }
        d.flush();
        byte[] b = bo.toByteArray();
        // mutate: flip a few bits, and sometimes cut the stream short
        for (int k = r.nextInt(3); k > 0 && b.length > 0; k--) {
            b[r.nextInt(b.length)] ^= (byte) (1 << r.nextInt(8));
        }
        if (b.length > 0 && r.nextInt(4) == 0) {
            b = java.util.Arrays.copyOf(b, r.nextInt(b.length));
        }
        return b;
    }

    private static void option(DataOutputStream d, Random r) throws IOException {
        int opt = r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(12);
        byte[] data = switch (r.nextInt(4)) {
            case 0 -> NbdTestClient.goData(r.nextBoolean() ? "t/fuzz" : "x", r.nextInt(5), r.nextInt(5));
            case 1 -> NbdTestClient.metaData("t/fuzz", "base:allocation", "base:", "x-y:z");
            default -> {
                byte[] x = new byte[r.nextInt(64)];
                r.nextBytes(x);
                yield x;
            }
        };
        d.writeLong(Nbd.IHAVEOPT);
        d.writeInt(opt);
        // a lying length now and then
        d.writeInt(r.nextInt(8) == 0 ? r.nextInt(1 << 20) : data.length);
        d.write(data);
    }

    private static void raw(DataOutputStream d, int opt, byte[] data) throws IOException {
        d.writeLong(Nbd.IHAVEOPT);
        d.writeInt(opt);
        d.writeInt(data.length);
        d.write(data);
    }

    private static void request(DataOutputStream d, Random r) throws IOException {
        int type = r.nextInt(6) == 0 ? r.nextInt(1 << 16) : r.nextInt(9);
        int flags = r.nextInt(4) == 0 ? r.nextInt(1 << 16) : r.nextInt(2);
        long offset = switch (r.nextInt(4)) {
            case 0 -> r.nextLong();
            case 1 -> 4 * MiB - r.nextInt(8192);
            default -> r.nextInt((int) (4 * MiB));
        };
        long length = switch (r.nextInt(5)) {
            case 0 -> Integer.toUnsignedLong(r.nextInt());
            case 1 -> 0;
            default -> r.nextInt(65536);
        };
        d.writeInt(r.nextInt(50) == 0 ? r.nextInt() : Nbd.REQUEST_MAGIC);
        d.writeShort(flags);
        d.writeShort(type);
        d.writeLong(r.nextLong());
        d.writeLong(offset);
        d.writeInt((int) length);
        if (type == Nbd.CMD_WRITE) {
            int send = (int) Math.min(length, r.nextInt(4) == 0 ? r.nextInt(65536) : 65536);
            byte[] p = new byte[send];
            r.nextBytes(p);
            d.write(p);
        }
    }

    private Set<String> listing() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
        }
    }

    private static Set<String> weirThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("weir-")).collect(Collectors.toSet());
    }

    private static String sha256(Path p) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        md.update(Files.readAllBytes(p));
        return HexFormat.of().formatHex(md.digest());
    }

}
