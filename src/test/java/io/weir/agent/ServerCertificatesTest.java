package io.weir.agent;

import io.weir.support.ManualClock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's side of the data node's server certificate, under a controlled clock: the request for
 * a key made here, the 2/3-of-lifetime renewal point, the files beside the state, and refusal of a
 * certificate that does not fit the pending key. The CA here is a test CA made with BouncyCastle;
 * the control plane's signing is tested end to end in {@link AgentTlsEndToEndTest}.
 */
class ServerCertificatesTest {

    private static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");

    @TempDir
    Path dir;

    /** A clock a test moves by hand. */

    record TestCa(KeyPair keys, String certificatePem) {
        static TestCa create() throws Exception {
            KeyPair keys = ec();
            X500Name name = new X500Name("CN=test CA");
            var b = new JcaX509v3CertificateBuilder(name, BigInteger.ONE, Date.from(T0.minusSeconds(3600)),
                    Date.from(T0.plus(Duration.ofDays(3650))), name, keys.getPublic());
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            return new TestCa(keys, pem(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate()))));
        }

        /** Signs the request's key for [from, from + lifetime]. */
        String sign(String csrPem, Instant from, Duration lifetime, long serial) throws Exception {
            PKCS10CertificationRequest csr;
            try (PEMParser p = new PEMParser(new StringReader(csrPem))) {
                csr = (PKCS10CertificationRequest) p.readObject();
            }
            var b = new JcaX509v3CertificateBuilder(new X500Name("CN=test CA"), BigInteger.valueOf(serial), Date.from(from),
                    Date.from(from.plus(lifetime)), new X500Name("CN=node"),
                    new JcaPEMKeyConverter().getPublicKey(csr.getSubjectPublicKeyInfo()));
            return pem(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
        }
    }

    static KeyPair ec() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    static String pem(Object o) throws Exception {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(o);
        }
        return out.toString();
    }

    @Test
    void aNodeWithoutACertificateAsksForOneAndKeepsItBesideTheState() throws Exception {
        ManualClock clock = new ManualClock(T0);
        TestCa ca = TestCa.create();
        ServerCertificates certs = ServerCertificates.open(dir, clock);
        assertThat(certs.current()).isNull();
        assertThat(certs.needsRequest()).isTrue();
        String csr = certs.newRequest();
        assertThat(csr).startsWith("-----BEGIN CERTIFICATE REQUEST-----");
        ServerCertificate cert = certs.accept(ca.sign(csr, T0, Duration.ofDays(30), 2), ca.certificatePem());
        assertThat(certs.current()).isSameAs(cert);
        assertThat(Files.getPosixFilePermissions(dir.resolve(ServerCertificates.KEY_FILE)))
                .isEqualTo(PosixFilePermissions.fromString("rw-------"));
        // a restarted agent starts from what is stored
        ServerCertificate reloaded = ServerCertificates.open(dir, clock).current();
        assertThat(reloaded.certificate()).isEqualTo(cert.certificate());
        assertThat(reloaded.privateKey().getEncoded()).isEqualTo(cert.privateKey().getEncoded());
    }

    @Test
    void renewalIsDueAtTwoThirdsOfTheLifetimeAndTheOldCertificateStaysUntilTheNewOneArrives() throws Exception {
        ManualClock clock = new ManualClock(T0);
        TestCa ca = TestCa.create();
        ServerCertificates certs = ServerCertificates.open(dir, clock);
        ServerCertificate first = certs.accept(ca.sign(certs.newRequest(), T0, Duration.ofDays(30), 2), ca.certificatePem());
        assertThat(first.renewAt()).isEqualTo(T0.plus(Duration.ofDays(20)));

        clock.set(T0.plus(Duration.ofDays(20)).minusSeconds(1));
        assertThat(certs.needsRequest()).isFalse();
        clock.set(T0.plus(Duration.ofDays(20)));
        assertThat(certs.needsRequest()).isTrue();

        String csr = certs.newRequest();
        assertThat(certs.pending()).isTrue();
        assertThat(certs.current()).as("in force until the new one arrives").isSameAs(first);
        ServerCertificate second = certs.accept(ca.sign(csr, clock.instant(), Duration.ofDays(30), 3), ca.certificatePem());
        assertThat(certs.current()).isSameAs(second);
        assertThat(second.privateKey()).as("a new key for each certificate").isNotEqualTo(first.privateKey());
        assertThat(certs.needsRequest()).isFalse();
        assertThat(ServerCertificates.open(dir, clock).current().certificate()).isEqualTo(second.certificate());
    }

    /**
     * A renewed certificate that cannot be stored (a full disk) is put in force all the same, and
     * the files keep the old, matching key and certificate: it was thrown away, a new one asked
     * for every ten minutes, and the old one expired while the control plane kept signing; a key
     * written before a certificate that was not left a pair that did not match.
     */
    @Test
    void aRenewedCertificateThatCannotBeStoredIsInForceAndTheFilesKeepTheOldPair() throws Exception {
        ManualClock clock = new ManualClock(T0);
        TestCa ca = TestCa.create();
        ServerCertificates certs = ServerCertificates.open(dir, clock);
        ServerCertificate first = certs.accept(ca.sign(certs.newRequest(), T0, Duration.ofDays(30), 2), ca.certificatePem());
        clock.set(T0.plus(Duration.ofDays(20)));
        String csr = certs.newRequest();
        // the certificate's file cannot be written: a directory that is not empty is in the way of its temporary file
        java.nio.file.Path inTheWay = dir.resolve(ServerCertificates.CERTIFICATE_FILE + ".tmp");
        java.nio.file.Files.createDirectories(inTheWay);
        java.nio.file.Files.writeString(inTheWay.resolve("x"), "x");

        ServerCertificate second = certs.accept(ca.sign(csr, clock.instant(), Duration.ofDays(30), 3), ca.certificatePem());

        assertThat(certs.current()).as("in force").isSameAs(second);
        ServerCertificate stored = ServerCertificates.open(dir, clock).current();
        assertThat(stored.certificate()).as("what a restart finds").isEqualTo(first.certificate());
        assertThat(stored.privateKey()).isEqualTo(first.privateKey());
    }

    @Test
    void aCertificateForAnotherKeyOrFromAnotherCaIsRefusedAndTheCurrentOneStays() throws Exception {
        ManualClock clock = new ManualClock(T0);
        TestCa ca = TestCa.create();
        ServerCertificates certs = ServerCertificates.open(dir, clock);
        ServerCertificate first = certs.accept(ca.sign(certs.newRequest(), T0, Duration.ofDays(30), 2), ca.certificatePem());

        // signed for someone else's key
        ServerCertificates other = ServerCertificates.open(dir.resolve("other"), clock);
        String foreign = ca.sign(other.newRequest(), T0, Duration.ofDays(30), 4);
        certs.newRequest();
        assertThatThrownBy(() -> certs.accept(foreign, ca.certificatePem())).hasMessageContaining("not for this node's key");
        // signed by another CA than the one sent with it
        TestCa stranger = TestCa.create();
        String csr = certs.newRequest();
        assertThatThrownBy(() -> certs.accept(stranger.sign(csr, T0, Duration.ofDays(30), 5), ca.certificatePem()))
                .hasMessageContaining("not signed by the CA");
        // nothing pending
        assertThatThrownBy(() -> certs.accept(foreign, ca.certificatePem())).hasMessageContaining("no certificate request");
        assertThat(certs.current()).isSameAs(first);
        assertThat(ServerCertificates.open(dir, clock).current().certificate()).isEqualTo(first.certificate());
    }

    @Test
    void aKeyThatDoesNotMatchTheStoredCertificateIsIgnoredAtStart() throws Exception {
        ManualClock clock = new ManualClock(T0);
        TestCa ca = TestCa.create();
        ServerCertificates certs = ServerCertificates.open(dir, clock);
        certs.accept(ca.sign(certs.newRequest(), T0, Duration.ofDays(30), 2), ca.certificatePem());
        // a crash between writing a new key and its certificate leaves a key that does not fit
        Files.writeString(dir.resolve(ServerCertificates.KEY_FILE), pem(new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(
                ec().getPrivate(), null)));
        ServerCertificates reopened = ServerCertificates.open(dir, clock);
        assertThat(reopened.current()).isNull();
        assertThat(reopened.needsRequest()).isTrue();
    }
}
