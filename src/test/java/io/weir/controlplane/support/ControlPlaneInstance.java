package io.weir.controlplane.support;

import io.weir.controlplane.ControlPlaneApplication;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One more control-plane replica in the test JVM: the whole application on a random port over the
 * shared {@link TestDatabase}, for tests that need a second replica or a context outside JUnit
 * Jupiter (jqwik properties). It uses the same bootstrap admin token as {@link IntegrationTest}.
 */
public final class ControlPlaneInstance implements AutoCloseable {

    private final ConfigurableApplicationContext context;

    private ControlPlaneInstance(ConfigurableApplicationContext context) {
        this.context = context;
    }

    /** Starts a replica with these extra properties (such as {@code weir.push.replica-id}). */
    public static ControlPlaneInstance start(Map<String, String> extra) {
        TestDatabase.Coordinates db = TestDatabase.get();
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("spring.datasource.url", db.jdbcUrl());
        properties.put("spring.datasource.username", db.username());
        properties.put("spring.datasource.password", db.password());
        properties.put("weir.security.bootstrap-token", IntegrationTest.ADMIN_TOKEN);
        properties.put("weir.data-dir", tempDir());
        properties.put("server.port", "0");
        properties.put("management.server.port", "");
        properties.putAll(extra);
        // As command-line arguments, which outrank application.yml: as default properties
        // (SpringApplicationBuilder.properties) server.port, weir.data-dir and the bootstrap token
        // lost to application.yml's values, so a replica listened on 8080, kept its files in ./data
        // and, started on a fresh database, generated an admin token of its own instead of ADMIN_TOKEN.
        String[] args = properties.entrySet().stream().map(e -> "--" + e.getKey() + "=" + e.getValue())
                .toArray(String[]::new);
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ControlPlaneApplication.class)
                .run(args);
        return new ControlPlaneInstance(context);
    }

    /** The port it listens on. */
    public int port() {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    /** A client that sends the admin token. */
    public HttpApi adminApi() {
        return new HttpApi(port()).withHeader("Authorization", "Bearer " + IntegrationTest.ADMIN_TOKEN);
    }

    /** The replica's application context. */
    public ConfigurableApplicationContext context() {
        return context;
    }

    @Override
    public void close() {
        context.close();
    }

    private static String tempDir() {
        try {
            return Files.createTempDirectory("weir-replica").toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
