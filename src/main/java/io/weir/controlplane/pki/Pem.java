package io.weir.controlplane.pki;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.openssl.PEMException;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.openssl.jcajce.JceOpenSSLPKCS8DecryptorProviderBuilder;
import org.bouncycastle.openssl.jcajce.JceOpenSSLPKCS8EncryptorBuilder;
import org.bouncycastle.operator.InputDecryptorProvider;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentVerifierProviderBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;
import org.bouncycastle.pkcs.PKCSException;

/**
 * PEM in and out, through BouncyCastle's parser and writer: certificates, PKCS#8 private keys
 * (optionally encrypted, AES-256-CBC under PBKDF2), PKCS#1/SEC1 key pairs, and PKCS#10 requests.
 * No hand-written ASN.1.
 */
final class Pem {

    /**
     * BouncyCastle as a provider instance, never registered globally: for the PBE of encrypted keys,
     * and to make key pairs, whose PKCS#8 form then carries the public key (the JDK's leaves it out,
     * and GnuTLS, so libnbd and qemu, refuses such an EC key).
     */
    private static final BouncyCastleProvider BC = new BouncyCastleProvider();

    private Pem() {
    }

    /** A new EC P-256 key pair: what the CA and the keys it makes for tenants use. */
    static KeyPair newKeyPair() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC", BC);
            g.initialize(new ECGenParameterSpec("secp256r1"));
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every JDK has EC P-256", e);
        }
    }

    static String write(Object object) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(object);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /** The key as PKCS#8 PEM ({@code PRIVATE KEY}), or encrypted ({@code ENCRYPTED PRIVATE KEY}) when a password is given. */
    static String privateKey(PrivateKey key, char[] password) {
        try {
            if (password == null || password.length == 0) {
                return write(new JcaPKCS8Generator(key, null));
            }
            return write(new JcaPKCS8Generator(key, new JceOpenSSLPKCS8EncryptorBuilder(JcaPKCS8Generator.AES_256_CBC)
                    .setProvider(BC).setPassword(password).build()));
        } catch (OperatorCreationException | org.bouncycastle.util.io.pem.PemGenerationException e) {
            throw new IllegalStateException("cannot encode a private key: " + e.getMessage(), e);
        }
    }

    /** Every certificate in {@code pem}, in order. */
    static List<X509Certificate> certificates(String pem) {
        List<X509Certificate> found = new ArrayList<>();
        try (PEMParser p = new PEMParser(new StringReader(pem))) {
            for (Object o = p.readObject(); o != null; o = p.readObject()) {
                if (o instanceof X509CertificateHolder h) {
                    found.add(new JcaX509CertificateConverter().getCertificate(h));
                }
            }
        } catch (IOException | CertificateException e) {
            throw new IllegalArgumentException("not a PEM certificate: " + e.getMessage(), e);
        }
        if (found.isEmpty()) {
            throw new IllegalArgumentException("no PEM certificate (BEGIN CERTIFICATE) found");
        }
        return found;
    }

    /** The first private key in {@code pem}: PKCS#8 (encrypted if {@code password} is given), or a PKCS#1/SEC1 key pair. */
    static PrivateKey privateKey(String pem, char[] password) {
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        try (PEMParser p = new PEMParser(new StringReader(pem))) {
            for (Object o = p.readObject(); o != null; o = p.readObject()) {
                if (o instanceof PrivateKeyInfo info) {
                    return converter.getPrivateKey(info);
                }
                if (o instanceof PEMKeyPair pair) {
                    return converter.getKeyPair(pair).getPrivate();
                }
                if (o instanceof PKCS8EncryptedPrivateKeyInfo encrypted) {
                    if (password == null || password.length == 0) {
                        throw new IllegalArgumentException("the private key is encrypted and no password is set");
                    }
                    InputDecryptorProvider decryptor = new JceOpenSSLPKCS8DecryptorProviderBuilder().setProvider(BC)
                            .build(password);
                    return converter.getPrivateKey(encrypted.decryptPrivateKeyInfo(decryptor));
                }
            }
        } catch (IOException | OperatorCreationException | PKCSException e) {
            throw new IllegalArgumentException("cannot read the private key: " + e.getMessage(), e);
        }
        throw new IllegalArgumentException("no PEM private key found");
    }

    /**
     * The public key of a PKCS#10 request whose signature it verifies (proof that the requester
     * holds the private key); only the key is used, never the request's subject or extensions.
     * RSA of at least 2048 bits or EC P-256/P-384.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    static PublicKey requestKey(String pem) {
        Object o;
        try (PEMParser p = new PEMParser(new StringReader(pem))) {
            o = p.readObject();
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("not a PEM certificate signing request: " + e.getMessage(), e);
        }
        if (!(o instanceof PKCS10CertificationRequest csr)) {
            throw new IllegalArgumentException("not a PEM certificate signing request (BEGIN CERTIFICATE REQUEST)");
        }
        PublicKey key;
        try {
            key = new JcaPEMKeyConverter().getPublicKey(csr.getSubjectPublicKeyInfo());
            if (!csr.isSignatureValid(new JcaContentVerifierProviderBuilder().build(key))) {
                throw new IllegalArgumentException("the request's signature does not verify with its own key");
            }
        } catch (PEMException | OperatorCreationException | PKCSException | org.bouncycastle.operator.RuntimeOperatorException e) {
            // RuntimeOperatorException: a signature the JDK cannot even parse (not DER, a wrong length)
            throw new IllegalArgumentException("the request cannot be verified: " + e.getMessage(), e);
        }
        if (key instanceof RSAPublicKey rsa) {
            if (rsa.getModulus().bitLength() < 2048) {
                throw new IllegalArgumentException("an RSA key needs at least 2048 bits, not " + rsa.getModulus().bitLength());
            }
        } else if (key instanceof ECPublicKey ec) {
            int bits = ec.getParams().getCurve().getField().getFieldSize();
            if (bits != 256 && bits != 384) {
                throw new IllegalArgumentException("an EC key must be on P-256 or P-384, not a " + bits + "-bit curve");
            }
        } else {
            throw new IllegalArgumentException("the key must be RSA or EC, not " + key.getAlgorithm());
        }
        return key;
    }
}
