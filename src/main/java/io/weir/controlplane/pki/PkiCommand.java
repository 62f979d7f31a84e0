package io.weir.controlplane.pki;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code java -jar weir.jar pki init --dir DIR --server-names NAME[,NAME...] [--days N] [--public-dir DIR2]}: makes the
 * files a TLS deployment starts from, without Spring or a database, for an operator who brings the
 * CA (compose's one-shot {@code pki} service does this; Helm makes the same files with its own
 * template functions):
 * <ul>
 *   <li>{@value #CA_CERT} and {@value #CA_KEY} (0600): a new cluster CA, unless both exist
 *       (then it is kept: running again never replaces the CA that certificates chain to);</li>
 *   <li>{@value #SERVER_CERT} and {@value #SERVER_KEY} (0600): the control plane's HTTPS
 *       certificate, signed by that CA, for the given DNS names and IP addresses, valid
 *       {@code --days} (default 365); made again whenever the CA is new, the names changed, or a
 *       third of its lifetime is left.</li>
 * </ul>
 * With {@code --public-dir} the CA certificate alone is copied there too, for what the data nodes
 * mount. The control plane then runs with {@code weir.pki.ca-certificate=DIR/ca.crt},
 * {@code weir.pki.ca-private-key=DIR/ca.key}, and an SSL bundle over the server pair; agents get
 * {@code --control-plane-ca DIR/ca.crt}.
 */
public final class PkiCommand {

    static final String CA_CERT = "ca.crt";
    static final String CA_KEY = "ca.key";
    static final String SERVER_CERT = "controlplane.crt";
    static final String SERVER_KEY = "controlplane.key";

    private static final String USAGE = "Usage: java -jar weir.jar pki init --dir DIR --server-names NAME[,NAME...] [--days N]"
            + " [--public-dir DIR2]\n  --public-dir: also copy the CA certificate (never a key) to DIR2/ca.crt, for the data nodes";

    private PkiCommand() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the command; answers the exit status (0, 1 on failure, 2 on a usage error). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        List<String> a = Arrays.asList(args);
        if (a.isEmpty() || a.contains("--help") || !a.get(0).equals("init")) {
            (a.contains("--help") ? out : err).println(USAGE);
            return a.contains("--help") ? 0 : 2;
        }
        String dir = null;
        String publicDir = null;
        List<String> names = new ArrayList<>();
        int days = 365;
        for (int i = 1; i < a.size(); i++) {
            String value = i + 1 < a.size() ? a.get(i + 1) : null;
            switch (a.get(i)) {
                case "--dir" -> dir = value;
                case "--public-dir" -> publicDir = value;
                case "--server-names" -> names = value == null ? List.of()
                        : Arrays.stream(value.split(",")).map(String::strip).filter(n -> !n.isEmpty()).toList();
                case "--days" -> days = value == null ? -1 : Integer.parseInt(value);
                default -> {
                    err.println("weir pki: unknown option " + a.get(i) + "\n" + USAGE);
                    return 2;
                }
            }
            i++;
        }
        if (dir == null || names.isEmpty() || days < 1) {
            err.println("weir pki: --dir and --server-names are required, --days must be positive\n" + USAGE);
            return 2;
        }
        try {
            init(Path.of(dir), names, Duration.ofDays(days), Instant.now(), out);
            if (publicDir != null) {
                Files.createDirectories(Path.of(publicDir));
                write(Path.of(publicDir, CA_CERT), Files.readString(Path.of(dir, CA_CERT)), false);
            }
            return 0;
        } catch (IOException | RuntimeException e) {
            err.println("weir pki: " + e.getMessage());
            return 1;
        }
    }

    static void init(Path dir, List<String> names, Duration lifetime, Instant now, PrintStream out) throws IOException {
        Files.createDirectories(dir);
        Path caCert = dir.resolve(CA_CERT);
        Path caKey = dir.resolve(CA_KEY);
        CertificateAuthority ca;
        if (Files.exists(caCert) != Files.exists(caKey)) {
            // a CA whose key was moved away (to a vault) must not be replaced: every certificate chains to it
            throw new IllegalStateException("only one of " + caCert + " and " + caKey + " exists: give both to keep the"
                    + " cluster CA, or neither to make a new one (its certificates would then no longer be trusted)");
        }
        boolean newCa = !Files.exists(caCert);
        if (newCa) {
            ca = CertificateAuthority.generate(now);
            write(caKey, Pem.privateKey(ca.privateKey(), null), true);
            write(caCert, ca.certificatePem(), false);
            out.println("weir pki: made a new cluster CA in " + caCert);
        } else {
            ca = new CertificateAuthority(Pem.certificates(Files.readString(caCert)).get(0),
                    Pem.privateKey(Files.readString(caKey), null));
            out.println("weir pki: kept the cluster CA in " + caCert);
        }
        Path serverCert = dir.resolve(SERVER_CERT);
        Path serverKey = dir.resolve(SERVER_KEY);
        if (!newCa && Files.exists(serverCert) && Files.exists(serverKey) && current(serverCert, ca, names, now)) {
            out.println("weir pki: kept the control plane's certificate in " + serverCert);
            return;
        }
        KeyPair pair = Pem.newKeyPair();
        X509Certificate cert = ca.issueControlPlane(names, pair.getPublic(), now, now.plus(lifetime));
        write(serverKey, Pem.privateKey(pair.getPrivate(), null), true);
        write(serverCert, Pem.write(cert), false);
        out.println("weir pki: made the control plane's certificate for " + String.join(", ", names) + " in " + serverCert);
    }

    /** Whether the certificate is signed by {@code ca}, names exactly {@code names}, and has more than a third of its life left. */
    private static boolean current(Path file, CertificateAuthority ca, List<String> names, Instant now) {
        try {
            X509Certificate c = Pem.certificates(Files.readString(file)).get(0);
            c.verify(ca.certificate().getPublicKey());
            List<String> has = new ArrayList<>();
            if (c.getSubjectAlternativeNames() != null) {
                c.getSubjectAlternativeNames().forEach(n -> has.add(String.valueOf(n.get(1))));
            }
            long life = c.getNotAfter().getTime() - c.getNotBefore().getTime();
            return has.equals(names) && now.toEpochMilli() < c.getNotAfter().getTime() - life / 3;
        } catch (Exception e) {
            return false;
        }
    }

    private static void write(Path file, String text, boolean secret) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        if (secret) {
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        }
        Files.writeString(tmp, text);
        Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
}
