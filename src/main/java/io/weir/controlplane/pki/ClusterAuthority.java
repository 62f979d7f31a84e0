package io.weir.controlplane.pki;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.sql.Timestamp;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Where the cluster CA comes from, decided once at start-up:
 * <ol>
 *   <li>the operator's files, {@code weir.pki.ca-certificate} and {@code weir.pki.ca-private-key}
 *       (a Kubernetes Secret, or what {@code weir pki init} wrote); nothing is stored then;</li>
 *   <li>else the database: the CA generated at the first start of the first replica (under a
 *       transaction-scoped advisory lock, so concurrent first starts agree on one), read back by
 *       every later start and every other replica. Its key is stored encrypted when
 *       {@code weir.pki.ca-key-password} is set.</li>
 * </ol>
 * The key never leaves this package: no API serves it, and the audit log records certificates
 * only.
 */
@Component
class ClusterAuthority {

    private static final Logger log = LoggerFactory.getLogger(ClusterAuthority.class);

    /** PostgreSQL advisory lock key that serialises CA generation ("weirpki!"). */
    private static final long GENERATE_LOCK = 0x77656972706b6921L;

    private final CertificateAuthority ca;

    ClusterAuthority(PkiProperties properties, JdbcClient jdbc, PlatformTransactionManager transactions, Clock clock) {
        this.ca = properties.caCertificate().isBlank() ? fromDatabase(properties, jdbc, transactions, clock)
                : fromFiles(properties);
        log.info("cluster CA: {} (valid until {})", ca.certificate().getSubjectX500Principal(),
                ca.certificate().getNotAfter().toInstant());
    }

    CertificateAuthority ca() {
        return ca;
    }

    private static CertificateAuthority fromFiles(PkiProperties p) {
        try {
            List<X509Certificate> certs = Pem.certificates(Files.readString(Path.of(p.caCertificate())));
            return new CertificateAuthority(certs.get(0), Pem.privateKey(Files.readString(Path.of(p.caPrivateKey())),
                    p.password()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the CA files weir.pki.ca-certificate=" + p.caCertificate()
                    + ", weir.pki.ca-private-key=" + p.caPrivateKey() + ": " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the CA of weir.pki.ca-certificate=" + p.caCertificate()
                    + " cannot be used: " + e.getMessage(), e);
        }
    }

    private static CertificateAuthority fromDatabase(PkiProperties p, JdbcClient jdbc, PlatformTransactionManager transactions,
            Clock clock) {
        TransactionTemplate tx = new TransactionTemplate(transactions);
        return tx.execute(status -> {
            jdbc.sql("SELECT pg_advisory_xact_lock(?)").param(GENERATE_LOCK).query((rs, n) -> 1).list();
            Optional<String[]> stored = jdbc.sql("SELECT certificate_pem, private_key_pem FROM pki_authority WHERE id = 1")
                    .query((rs, n) -> new String[] {rs.getString(1), rs.getString(2)}).optional();
            if (stored.isPresent()) {
                return new CertificateAuthority(Pem.certificates(stored.get()[0]).get(0),
                        Pem.privateKey(stored.get()[1], p.password()));
            }
            CertificateAuthority generated = CertificateAuthority.generate(clock.instant());
            char[] password = p.password();
            jdbc.sql("""
                            INSERT INTO pki_authority (id, certificate_pem, private_key_pem, key_encrypted, created_at)
                            VALUES (1, ?, ?, ?, ?)""")
                    .param(generated.certificatePem())
                    .param(Pem.privateKey(generated.privateKey(), password))
                    .param(password != null)
                    .param(Timestamp.from(clock.instant()))
                    .update();
            log.info("generated the cluster CA{}", password != null ? " (its key stored encrypted)"
                    : " (its key stored unencrypted: set weir.pki.ca-key-password to encrypt it)");
            return generated;
        });
    }
}
