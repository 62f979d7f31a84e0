package io.weir.support;

import java.io.StringWriter;
import java.math.BigInteger;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority for tests (EC P-256, BouncyCastle): it issues certificates of chosen
 * serials and validity, and makes the JDK's TLS contexts of a key pair it signed.
 */
public final class TestPki {

    /** A key pair and its certificate. */
    public record Issued(KeyPair keys, X509Certificate certificate) {
        public String certificatePem() {
            return pem(certificate);
        }

        /** The key as PKCS#8 PEM ({@code PRIVATE KEY}), as the control plane hands out tenants' keys. */
        public String privateKeyPem() {
            try {
                return pem(new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(keys.getPrivate(), null));
            } catch (org.bouncycastle.util.io.pem.PemGenerationException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private final Issued ca;

    private TestPki(Issued ca) {
        this.ca = ca;
    }

    /** A new CA named {@code name}, valid from an hour ago for ten years. */
    public static TestPki create(String name) {
        KeyPair keys = ec();
        X500Name subject = new X500Name("CN=" + name);
        Instant now = Instant.now();
        var b = new JcaX509v3CertificateBuilder(subject, BigInteger.ONE, Date.from(now.minusSeconds(3600)),
                Date.from(now.plus(Duration.ofDays(3650))), subject, keys.getPublic());
        try {
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            return new TestPki(new Issued(keys, certificate(b, keys)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The CA's own certificate. */
    public X509Certificate certificate() {
        return ca.certificate();
    }

    /** A certificate for a new key, named {@code cn}, of serial {@code serial}, valid from an hour ago for a day. */
    public Issued issue(String cn, long serial) {
        return issue(cn, serial, Instant.now().minusSeconds(3600), Duration.ofDays(1));
    }

    /** A server certificate for a new key whose subject alternative name is the IP address {@code ip}. */
    public Issued issueServer(String cn, long serial, String ip) {
        return issue(cn, serial, Instant.now().minusSeconds(3600), Duration.ofDays(1), ip);
    }

    /** A certificate for a new key, valid from {@code from} for {@code lifetime}. */
    public Issued issue(String cn, long serial, Instant from, Duration lifetime) {
        return issue(cn, serial, from, lifetime, null);
    }

    /** A data node's certificate: it names the node by the URI SAN {@code urn:weir:node:<id>}, as the control plane's do. */
    public Issued issueNode(java.util.UUID node, long serial) {
        return issue("node", serial, Instant.now().minusSeconds(3600), Duration.ofDays(1), null,
                new org.bouncycastle.asn1.x509.GeneralName(org.bouncycastle.asn1.x509.GeneralName.uniformResourceIdentifier,
                        "urn:weir:node:" + node));
    }

    private Issued issue(String cn, long serial, Instant from, Duration lifetime, String ip) {
        return issue(cn, serial, from, lifetime, ip, null);
    }

    private Issued issue(String cn, long serial, Instant from, Duration lifetime, String ip,
            org.bouncycastle.asn1.x509.GeneralName name) {
        KeyPair keys = ec();
        var b = new JcaX509v3CertificateBuilder(new X500Name(ca.certificate().getSubjectX500Principal().getName()),
                BigInteger.valueOf(serial), Date.from(from), Date.from(from.plus(lifetime)), new X500Name("CN=" + cn),
                keys.getPublic());
        try {
            if (ip != null) {
                b.addExtension(Extension.subjectAlternativeName, false, new org.bouncycastle.asn1.x509.GeneralNames(
                        new org.bouncycastle.asn1.x509.GeneralName(org.bouncycastle.asn1.x509.GeneralName.iPAddress, ip)));
            } else if (name != null) {
                b.addExtension(Extension.subjectAlternativeName, false, new org.bouncycastle.asn1.x509.GeneralNames(name));
            }
            return new Issued(keys, certificate(b, ca.keys()));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A client context presenting {@code identity} and trusting this CA. */
    public SSLContext clientContext(Issued identity) {
        return clientContext(identity.keys().getPrivate(), identity.certificate(), ca.certificate());
    }

    /**
     * A client context from PEM text as the control plane's API hands it out (a client
     * certificate's {@code privateKeyPem}, {@code certificatePem} and {@code caCertificatePem}).
     */
    public static SSLContext clientContext(String keyPem, String certificatePem, String caPem) {
        try {
            java.security.PrivateKey key = new org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter()
                    .getPrivateKey(org.bouncycastle.asn1.pkcs.PrivateKeyInfo.getInstance(read(keyPem)));
            return clientContext(key, x509(certificatePem), x509(caPem));
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Object read(String pem) throws java.io.IOException {
        try (org.bouncycastle.openssl.PEMParser p = new org.bouncycastle.openssl.PEMParser(new java.io.StringReader(pem))) {
            Object o = p.readObject();
            return o instanceof org.bouncycastle.openssl.PEMKeyPair pair ? pair.getPrivateKeyInfo() : o;
        }
    }

    private static X509Certificate x509(String pem) {
        try {
            return (X509Certificate) java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(new java.io.ByteArrayInputStream(pem.getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
        } catch (java.security.cert.CertificateException e) {
            throw new IllegalStateException(e);
        }
    }

    private static SSLContext clientContext(java.security.PrivateKey key, X509Certificate certificate, X509Certificate ca) {
        try {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            keys.setKeyEntry("me", key, new char[0], new X509Certificate[] {certificate}); // the node has the CA
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, new char[0]);
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", ca);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext c = SSLContext.getInstance("TLS");
            c.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
            return c;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** PEM text of a certificate or key. */
    public static String pem(Object o) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(o);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
        return out.toString();
    }

    private static X509Certificate certificate(JcaX509v3CertificateBuilder b, KeyPair signer) throws Exception {
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
    }

    private static KeyPair ec() {
        try {
            // BouncyCastle's keys carry their public key in PKCS#8, which GnuTLS (libnbd) requires
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC", new org.bouncycastle.jce.provider.BouncyCastleProvider());
            g.initialize(new ECGenParameterSpec("secp256r1"));
            return g.generateKeyPair();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
