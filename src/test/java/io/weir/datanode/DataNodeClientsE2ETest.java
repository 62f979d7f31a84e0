package io.weir.datanode;

import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.scheduler.Stats;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real, unmodified NBD clients against a data node on 127.0.0.1: nbdinfo, nbdcopy, nbdsh
 * (libnbd), qemu-img, qemu-io and fio. Data round-trips with checksums, holes are mapped, sparse
 * copies skip holes, and concurrent requests get their replies out of order.
 */
@Tag("e2e")
class DataNodeClientsE2ETest {

    @TempDir
    Path dir;
    DataNode node;
    String base;

    @BeforeEach
    void start() throws Exception {
        node = DataNode.builder().dataDir(dir.resolve("data")).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2).build();
        node.apply(config().tenant("acme").volume("acme", "db1", 64 * MiB).volume("acme", "db2", 64 * MiB)
                .volume("acme", "scratch", 64 * MiB).build());
        base = "nbd://127.0.0.1:" + node.listenAddress().getPort() + "/";
    }

    @AfterEach
    void stop() {
        node.close();
    }

    @Test
    void nbdinfoListsTheExportsAndShowsSizeAndCapabilities() throws Exception {
        String list = Programs.ok(30, "nbdinfo", "--list", base);
        assertThat(list).contains("export=\"acme/db1\"", "export=\"acme/db2\"", "export=\"acme/scratch\"");
        String info = Programs.ok(30, "nbdinfo", "--json", base + "acme/db1");
        assertThat(info).contains("\"export-size\": 67108864", "\"can_multi_conn\": true", "\"can_trim\": true",
                "\"can_zero\": true", "\"can_fua\": true", "\"can_cache\": true", "base:allocation");
        Programs.Result unknown = Programs.run(30, "nbdinfo", base + "acme/nope");
        assertThat(unknown.exitCode()).isNotZero();
        // libnbd reports NBD_REP_ERR_UNKNOWN as ENOENT (the server's message is checked in NbdServerTest)
        assertThat(unknown.output()).contains("No such file or directory for export: acme/nope");
    }

    @Test
    void qemuIoWritesAndReadsBackPatternsAndQemuImgAndNbdinfoMapTheHoles() throws Exception {
        String url = base + "acme/db1";
        Programs.ok(60, "qemu-io", "-f", "raw", "-c", "write -P 0xab 1M 2M", "-c", "write -P 0xcd 10M 64k", "-c", "flush", url);
        String verify = Programs.ok(60, "qemu-io", "-f", "raw", "-c", "read -P 0xab 1M 2M", "-c", "read -P 0xcd 10M 64k",
                "-c", "read -P 0 0 1M", url);
        assertThat(verify).doesNotContain("Pattern verification failed");
        assertThat(Programs.ok(30, "qemu-img", "info", "-f", "raw", url)).contains("virtual size: 64 MiB");
        String map = Programs.ok(30, "qemu-img", "map", "-f", "raw", "--output=json", url);
        assertThat(map).contains("{ \"start\": 0, \"length\": 1048576, \"depth\": 0, \"present\": true, \"zero\": true, \"data\": false")
                .contains("{ \"start\": 1048576, \"length\": 2097152, \"depth\": 0, \"present\": true, \"zero\": false, \"data\": true")
                .contains("{ \"start\": 10485760, \"length\": 65536, \"depth\": 0, \"present\": true, \"zero\": false, \"data\": true");
        String nbdmap = Programs.ok(30, "nbdinfo", "--map", url);
        assertThat(nbdmap.lines().map(String::trim).map(l -> l.replaceAll("\\s+", " ")))
                .contains("0 1048576 3 hole,zero", "1048576 2097152 0 data", "3145728 7340032 3 hole,zero",
                        "10485760 65536 0 data", "10551296 56557568 3 hole,zero");
    }

    @Test
    void nbdcopyAndQemuImgConvertCopyASparseVolumeAndSkipItsHoles() throws Exception {
        // a 64 MiB sparse source with 3 MiB of data in three places
        Path src = dir.resolve("src.img");
        try (RandomAccessFile f = new RandomAccessFile(src.toFile(), "rw")) {
            f.setLength(64 * MiB);
            for (long at : new long[] {0, 20 * MiB, 63 * MiB}) {
                f.seek(at);
                f.write(NbdServerTest.bytes((int) MiB, (int) (at / MiB)));
            }
        }
        String url = base + "acme/db2";
        Stats before = stats("acme/db2");
        Programs.ok(120, "nbdcopy", src.toString(), url);
        Stats afterIn = stats("acme/db2");
        assertThat(afterIn.writeBytes() - before.writeBytes()).as("only the data is written").isLessThanOrEqualTo(4 * MiB);
        assertThat(Programs.ok(30, "nbdinfo", "--map", "--totals", url).replaceAll("\\s+", " ")).contains("3145728 4.7% 0 data");

        Path back = dir.resolve("back.img");
        Programs.ok(120, "nbdcopy", url, back.toString());
        Stats afterOut = stats("acme/db2");
        assertThat(afterOut.readBytes() - afterIn.readBytes()).as("holes are not read").isLessThanOrEqualTo(4 * MiB);
        assertThat(sha256(back)).isEqualTo(sha256(src));

        Path converted = dir.resolve("converted.qcow2");
        Programs.ok(120, "qemu-img", "convert", "-f", "raw", "-O", "qcow2", url, converted.toString());
        Stats afterConvert = stats("acme/db2");
        assertThat(afterConvert.readBytes() - afterOut.readBytes()).as("qemu-img convert skips holes").isLessThanOrEqualTo(4 * MiB);
        assertThat(Programs.ok(60, "qemu-img", "compare", "-f", "raw", "-F", "qcow2", url, converted.toString()))
                .contains("Images are identical");
        assertThat(Programs.ok(60, "qemu-img", "compare", "-f", "raw", "-F", "raw", src.toString(), url))
                .contains("Images are identical");
    }

    @Test
    void nbdshSeesRepliesOutOfOrderAndManyConcurrentRequestsRoundTrip() throws Exception {
        String url = base + "acme/scratch";
        String script = String.join("\n",
                "import os, sys",
                "h.connect_uri('" + url + "')",
                "w = h.aio_pwrite(b'\\x01' * 4096, 0)",
                "h.poll(0)",
                "sys.stdin.readline()  # the test says when the write is held on its worker",
                "r = h.aio_pread(nbd.Buffer(4096), 1048576)",
                "while not h.aio_command_completed(r):",
                "    h.poll(-1)",
                "print('read done, write done:', h.aio_command_completed(w), flush=True)",
                "while not h.aio_command_completed(w):",
                "    h.poll(-1)",
                "blocks = [os.urandom(65536) for i in range(64)]",
                "cs = [h.aio_pwrite(blocks[i], i * 65536 + 2097152) for i in range(64)]",
                "while h.aio_in_flight() > 0:",
                "    h.poll(-1)",
                "bufs = [nbd.Buffer(65536) for i in range(64)]",
                "cs = [h.aio_pread(bufs[i], i * 65536 + 2097152) for i in range(64)]",
                "while h.aio_in_flight() > 0:",
                "    h.poll(-1)",
                "ok = all(bufs[i].to_bytearray() == blocks[i] for i in range(64))",
                "print('roundtrip ok:', ok, flush=True)",
                "h.shutdown()");
        VolumeStore v = node.volume("acme/scratch");
        v.lockAll(); // holds the write back on its worker: the read must overtake it
        ProcessBuilder pb = new ProcessBuilder("nbdsh", "-c", script).redirectErrorStream(true);
        // nbdsh runs "python3" from PATH; the libnbd module is installed for the system's
        pb.environment().put("PATH", "/usr/bin:" + pb.environment().getOrDefault("PATH", ""));
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String first;
        try {
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(v::writersWaiting);
            p.getOutputStream().write('\n');
            p.getOutputStream().flush();
            first = out.readLine();
        } finally {
            v.unlockAll();
        }
        assertThat(first).isEqualTo("read done, write done: False");
        assertThat(out.readLine()).isEqualTo("roundtrip ok: True");
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
    }

    @Test
    void nbdshReadsAndWritesTheAdvertisedMaximumBlockSizeInOneRequest() throws Exception {
        String script = String.join("\n",
                "h.connect_uri('" + base + "acme/db1')",
                "m = h.get_block_size(nbd.SIZE_MAXIMUM)",
                "print('maximum block size', m, flush=True)",
                "data = bytes(range(256)) * (m // 256)",
                "h.pwrite(data, 4096)",
                "print('read back equal:', h.pread(m, 4096) == data, flush=True)",
                "h.shutdown()");
        ProcessBuilder pb = new ProcessBuilder("nbdsh", "-c", script).redirectErrorStream(true);
        // nbdsh runs "python3" from PATH; the libnbd module is installed for the system's
        pb.environment().put("PATH", "/usr/bin:" + pb.environment().getOrDefault("PATH", ""));
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(out).contains("maximum block size " + NbdConnection.MAX_PAYLOAD, "read back equal: True");
        assertThat(p.exitValue()).as(out).isZero();
    }

    @Test
    void fioWritesAndVerifiesWithChecksumsAtQueueDepth32() throws Exception {
        String out = Programs.ok(180, "fio", "--name=roundtrip", "--ioengine=nbd", "--uri=" + base + "acme/scratch",
                "--rw=randwrite", "--bs=4k", "--iodepth=32", "--size=16m", "--verify=crc32c", "--do_verify=1",
                "--verify_fatal=1", "--verify_state_save=0");
        assertThat(out).contains("err= 0").doesNotContain("verify failed").doesNotContain("bad magic");
    }

    private Stats stats(String export) {
        return node.executor().snapshot().volumes().get(node.volume(export).id);
    }

    private static String sha256(Path p) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        try (var in = Files.newInputStream(p)) {
            byte[] buf = new byte[1 << 20];
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }
}
