package io.weir.datanode;

import static org.awaitility.Awaitility.await;

import io.weir.controlplane.ControlPlaneApplication;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.TestDatabase;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The control plane in its own JVM, for tests that kill it: the whole application over a database
 * of its own on the test's PostgreSQL server (so no other control plane of the test JVM shares
 * its volumes), with {@link IntegrationTest#ADMIN_TOKEN} as its bootstrap admin token. Started
 * again on the same database and port, it is the same control plane restarted.
 */
final class ForkedControlPlane implements AutoCloseable {

    private static final Pattern STARTED = Pattern.compile("Tomcat started on port (\\d+)");

    private final ForkedProcess forked;
    final int port;

    private ForkedControlPlane(ForkedProcess forked, int port) {
        this.forked = forked;
        this.port = port;
    }

    /** A new, empty database {@code name} on the test server, answered as its JDBC URL. */
    static String newDatabase(String name) throws SQLException {
        TestDatabase.Coordinates db = TestDatabase.get();
        try (Connection c = DriverManager.getConnection(db.jdbcUrl(), db.username(), db.password());
                Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        }
        return db.jdbcUrl().replaceFirst("/[^/?]+(\\?|$)", "/" + name + "$1");
    }

    /** Starts the control plane on {@code jdbcUrl} (from {@link #newDatabase}) and {@code port} (0: any free one). */
    static ForkedControlPlane start(String jdbcUrl, Path dataDir, int port) throws IOException {
        TestDatabase.Coordinates db = TestDatabase.get();
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), ControlPlaneApplication.class.getName(),
                "--spring.datasource.url=" + jdbcUrl, "--spring.datasource.username=" + db.username(),
                "--spring.datasource.password=" + db.password(),
                "--weir.security.bootstrap-token=" + IntegrationTest.ADMIN_TOKEN, "--weir.data-dir=" + dataDir,
                "--server.port=" + port));
        ForkedProcess p = ForkedProcess.start("control plane", cmd, STARTED);
        ForkedControlPlane cp = new ForkedControlPlane(p, Integer.parseInt(p.ready.group(1)));
        // Tomcat serves before the application runners have run: the bootstrap admin token is
        // stored by one of them, so a request sent at once could be refused (401)
        HttpApi admin = cp.adminApi();
        await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(50))
                .until(() -> admin.get("/api/v1/tenants").status() == 200);
        return cp;
    }

    /** Its URL, for a data node's {@code --control-plane}. */
    String url() {
        return "http://127.0.0.1:" + port;
    }

    /** A client that sends the admin token. */
    HttpApi adminApi() {
        return new HttpApi(port).withHeader("Authorization", "Bearer " + IntegrationTest.ADMIN_TOKEN);
    }

    /** Everything it has printed so far. */
    String output() {
        return forked.output.toString();
    }

    /** SIGKILL: the control plane crashes, its agent connections drop, nothing is cleaned up. */
    void kill() throws InterruptedException {
        forked.kill();
    }

    @Override
    public void close() throws InterruptedException {
        forked.stop();
    }
}
