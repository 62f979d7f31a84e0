package io.weir.controlplane.support;

import io.weir.controlplane.database.EmbeddedPostgresServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The one real PostgreSQL server of a test JVM.
 *
 * <p>With a reachable Docker engine it is a Testcontainers {@code postgres:17} container;
 * without one, the same embedded PostgreSQL 17 server the application starts by default
 * ({@link EmbeddedPostgresServer}, with fsync and synchronous commit on), in a temporary data
 * directory removed when the JVM exits (also when the container fails to start). Either way it
 * is started once and shared by every Spring context of the run.
 */
public final class TestDatabase {

    /** Connection coordinates of the shared server. */
    public record Coordinates(String jdbcUrl, String username, String password, String kind) {
    }

    private static Coordinates coordinates;

    private TestDatabase() {
    }

    public static synchronized Coordinates get() {
        if (coordinates == null) {
            coordinates = dockerAvailable() ? containerOrEmbedded() : startEmbedded();
        }
        return coordinates;
    }

    /**
     * The container, or the embedded server if the container does not come up: a reachable
     * engine can still fail to pull {@code postgres:17} (registry rate limits and outages on
     * shared CI runners) or to start it in time, and that is no reason to fail every
     * integration test of the run when the same PostgreSQL 17 is at hand.
     */
    private static Coordinates containerOrEmbedded() {
        try {
            return startContainer();
        } catch (RuntimeException e) {
            System.err.println("TestDatabase: the postgres:17 container did not start (" + e
                    + "); using the embedded PostgreSQL 17 instead");
            return startEmbedded();
        }
    }

    private static boolean dockerAvailable() {
        // Ask Testcontainers only when an engine may be there: its probe logs errors otherwise.
        boolean candidate = System.getenv("DOCKER_HOST") != null
                || Files.exists(Path.of("/var/run/docker.sock"))
                || Files.exists(Path.of(System.getProperty("user.home"), ".testcontainers.properties"));
        if (!candidate) {
            return false;
        }
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException e) {
            return false;
        }
    }

    @SuppressWarnings("resource") // stopped by Testcontainers' reaper when the JVM exits
    private static Coordinates startContainer() {
        PostgreSQLContainer container = new PostgreSQLContainer("postgres:17")
                .withCommand("postgres", "-c", "fsync=on", "-c", "synchronous_commit=on");
        container.start();
        return new Coordinates(container.getJdbcUrl(), container.getUsername(), container.getPassword(), "testcontainers");
    }

    private static Coordinates startEmbedded() {
        try {
            Path dir = Files.createTempDirectory("weir-test-pg");
            EmbeddedPostgresServer server = EmbeddedPostgresServer.start(dir, 0);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                server.close();
                deleteRecursively(dir);
            }, "weir-test-pg-shutdown"));
            return new Coordinates(server.jdbcUrl(), EmbeddedPostgresServer.USER, server.password(), "embedded");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort: a temp directory left behind is harmless
        }
    }
}
