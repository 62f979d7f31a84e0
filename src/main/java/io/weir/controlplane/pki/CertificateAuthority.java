package io.weir.controlplane.pki;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The cluster CA: its certificate and private key, and the certificates it issues. Built with
 * BouncyCastle's certificate builder.
 *
 * <h2>What it issues</h2>
 * <ul>
 *   <li>Client certificates of tenants ({@link #issueClient}): subject {@code CN=<name>,
 *       OU=<tenant id>, O=weir-tenant}, one URI SAN {@value #TENANT_URI_PREFIX}{@code <tenant id>},
 *       extended key usage clientAuth.</li>
 *   <li>Server certificates of data nodes ({@link #issueServer}): subject {@code CN=<node name>,
 *       OU=<node id>, O=weir-node}, the URI SAN {@value #NODE_URI_PREFIX}{@code <node id>} and the
 *       DNS names and IP addresses the control plane chose (never the request's), extended key
 *       usages serverAuth (its NBD server, and the copies it holds of replicated volumes) and
 *       clientAuth (as a primary, it connects to the copies on other nodes: mutual TLS between
 *       nodes, each naming the other by its URI SAN).</li>
 * </ul>
 * Each has a random 127-bit serial, is not a CA, and carries subject and authority key
 * identifiers. The key usage is digitalSignature (and keyEncipherment for RSA keys).
 */
final class CertificateAuthority {

    /** URI SAN prefix that names a certificate's tenant: the contract the data node enforces. */
    static final String TENANT_URI_PREFIX = "urn:weir:tenant:";

    /** URI SAN prefix that names a server certificate's data node. */
    static final String NODE_URI_PREFIX = "urn:weir:node:";

    /** Lifetime of a CA this class generates. */
    static final Duration GENERATED_CA_LIFETIME = Duration.ofDays(3650);

    /** How far back a certificate's validity starts, for clocks slightly behind (at most a tenth of its lifetime). */
    static final Duration BACKDATE = Duration.ofMinutes(5);

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    private final X509Certificate certificate;
    private final PrivateKey key;
    private final String certificatePem;

    CertificateAuthority(X509Certificate certificate, PrivateKey key) {
        this.certificate = Objects.requireNonNull(certificate, "certificate");
        this.key = Objects.requireNonNull(key, "key");
        if (certificate.getBasicConstraints() < 0) {
            throw new IllegalArgumentException("the CA certificate " + certificate.getSubjectX500Principal()
                    + " is not a CA (no basicConstraints CA:TRUE)");
        }
        try {
            // the key must be the certificate's: sign something and verify it with the certificate
            byte[] probe = "weir".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            java.security.Signature s = java.security.Signature.getInstance(signatureAlgorithm(key));
            s.initSign(key);
            s.update(probe);
            byte[] signature = s.sign();
            s.initVerify(certificate.getPublicKey());
            s.update(probe);
            if (!s.verify(signature)) {
                throw new IllegalArgumentException("the CA private key does not belong to the CA certificate");
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("the CA private key does not belong to the CA certificate: " + e.getMessage(), e);
        }
        this.certificatePem = Pem.write(certificate);
    }

    /** A new self-signed CA (EC P-256, SHA-256) valid from {@code now} for {@link #GENERATED_CA_LIFETIME}. */
    static CertificateAuthority generate(Instant now) {
        KeyPair pair = Pem.newKeyPair();
        X500Name name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "weir")
                .addRDN(BCStyle.CN, "Weir cluster CA " + HexFormat.of().formatHex(randomBytes(4))).build();
        try {
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, serial(), Date.from(now.minus(BACKDATE)),
                    Date.from(now.plus(GENERATED_CA_LIFETIME)), name, pair.getPublic());
            JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            b.addExtension(Extension.subjectKeyIdentifier, false, utils.createSubjectKeyIdentifier(pair.getPublic()));
            X509Certificate cert = new JcaX509CertificateConverter().getCertificate(
                    b.build(new JcaContentSignerBuilder(signatureAlgorithm(pair.getPrivate())).build(pair.getPrivate())));
            return new CertificateAuthority(cert, pair.getPrivate());
        } catch (GeneralSecurityException | OperatorCreationException | CertIOException e) {
            throw new IllegalStateException("cannot generate the cluster CA: " + e.getMessage(), e);
        }
    }

    X509Certificate certificate() {
        return certificate;
    }

    PrivateKey privateKey() {
        return key;
    }

    /** The CA certificate, PEM. */
    String certificatePem() {
        return certificatePem;
    }

    /** A tenant's client certificate for {@code key}, valid from {@code now} (backdated) to {@code notAfter}. */
    X509Certificate issueClient(UUID tenantId, String name, PublicKey subjectKey, Instant now, Instant notAfter) {
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "weir-tenant")
                .addRDN(BCStyle.OU, tenantId.toString()).addRDN(BCStyle.CN, name).build();
        return issue(subject, subjectKey, now, notAfter, KeyPurposeId.id_kp_clientAuth,
                List.of(new GeneralName(GeneralName.uniformResourceIdentifier, TENANT_URI_PREFIX + tenantId)));
    }

    /**
     * A data node's server certificate for {@code key}: the node's URI SAN and {@code hostNames}
     * (DNS names or IP literals, chosen by the control plane), valid from {@code now} (backdated)
     * to {@code notAfter}.
     */
    X509Certificate issueServer(UUID nodeId, String nodeName, List<String> hostNames, PublicKey subjectKey, Instant now,
            Instant notAfter) {
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "weir-node")
                .addRDN(BCStyle.OU, nodeId.toString()).addRDN(BCStyle.CN, nodeName).build();
        List<GeneralName> names = new ArrayList<>();
        names.add(new GeneralName(GeneralName.uniformResourceIdentifier, NODE_URI_PREFIX + nodeId));
        names.addAll(hostNames(hostNames));
        return issue(subject, subjectKey, now, notAfter, new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth,
                KeyPurposeId.id_kp_clientAuth}, names);
    }

    /** The control plane's own HTTPS certificate (the {@code pki init} command): only {@code hostNames}. */
    X509Certificate issueControlPlane(List<String> hostNames, PublicKey subjectKey, Instant now, Instant notAfter) {
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "weir")
                .addRDN(BCStyle.CN, hostNames.isEmpty() ? "weir control plane" : hostNames.get(0)).build();
        return issue(subject, subjectKey, now, notAfter, KeyPurposeId.id_kp_serverAuth, hostNames(hostNames));
    }

    private static List<GeneralName> hostNames(List<String> hostNames) {
        List<GeneralName> names = new ArrayList<>();
        for (String host : hostNames) {
            String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
            names.add(IPV4.matcher(h).matches() || h.contains(":")
                    ? new GeneralName(GeneralName.iPAddress, h) : new GeneralName(GeneralName.dNSName, h));
        }
        return names;
    }

    private X509Certificate issue(X500Name subject, PublicKey subjectKey, Instant now, Instant notAfter,
            KeyPurposeId purpose, List<GeneralName> names) {
        return issue(subject, subjectKey, now, notAfter, new KeyPurposeId[] {purpose}, names);
    }

    private X509Certificate issue(X500Name subject, PublicKey subjectKey, Instant now, Instant notAfter,
            KeyPurposeId[] purposes, List<GeneralName> names) {
        // Backdated for clocks slightly behind, by at most a tenth of the lifetime (short-lived test certificates).
        Duration backdate = Duration.between(now, notAfter).dividedBy(10);
        Instant notBefore = now.minus(backdate.compareTo(BACKDATE) < 0 ? backdate : BACKDATE);
        Instant caEnd = certificate.getNotAfter().toInstant();
        Instant end = notAfter.isAfter(caEnd) ? caEnd : notAfter;
        try {
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(certificate, serial(), Date.from(notBefore),
                    Date.from(end), subject, subjectKey);
            JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            int usage = KeyUsage.digitalSignature | (subjectKey instanceof RSAPublicKey ? KeyUsage.keyEncipherment : 0);
            b.addExtension(Extension.keyUsage, true, new KeyUsage(usage));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purposes));
            if (!names.isEmpty()) {
                b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names.toArray(GeneralName[]::new)));
            }
            b.addExtension(Extension.subjectKeyIdentifier, false, utils.createSubjectKeyIdentifier(subjectKey));
            b.addExtension(Extension.authorityKeyIdentifier, false, utils.createAuthorityKeyIdentifier(certificate));
            return new JcaX509CertificateConverter().getCertificate(
                    b.build(new JcaContentSignerBuilder(signatureAlgorithm(key)).build(key)));
        } catch (GeneralSecurityException | OperatorCreationException | CertIOException e) {
            throw new IllegalStateException("cannot issue a certificate: " + e.getMessage(), e);
        }
    }

    /** The serial's text in the desired config and the database: lower-case hex, no leading zeros. */
    static String serialText(X509Certificate certificate) {
        return certificate.getSerialNumber().toString(16);
    }

    private static BigInteger serial() {
        // 127 random bits: positive, at most 16 bytes, never zero in practice
        return new BigInteger(127, RANDOM).setBit(0);
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    static String signatureAlgorithm(PrivateKey key) {
        return switch (key.getAlgorithm()) {
            case "EC", "ECDSA" -> "SHA256withECDSA";
            case "RSA" -> "SHA256withRSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> throw new IllegalArgumentException("unsupported CA key algorithm " + key.getAlgorithm());
        };
    }
}
