package io.weir.controlplane.pki;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;
import org.junit.jupiter.api.Test;

/** The CA and PEM handling without Spring: generation, encrypted keys, requests, what a certificate says. */
class CertificateAuthorityTest {

    private static final Instant NOW = Instant.parse("2026-12-01T00:00:00Z");

    @Test
    void aGeneratedCaRoundTripsThroughPemWithAndWithoutAPassword() throws Exception {
        CertificateAuthority ca = CertificateAuthority.generate(NOW);
        assertThat(ca.certificate().getBasicConstraints()).isGreaterThanOrEqualTo(0);
        String plain = Pem.privateKey(ca.privateKey(), null);
        String encrypted = Pem.privateKey(ca.privateKey(), "s3cret".toCharArray());
        assertThat(plain).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(encrypted).startsWith("-----BEGIN ENCRYPTED PRIVATE KEY-----");
        X509Certificate cert = Pem.certificates(ca.certificatePem()).get(0);
        assertThat(new CertificateAuthority(cert, Pem.privateKey(plain, null)).certificatePem()).isEqualTo(ca.certificatePem());
        assertThat(new CertificateAuthority(cert, Pem.privateKey(encrypted, "s3cret".toCharArray())).certificatePem())
                .isEqualTo(ca.certificatePem());
        assertThatThrownBy(() -> Pem.privateKey(encrypted, null)).hasMessageContaining("encrypted");
        assertThatThrownBy(() -> Pem.privateKey(encrypted, "wrong".toCharArray())).isInstanceOf(IllegalArgumentException.class);
        // a key of another CA is refused
        CertificateAuthority other = CertificateAuthority.generate(NOW);
        assertThatThrownBy(() -> new CertificateAuthority(cert, other.privateKey())).hasMessageContaining("does not belong");
    }

    @Test
    void aRequestIsCertifiedForItsKeyAndTheNamesTheControlPlaneChose() throws Exception {
        CertificateAuthority ca = CertificateAuthority.generate(NOW);
        KeyPair pair = Pem.newKeyPair();
        String csr = Pem.write(new JcaPKCS10CertificationRequestBuilder(new X500Name("CN=controlplane"), pair.getPublic())
                .build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate())));
        UUID node = UUID.randomUUID();
        X509Certificate cert = ca.issueServer(node, "dn1", List.of("10.1.2.3", "dn1.example"), Pem.requestKey(csr), NOW,
                NOW.plusSeconds(3600));
        cert.verify(ca.certificate().getPublicKey());
        assertThat(cert.getPublicKey()).isEqualTo(pair.getPublic());
        assertThat(cert.getSubjectAlternativeNames()).containsExactly(List.of(6, "urn:weir:node:" + node),
                List.of(7, "10.1.2.3"), List.of(2, "dn1.example"));
        assertThat(cert.getExtendedKeyUsage()).as("serverAuth, and clientAuth for the replication channel")
                    .containsExactly("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2");
        assertThat(cert.getNotAfter().toInstant()).isEqualTo(NOW.plusSeconds(3600));
        assertThat(cert.getNotBefore().toInstant()).isEqualTo(NOW.minus(CertificateAuthority.BACKDATE));
    }

    @Test
    void aRequestSignedByAnotherKeyOrWithAWeakKeyIsRefused() throws Exception {
        KeyPair pair = Pem.newKeyPair();
        String forged = Pem.write(new JcaPKCS10CertificationRequestBuilder(new X500Name("CN=x"), pair.getPublic())
                .build(new JcaContentSignerBuilder("SHA256withECDSA").build(Pem.newKeyPair().getPrivate())));
        assertThatThrownBy(() -> Pem.requestKey(forged)).hasMessageContaining("signature");
        var g = java.security.KeyPairGenerator.getInstance("RSA");
        g.initialize(1024);
        KeyPair weak = g.generateKeyPair();
        String small = Pem.write(new JcaPKCS10CertificationRequestBuilder(new X500Name("CN=x"), weak.getPublic())
                .build(new JcaContentSignerBuilder("SHA256withRSA").build(weak.getPrivate())));
        assertThatThrownBy(() -> Pem.requestKey(small)).hasMessageContaining("2048");
        assertThatThrownBy(() -> Pem.requestKey("hello")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aCertificateNeverOutlivesItsCa() {
        CertificateAuthority ca = CertificateAuthority.generate(NOW);
        X509Certificate cert = ca.issueClient(UUID.randomUUID(), "c", Pem.newKeyPair().getPublic(), NOW,
                NOW.plus(CertificateAuthority.GENERATED_CA_LIFETIME).plusSeconds(86400));
        assertThat(cert.getNotAfter()).isEqualTo(ca.certificate().getNotAfter());
    }
}
