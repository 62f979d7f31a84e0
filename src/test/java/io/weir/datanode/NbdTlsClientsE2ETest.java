package io.weir.datanode;

import static io.weir.support.Bytes.MiB;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.agent.ServerCertificate;
import io.weir.protocol.ClientCertificateEntry;
import io.weir.protocol.TlsConfig;
import io.weir.support.TestConfigs;
import io.weir.support.LibnbdHome;
import io.weir.support.TestPki;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real NBD clients over TLS (issue 19): libnbd's {@code nbdinfo} and {@code nbdcopy} with
 * {@code nbds://...?tls-certificates=DIR}, and {@code qemu-img} with a {@code tls-creds-x509}
 * object of the same directory (which holds {@code ca-cert.pem},
 * {@code client-cert.pem} and {@code client-key.pem}, as libnbd reads them; every run names one,
 * since libnbd without it would fall back to the system CAs). A data node on 127.0.0.1 with a
 * server certificate for that address from a test CA, as the control plane's CA would sign it.
 */
@Tag("e2e")
class NbdTlsClientsE2ETest {

    @TempDir
    Path dir;
    DataNode node;
    String base;
    TestPki ca = TestPki.create("weir test CA");

    @BeforeEach
    void start() throws Exception {
        node = DataNode.builder().dataDir(dir.resolve("data")).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .build();
        Instant later = Instant.now().plusSeconds(86_400);
        node.apply(TestConfigs.config().tenant("acme").tenant("other").volume("acme", "db", 8 * MiB)
                .volume("other", "secret", 8 * MiB)
                .tls(new TlsConfig(List.of(TestPki.pem(ca.certificate())),
                        List.of(new ClientCertificateEntry("10", TestConfigs.id("tenant:acme"), later)), List.of()))
                .build());
        TestPki.Issued server = ca.issueServer("node", 0x99, "127.0.0.1");
        node.serverCertificate(new ServerCertificate(server.keys().getPrivate(), server.certificate(),
                List.of(ca.certificate())));
        base = "nbds://127.0.0.1:" + node.listenAddress().getPort() + "/";
    }

    @AfterEach
    void stop() {
        node.close();
    }

    /** A libnbd certificate directory for a client certificate of {@code serial}. */
    private Path certificates(String name, TestPki issuer, long serial) throws Exception {
        Path d = Files.createDirectories(dir.resolve(name));
        TestPki.Issued client = issuer.issue("client", serial);
        Files.writeString(d.resolve("ca-cert.pem"), TestPki.pem(ca.certificate()));
        Files.writeString(d.resolve("client-cert.pem"), client.certificatePem());
        Files.writeString(d.resolve("client-key.pem"), client.privateKeyPem());
        return d;
    }

    @Test
    void nbdinfoListsOnlyItsTenantsExportsAndNbdcopyMovesDataOverTls() throws Exception {
        Path acme = certificates("acme", ca, 0x10);
        String list = Programs.ok(30, "nbdinfo", "--list", base + "?tls-certificates=" + acme);
        assertThat(list).contains("acme/db").doesNotContain("other/secret");

        Path image = dir.resolve("image");
        byte[] data = new byte[(int) (2 * MiB)];
        new java.util.Random(3).nextBytes(data);
        Files.write(image, data);
        Programs.ok(60, "nbdcopy", image.toString(), base + "acme/db?tls-certificates=" + acme);
        Path back = dir.resolve("back");
        Programs.ok(60, "nbdcopy", base + "acme/db?tls-certificates=" + acme, back.toString());
        assertThat(java.util.Arrays.copyOf(Files.readAllBytes(back), data.length)).isEqualTo(data);

        Programs.Result theirs = Programs.run(30, "nbdinfo", base + "other/secret?tls-certificates=" + acme);
        assertThat(theirs.exitCode()).as(theirs.output()).isNotZero();
    }

    @Test
    void qemuImgReadsItsTenantsExportWithTlsCredsX509() throws Exception {
        Path acme = certificates("acme", ca, 0x10);
        String port = String.valueOf(node.listenAddress().getPort());
        String info = Programs.ok(60, "qemu-img", "info", "--output=json", "--object",
                "tls-creds-x509,id=tls0,endpoint=client,dir=" + acme, "--image-opts",
                "driver=nbd,host=127.0.0.1,port=" + port + ",export=acme/db,tls-creds=tls0");
        assertThat(info).contains("\"virtual-size\": " + 8 * MiB);
        Programs.Result theirs = Programs.run(60, "qemu-img", "info", "--object",
                "tls-creds-x509,id=tls0,endpoint=client,dir=" + acme, "--image-opts",
                "driver=nbd,host=127.0.0.1,port=" + port + ",export=other/secret,tls-creds=tls0");
        assertThat(theirs.exitCode()).as(theirs.output()).isNotZero();
    }

    /** fio, as its users run it over TLS: as a user whose home holds the certificate ({@link LibnbdHome}). */
    @Test
    void fioDoesIoOverTlsWithTheCertificatesInItsHomeAsAUser() throws Exception {
        List<String> command = new java.util.ArrayList<>(LibnbdHome.prefix(dir.resolve("home"), certificates("acme", ca, 0x10)));
        command.addAll(List.of("fio", "--name=tls", "--ioengine=nbd", "--uri=" + base + "acme/db",
                "--rw=randrw", "--bs=4k", "--iodepth=8", "--size=4m", "--io_size=2m", "--output-format=terse"));
        String[] fields = Programs.ok(120, command.toArray(new String[0])).strip().split(";");
        assertThat(Long.parseLong(fields[5]) + Long.parseLong(fields[46])).as("KiB read and written over TLS")
                .isEqualTo(2048);
    }

    @Test
    void aCertificateOfAnotherCaIsRefused() throws Exception {
        TestPki stranger = TestPki.create("another CA");
        Path foreign = certificates("foreign", stranger, 0x10);
        Programs.Result refused = Programs.run(30, "nbdinfo", "--list", base + "?tls-certificates=" + foreign);
        assertThat(refused.exitCode()).as(refused.output()).isNotZero();
    }
}
