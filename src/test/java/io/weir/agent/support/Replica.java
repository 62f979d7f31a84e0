package io.weir.agent.support;

import io.weir.controlplane.ControlPlaneApplication;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.TestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One control-plane replica in its own Spring context, on a random port, over a PostgreSQL given
 * by its JDBC URL (by default the test run's shared {@link TestDatabase}). Replicas can be
 * stopped and started independently of each other and of {@link IntegrationTest}'s context, which
 * is what the restart and multi-replica tests need.
 */
public final class Replica implements AutoCloseable {

    private final ConfigurableApplicationContext context;
    private final int port;

    private Replica(ConfigurableApplicationContext context) {
        this.context = context;
        this.port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }

    /** Starts a replica over the shared test database. */
    public static Replica start() {
        TestDatabase.Coordinates db = TestDatabase.get();
        return start(db.jdbcUrl(), db.username(), db.password());
    }

    /** Starts a replica over the database at {@code jdbcUrl}. */
    public static Replica start(String jdbcUrl, String username, String password) {
        String dataDir;
        try {
            dataDir = Files.createTempDirectory("weir-replica").toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // Command-line arguments, so that they win over application.yml (builder properties would not).
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ControlPlaneApplication.class)
                .run("--server.port=0",
                        "--spring.datasource.url=" + jdbcUrl,
                        "--spring.datasource.username=" + username,
                        "--spring.datasource.password=" + password,
                        "--weir.security.bootstrap-token=" + IntegrationTest.ADMIN_TOKEN,
                        "--weir.data-dir=" + dataDir,
                        "--spring.main.banner-mode=off");
        return new Replica(context);
    }

    /** The HTTP port. */
    public int port() {
        return port;
    }

    /** A client of this replica's REST API with the admin token. */
    public HttpApi api() {
        return new HttpApi(port).withHeader("Authorization", "Bearer " + IntegrationTest.ADMIN_TOKEN);
    }

    /** The Spring context, for beans a test needs to look at. */
    public ConfigurableApplicationContext context() {
        return context;
    }

    /** Stops the replica: its connections close and its port stops listening. */
    @Override
    public void close() {
        context.close();
    }
}
