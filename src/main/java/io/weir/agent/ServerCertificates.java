package io.weir.agent;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;

/**
 * A data node's server certificate, kept beside the agent's state: the key made here, the CSR sent
 * to the control plane, and the certificate it answers with. BouncyCastle writes the PKCS#10
 * request and the PEM; the JDK reads certificates.
 *
 * <h2>Files</h2>
 * In the state directory: {@value #KEY_FILE} (PKCS#8 PEM, mode 0600), {@value #CERTIFICATE_FILE}
 * (the node's certificate, PEM) and {@value #CA_FILE} (the CA that signed it, PEM). Each is
 * written to a temporary file, forced to disk and renamed over the old one; the certificate last,
 * so a crash leaves either the old pair or the new key beside the old certificate, which
 * {@link #open} sees do not match and ignores (the agent then asks again). A key that never
 * left the node is the only key: a new one is made for each request, and written only once its
 * certificate has arrived.
 *
 * <h2>Renewal</h2>
 * {@link #needsRequest()} is true when there is no certificate, or two thirds of the current one's
 * lifetime have passed by the clock ({@link ServerCertificate#renewAt()}). The current certificate
 * stays in force until the new one is {@linkplain #accept accepted}; then it is replaced at once.
 *
 * <p>Not thread-safe: the agent calls it from its event thread only; {@link #current()} is
 * volatile and may be read from any thread.
 */
public final class ServerCertificates {

    /** File of the node's private key. */
    public static final String KEY_FILE = "server-key.pem";

    /** File of the node's certificate. */
    public static final String CERTIFICATE_FILE = "server-cert.pem";

    /** File of the cluster CA that signed it. */
    public static final String CA_FILE = "server-ca.pem";

    /** Renewal at {@value #RENEW_AT_NUMERATOR}/{@value #RENEW_AT_DENOMINATOR} of the lifetime. */
    static final int RENEW_AT_NUMERATOR = 2;
    static final int RENEW_AT_DENOMINATOR = 3;

    /** The renewal point, for the docs: two thirds of the certificate's lifetime. */
    public static final String RENEW_AT = RENEW_AT_NUMERATOR + "/" + RENEW_AT_DENOMINATOR;

    private static final System.Logger LOG = System.getLogger(ServerCertificates.class.getName());
    private static final String TEMPORARY = ".tmp";

    private final Path dir;
    private final Clock clock;
    private volatile ServerCertificate current;
    /** The key of the request in flight, or null. */
    private PrivateKey pending;

    private ServerCertificates(Path dir, Clock clock, ServerCertificate current) {
        this.dir = dir;
        this.clock = clock;
        this.current = current;
    }

    /**
     * Loads the certificate kept in {@code dir}, if there is a good one: key, certificate and CA
     * present, the certificate's key the stored key's, and the certificate signed by that CA. A
     * missing or mismatched set is ignored (the agent asks for a new certificate), never fatal.
     */
    public static ServerCertificates open(Path dir, Clock clock) {
        ServerCertificate loaded = null;
        Path key = dir.resolve(KEY_FILE);
        Path cert = dir.resolve(CERTIFICATE_FILE);
        Path ca = dir.resolve(CA_FILE);
        if (Files.exists(key) && Files.exists(cert) && Files.exists(ca)) {
            try {
                loaded = check(readKey(Files.readString(key)), certificates(Files.readString(cert)).get(0),
                        certificates(Files.readString(ca)));
            } catch (IOException | IllegalArgumentException e) {
                LOG.log(System.Logger.Level.WARNING, "the server certificate in {0} cannot be used ({1}); a new one will be requested",
                        dir, e.getMessage());
            }
        }
        return new ServerCertificates(dir, clock, loaded);
    }

    /** The certificate in force, or null if the node has none yet. */
    public ServerCertificate current() {
        return current;
    }

    /** Whether a certificate should be requested: none, or two thirds of the current one's lifetime gone. */
    public boolean needsRequest() {
        ServerCertificate c = current;
        return c == null || !clock.instant().isBefore(c.renewAt());
    }

