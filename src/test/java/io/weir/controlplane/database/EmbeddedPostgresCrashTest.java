package io.weir.controlplane.database;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded server after its JVM was killed ({@code kill -9}, the OOM killer): PostgreSQL,
 * started detached, outlives it, holding the data directory. The next start stops that leftover
 * server and starts its own on the same data. It waited 60 s for a server that could not start
 * ("lock file postmaster.pid already exists") and failed, at every start, until the user found
 * and killed the leftover.
 */
class EmbeddedPostgresCrashTest {

    /** Run in a child JVM: starts the server on {@code args[0]}, writes a row, says so, and waits to be killed. */
    public static final class Owner {
        public static void main(String[] args) throws Exception {
            EmbeddedPostgresServer server = EmbeddedPostgresServer.start(Path.of(args[0]), 0);
            try (Connection c = DriverManager.getConnection(server.jdbcUrl(), EmbeddedPostgresServer.USER, server.password());
                 Statement s = c.createStatement()) {
                s.execute("CREATE TABLE survivor (v text)");
                s.execute("INSERT INTO survivor VALUES ('still here')");
            }
            System.out.println("started");
            System.out.flush();
            Thread.currentThread().join(); // until the test kills this JVM
        }
    }

    @Test
    void aServerLeftRunningByAKilledJvmIsStoppedAndTheDataServedAgain(@TempDir Path dir) throws Exception {
        Process owner = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Owner.class.getName(), dir.toString()))
                .redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(owner.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null && !line.equals("started")) {
                // the child's log
            }
            assertThat(line).as("the child started its server").isEqualTo("started");
            owner.destroyForcibly();
            assertThat(owner.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
        long started = System.nanoTime();
        try (EmbeddedPostgresServer again = EmbeddedPostgresServer.start(dir, 0);
             Connection c = DriverManager.getConnection(again.jdbcUrl(), EmbeddedPostgresServer.USER, again.password());
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT v FROM survivor")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("still here");
        }
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started)).as("seconds to start again").isLessThan(45);
    }
}
