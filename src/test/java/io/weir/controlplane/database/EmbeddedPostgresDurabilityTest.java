package io.weir.controlplane.database;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.IntegrationTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;

class EmbeddedPostgresDurabilityTest extends IntegrationTest {

    @Autowired
    DataSource dataSource;

    @Test
    void applicationDatabaseRunsWithFsyncAndSynchronousCommitOn() {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        assertThat(jdbc.queryForObject("SHOW fsync", String.class)).isEqualTo("on");
        assertThat(jdbc.queryForObject("SHOW synchronous_commit", String.class)).isEqualTo("on");
        assertThat(jdbc.queryForObject("SELECT current_setting('server_version_num')::int / 10000", Integer.class))
                .isEqualTo(17);
    }

    /** No request can hold a connection (and a backend's memory) for longer than the statement timeout. */
    @Test
    void everyPooledConnectionHasAStatementTimeout() {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        assertThat(jdbc.queryForObject("SHOW statement_timeout", String.class)).isEqualTo("30s");
    }

    /**
     * The timeout is a Spring duration, as every other setting: {@code 2m} and {@code PT30S} are
     * set as PostgreSQL reads them (as text they were units it does not know, and every
     * connection, so the service, failed).
     */
    @Test
    void theStatementTimeoutTakesEveryDurationSpringReads() throws Exception {
        for (String[] given : new String[][] {{"2m", "2min"}, {"PT30S", "30s"}, {"1500ms", "1500ms"}, {"1h", "1h"}}) {
            org.springframework.mock.env.MockEnvironment env = new org.springframework.mock.env.MockEnvironment()
                    .withProperty(StatementTimeout.PROPERTY, given[0]);
            com.zaxxer.hikari.HikariDataSource pool = new com.zaxxer.hikari.HikariDataSource();
            StatementTimeout.statementTimeoutOnThePool(env).postProcessBeforeInitialization(pool, "dataSource");
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute(pool.getConnectionInitSql());
                try (ResultSet r = s.executeQuery("SHOW statement_timeout")) {
                    r.next();
                    assertThat(r.getString(1)).as(given[0]).isEqualTo(given[1]);
                }
                s.execute("SET statement_timeout = 30000"); // the pool's connection as it was
            }
            pool.close();
        }
    }

    @Test
    void embeddedServerKeepsItsDataAcrossRestarts(@TempDir Path dir) throws Exception {
        // The default that `mvn spring-boot:run` uses, on a directory of its own: stop it, start
        // it again on the same directory, and the data is still there.
        try (EmbeddedPostgresServer first = EmbeddedPostgresServer.start(dir, 0);
             Connection c = DriverManager.getConnection(first.jdbcUrl(), EmbeddedPostgresServer.USER, first.password());
             Statement s = c.createStatement()) {
            assertThat(show(s, "fsync")).isEqualTo("on");
            assertThat(show(s, "synchronous_commit")).isEqualTo("on");
            try (ResultSet locale = s.executeQuery("SELECT datcollate, datctype FROM pg_database WHERE datname = 'weir'")) {
                assertThat(locale.next()).isTrue();
                assertThat(locale.getString(1)).as("collation, whatever the environment's locale").isEqualTo("C");
                assertThat(locale.getString(2)).isEqualTo("C");
            }
            s.execute("CREATE TABLE survivor (v text)");
            s.execute("INSERT INTO survivor VALUES ('still here')");
        }
        assertThat(Files.exists(dir.resolve("PG_VERSION"))).isTrue();
        try (EmbeddedPostgresServer second = EmbeddedPostgresServer.start(dir, 0);
             Connection c = DriverManager.getConnection(second.jdbcUrl(), EmbeddedPostgresServer.USER, second.password());
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT v FROM survivor")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("still here");
        }
    }

    @Test
    void missingDataDirectoriesAreCreatedOwnerOnly(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("weir-data");
        try (EmbeddedPostgresServer server = EmbeddedPostgresServer.start(data.resolve("postgres"), 0)) {
            assertThat(server.port()).isPositive();
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(data))).isEqualTo("rwx------");
    }

    private static String show(Statement s, String setting) throws Exception {
        try (ResultSet rs = s.executeQuery("SHOW " + setting)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
