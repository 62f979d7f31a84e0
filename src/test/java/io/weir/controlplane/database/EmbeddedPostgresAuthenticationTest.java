package io.weir.controlplane.database;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded PostgreSQL trusted every local user: any account on the machine could connect to
 * the loopback port (or the world-writable Unix socket) as superuser, insert an admin token and run
 * {@code COPY ... TO PROGRAM}. It must ask for a password (SCRAM) that only the service's user can
 * read, and offer no Unix socket. Another local user knows the port, the user name and nothing
 * else, so these tests connect the way it would: without a password, and with a wrong one.
 */
class EmbeddedPostgresAuthenticationTest {

    @Test
    void anotherLocalUserWithoutThePasswordIsRefused(@TempDir Path dir) throws Exception {
        try (EmbeddedPostgresServer server = EmbeddedPostgresServer.start(dir, 0)) {
            assertRefused(server.jdbcUrl(), "");
            assertRefused(server.jdbcUrl(), "postgres");
            assertRefused(server.jdbcUrl().replace("/" + EmbeddedPostgresServer.DATABASE, "/postgres"), "");
            try (Connection c = DriverManager.getConnection(server.jdbcUrl(), EmbeddedPostgresServer.USER, server.password());
                 Statement s = c.createStatement()) {
                assertThat(one(s, "SHOW unix_socket_directories")).isEmpty();
                assertThat(one(s, "SELECT count(*) FROM pg_hba_file_rules WHERE auth_method <> 'scram-sha-256'"))
                        .isEqualTo("0");
                assertThat(one(s, "SELECT count(*) FROM pg_hba_file_rules WHERE type <> 'host'")).isEqualTo("0");
                assertThat(one(s, "SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = 'postgres'"))
                        .isEqualTo("t");
            }
        }
    }

    @Test
    void thePasswordIsGeneratedIntoAnOwnerOnlyFileOfTheDataDirectoryAndKeptAcrossRestarts(@TempDir Path dir)
            throws Exception {
        String password;
        try (EmbeddedPostgresServer first = EmbeddedPostgresServer.start(dir, 0)) {
            password = first.password();
        }
        Path file = dir.resolve(EmbeddedPostgresServer.PASSWORD_FILE);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(Files.readString(file).trim()).isEqualTo(password);
        assertThat(password).hasSizeGreaterThanOrEqualTo(43);
        try (EmbeddedPostgresServer second = EmbeddedPostgresServer.start(dir, 0);
             Connection c = DriverManager.getConnection(second.jdbcUrl(), EmbeddedPostgresServer.USER, password)) {
            assertThat(second.password()).isEqualTo(password);
            assertThat(c.isValid(5)).isTrue();
        }
    }

    /**
     * A data directory made by an earlier version (initdb with trust, no password) is migrated at
     * its next start: the superuser gets a generated password before the server accepts any
     * connection, the trust rules are replaced, and the data is kept.
     */
    @Test
    void aDataDirectoryInitialisedWithTrustIsMigratedAndKeepsItsData(@TempDir Path dir) throws Exception {
        try (EmbeddedPostgres legacy = EmbeddedPostgres.builder().setDataDirectory(dir).setCleanDataDirectory(false).start();
             Connection c = legacy.getPostgresDatabase().getConnection();
             Statement s = c.createStatement()) {
            s.execute("CREATE TABLE survivor (v text)");
            s.execute("INSERT INTO survivor VALUES ('still here')");
        }
        assertThat(dir.resolve(EmbeddedPostgresServer.PASSWORD_FILE)).doesNotExist();
        try (EmbeddedPostgresServer server = EmbeddedPostgresServer.start(dir, 0)) {
            String postgresDb = server.jdbcUrl().replace("/" + EmbeddedPostgresServer.DATABASE, "/postgres");
            assertRefused(postgresDb, "");
            try (Connection c = DriverManager.getConnection(postgresDb, EmbeddedPostgresServer.USER, server.password());
                 Statement s = c.createStatement()) {
                assertThat(one(s, "SELECT v FROM survivor")).isEqualTo("still here");
                assertThat(one(s, "SELECT count(*) FROM pg_hba_file_rules WHERE auth_method = 'trust'")).isEqualTo("0");
            }
        }
    }

    private static void assertRefused(String url, String password) {
        assertThatThrownBy(() -> DriverManager.getConnection(url, EmbeddedPostgresServer.USER, password).close())
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isIn("28P01", "28000", "08004"));
    }

    private static String one(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
