package io.weir.controlplane.token;

import io.weir.controlplane.security.SecurityProperties;
import io.weir.controlplane.security.TokenSecrets;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Creates the first admin token when the database holds none, so a new installation can be
 * managed at all.
 *
 * <ul>
 *   <li>If {@code weir.security.bootstrap-token} ({@code WEIR_BOOTSTRAP_TOKEN}) is set, that text
 *       becomes the admin token. It must be at least {@value TokenSecrets#MIN_CHOSEN_LENGTH}
 *       characters of {@code [A-Za-z0-9-._~+/]}.
 *   <li>Otherwise a token is generated and written to {@code <weir.data-dir>/admin-token},
 *       readable by the service's user only (mode 0600, in a directory created 0700), with an
 *       atomic replace so a crash never leaves half a token (see {@link #writeOwnerOnly}). The log
 *       advises rotating it and deleting the file after first use.
 * </ul>
 *
 * <h2>Recovery</h2>
 * If every admin token has expired (or was deleted behind the API's back), nothing can manage
 * the service. Setting {@code WEIR_BOOTSTRAP_TOKEN} and restarting recovers: when the database
 * holds no unexpired admin token, the configured text becomes a new admin token (named
 * {@value #NAME}, or with a suffix if that name is taken) and a warning is logged. Unset it again
 * once a fresh admin token has been issued. Without {@code WEIR_BOOTSTRAP_TOKEN} the bootstrap
 * still only acts on an empty database.
 *
 * <p>The log says where the token went, never what it is. Replicas starting together on an
 * empty database are serialised by a transaction-scoped advisory lock, so only one creates it.
 * The file is written inside that transaction: if writing fails, no token is stored either.
 */
@Component
class TokenBootstrap implements ApplicationRunner {

    private static final Logger log = LoggerFactory.getLogger(TokenBootstrap.class);

    /** The bootstrap token's name. */
    static final String NAME = "bootstrap-admin";

    /** The file, under the data directory, that a generated token is written to. */
    static final String FILE_NAME = "admin-token";

    private final TokenService tokens;
    private final SecurityProperties properties;
    private final TransactionTemplate transactions;
    private final Path dataDir;

    TokenBootstrap(TokenService tokens, SecurityProperties properties, TransactionTemplate transactions,
            @Value("${weir.data-dir:./data}") Path dataDir) {
        this.tokens = tokens;
        this.properties = properties;
        this.transactions = transactions;
        this.dataDir = dataDir;
    }

    @Override
    public void run(ApplicationArguments args) {
        String configured = properties.bootstrapToken();
        if (configured != null && !configured.isBlank()) {
            String text = configured.trim();
            if (text.length() < TokenSecrets.MIN_CHOSEN_LENGTH || !TokenSecrets.wellFormed(text)) {
                throw new IllegalStateException("weir.security.bootstrap-token (WEIR_BOOTSTRAP_TOKEN) must be "
                        + TokenSecrets.MIN_CHOSEN_LENGTH + " to " + TokenSecrets.MAX_LENGTH
                        + " characters of A-Z a-z 0-9 - . _ ~ + /");
            }
            String[] outcome = transactions.execute(status -> {
                if (tokens.lockForBootstrap()) {
                    tokens.storeBootstrapAdmin(NAME, text);
                    return new String[] {"created", NAME};
                }
                if (tokens.lockForAdminRecovery()) {
                    return new String[] {"recovered", tokens.storeRecoveryAdmin(text)};
                }
                return new String[] {"ignored", null};
            });
            switch (outcome[0]) {
                case "created" -> log.info("Created the bootstrap admin token '{}' from weir.security.bootstrap-token"
                        + " (WEIR_BOOTSTRAP_TOKEN)", NAME);
                case "recovered" -> log.warn("No unexpired admin token existed: created the admin token '{}' from"
                        + " weir.security.bootstrap-token (WEIR_BOOTSTRAP_TOKEN) to recover access. Issue a new admin"
                        + " token, revoke this one, and unset WEIR_BOOTSTRAP_TOKEN.", outcome[1]);
                default -> log.info("An unexpired admin token exists; weir.security.bootstrap-token is ignored");
            }
            return;
        }
        Path file = dataDir.resolve(FILE_NAME).toAbsolutePath().normalize();
        Boolean created = transactions.execute(status -> {
            if (!tokens.lockForBootstrap()) {
                return false;
            }
            String secret = TokenSecrets.generate(UUID.randomUUID());
            tokens.storeBootstrapAdmin(NAME, secret);
            writeOwnerOnly(file, secret);
            return true;
        });
        if (Boolean.TRUE.equals(created)) {
            log.info("Created the bootstrap admin token '{}'; its secret is in {} (mode 0600). "
                    + "Send it as 'Authorization: Bearer <contents of the file>'.", NAME, file);
            log.warn("After first use, issue your own admin token, revoke '{}' and delete {}: a long-lived admin"
                    + " secret should not stay on disk.", NAME, file);
        }
    }

    /**
     * Writes {@code text} to {@code file} readable by the owner only, atomically.
     *
     * <ul>
     *   <li>The directory is created with mode 0700 if it does not exist (an existing one is left
     *       as the operator made it).
     *   <li>The text goes to a temporary file of a random name, created and written through one
     *       channel opened with {@code CREATE_NEW} (O_EXCL: fails on anything already there,
     *       symlinks included), {@code NOFOLLOW_LINKS} and mode 0600 from the start: the file is
     *       never reopened by path, so nothing can be swapped in between.
     *   <li>It is forced to disk and renamed over {@code file}; a rename replaces a symlink at
     *       {@code file} rather than writing through it.
     * </ul>
     */
    static void writeOwnerOnly(Path file, String text) {
        Path dir = file.toAbsolutePath().getParent();
        boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
        Path temp = dir.resolve(file.getFileName() + "." + UUID.randomUUID() + ".tmp");
        try {
            if (!Files.isDirectory(dir)) {
                if (posix) {
                    Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                } else {
                    Files.createDirectories(dir);
                }
            }
            Set<OpenOption> options = Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS);
            try (FileChannel channel = posix
                    ? FileChannel.open(temp, options, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))
                    : FileChannel.open(temp, options)) {
                if (!posix) {
                    temp.toFile().setReadable(false, false);
                    temp.toFile().setReadable(true, true);
                    temp.toFile().setWritable(true, true);
                }
                ByteBuffer bytes = ByteBuffer.wrap((text + "\n").getBytes(StandardCharsets.US_ASCII));
                while (bytes.hasRemaining()) {
                    channel.write(bytes);
                }
                channel.force(true);
            }
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // The temporary file holds the secret; the next start writes a new one anyway.
            }
            throw new UncheckedIOException("Cannot write the bootstrap admin token to " + file, e);
        }
    }
}