    /** Makes a new key (EC P-256) and returns a PEM PKCS#10 request for it; the key waits for {@link #accept}. */
    public String newRequest() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"));
            KeyPair pair = g.generateKeyPair();
            // The subject is a hint only: the control plane decides what the certificate names.
            var csr = new JcaPKCS10CertificationRequestBuilder(new X500Name("CN=weir-data-node"), pair.getPublic())
                    .build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate()));
            pending = pair.getPrivate();
            return pem(csr);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make a key and request: " + e.getMessage(), e);
        }
    }

    /** Whether a request is waiting for its certificate. */
    public boolean pending() {
        return pending != null;
    }

    /**
     * Takes the certificate the control plane signed for the pending request: checks that it is
     * for the pending key and signed by {@code caPem}, puts it in force, and stores key,
     * certificate and CA. The three are written to temporary files first and renamed only once
     * all are written, so the files keep a matching pair; if they cannot be written (a full disk)
     * that is logged and the new certificate is in force all the same (a restart finds the old
     * pair, and renews it if due): thrown away, the node would ask again and again while its
     * certificate ran out.
     *
     * @return the new certificate
     * @throws IllegalArgumentException if there is no pending request or the certificate does not
     *     fit it; the pending key is dropped either way
     */
    public ServerCertificate accept(String certificatePem, String caPem) {
        PrivateKey key = pending;
        pending = null;
        if (key == null) {
            throw new IllegalArgumentException("no certificate request is pending");
        }
        ServerCertificate next = check(key, certificates(certificatePem).get(0), certificates(caPem));
        current = next;
        List<Path> written = new java.util.ArrayList<>();
        try {
            Files.createDirectories(dir);
            written.add(writeTemporary(dir.resolve(KEY_FILE), pem(new JcaPKCS8Generator(key, null)), true));
            written.add(writeTemporary(dir.resolve(CA_FILE), caPem, false));
            written.add(writeTemporary(dir.resolve(CERTIFICATE_FILE), certificatePem, false));
            for (Path tmp : written) {
                install(tmp);
            }
        } catch (IOException | UncheckedIOException e) {
            LOG.log(System.Logger.Level.WARNING, "the renewed server certificate is in force but cannot be stored in {0}"
                    + " ({1}); a restart uses the one stored before", dir, e.getMessage());
            for (Path tmp : written) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // left for the next write, which replaces it
                }
            }
        }
        return next;
    }

    private static ServerCertificate check(PrivateKey key, X509Certificate certificate, List<X509Certificate> ca) {
        try {
            byte[] probe = "weir".getBytes(StandardCharsets.US_ASCII);
            java.security.Signature s = java.security.Signature.getInstance("SHA256withECDSA");
            s.initSign(key);
            s.update(probe);
            byte[] signature = s.sign();
            s.initVerify(certificate.getPublicKey());
            s.update(probe);
            if (!s.verify(signature)) {
                throw new IllegalArgumentException("the certificate is not for this node's key");
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("the certificate is not for this node's key: " + e.getMessage(), e);
        }
        boolean signed = false;
        for (X509Certificate c : ca) {
            try {
                certificate.verify(c.getPublicKey());
                signed = true;
                break;
            } catch (GeneralSecurityException e) {
                // try the next one
            }
        }
        if (!signed) {
            throw new IllegalArgumentException("the certificate is not signed by the CA sent with it");
        }
        return new ServerCertificate(key, certificate, ca);
    }

    static List<X509Certificate> certificates(String pem) {
        try {
            CertificateFactory f = CertificateFactory.getInstance("X.509");
            List<X509Certificate> out = new ArrayList<>();
            for (var c : f.generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException("no certificate");
            }
            return out;
        } catch (CertificateException e) {
            throw new IllegalArgumentException("not a PEM certificate: " + e.getMessage(), e);
        }
    }

    private static PrivateKey readKey(String pem) throws IOException {
        try (PEMParser p = new PEMParser(new StringReader(pem))) {
            Object o = p.readObject();
            if (o instanceof PrivateKeyInfo info) {
                return new JcaPEMKeyConverter().getPrivateKey(info);
            }
            throw new IllegalArgumentException("not a PKCS#8 private key");
        }
    }

    private static String pem(Object object) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(object);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /** Writes {@code text} to a temporary file, forces it, renames it over {@code file}, forces the directory. */
    /** Writes {@code text} to {@code file}'s temporary sibling, forced, and returns it ({@link #install} renames it). */
    private static Path writeTemporary(Path file, String text, boolean secret) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + TEMPORARY);
        Files.deleteIfExists(tmp);
        try {
            if (secret) {
                Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            }
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: the directory's permissions protect it
        }
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)));
            ch.force(true);
        }
        return tmp;
    }

    /** Renames a temporary file of {@link #writeTemporary} over its file, and forces the directory. */
    private static void install(Path tmp) throws IOException {
        String name = tmp.getFileName().toString();
        Path file = tmp.resolveSibling(name.substring(0, name.length() - TEMPORARY.length()));
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel d = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            // some file systems cannot open a directory for fsync; the rename is still atomic
        }
    }
}
