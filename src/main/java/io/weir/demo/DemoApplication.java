package io.weir.demo;

import io.weir.controlplane.ControlPlaneApplication;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.SimpleCommandLinePropertySource;

/**
 * {@code java -jar weir.jar demo [--name=value ...]}: a whole cluster in one command. The control
 * plane (with its embedded PostgreSQL) runs in this JVM under the {@code demo} profile;
 * {@link DemoCluster} then seeds it through the REST API and starts two data nodes as child
 * processes. Ctrl-C stops the data nodes, then the control plane, then removes the demo's
 * directory.
 *
 * <p>Options are Spring properties ({@code application-demo.yml} lists them):
 * {@code --server.port} (8080), {@code --weir.demo.nbd-port} (10809; the second node takes the
 * next port; 0 picks free ports), {@code --weir.demo.dir} (a new empty directory; default a
 * temporary one), {@code --weir.demo.bind-address}, {@code --weir.demo.node-heap} and
 * {@code --weir.demo.ready-timeout} ({@link DemoProperties}).
 */
public final class DemoApplication {

    private DemoApplication() {
    }

    public static void main(String[] args) {
        if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
            System.out.println("""
                    Usage: java -jar weir.jar demo [--server.port=8080] [--weir.demo.nbd-port=10809] [--weir.demo.dir=DIR]
                                                   [--weir.demo.bind-address=127.0.0.1] [--weir.demo.node-heap=384m]
                                                   [--weir.demo.ready-timeout=2m]

                    Starts the control plane with its embedded PostgreSQL and two data nodes, seeds tenants,
                    volumes and policies, and prints the NBD URLs and the dashboard URL. Ctrl-C stops it all
                    and removes DIR (default: a new temporary directory; a given DIR must be empty).
                      --server.port               the control plane's HTTP(S) port (0: any free port)
                      --weir.demo.nbd-port        the first data node's NBD port; the second takes the next (0: any free)
                      --weir.demo.dir             an empty directory for the database and the volumes
                      --weir.demo.bind-address    where everything listens: 127.0.0.1, or 0.0.0.0 in a container
                      --weir.demo.node-heap       each data node's -Xmx
                      --weir.demo.ready-timeout   how long the data nodes may take to start and apply their config""");
            return;
        }
        // Before the start, which takes a while: Ctrl-C or a SIGTERM meanwhile stops what has started
        // (the embedded PostgreSQL runs detached, the data nodes as child processes) and removes
        // the directory, which holds the admin token and the tenants' keys.
        AtomicReference<ConfigurableApplicationContext> started = new AtomicReference<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            ConfigurableApplicationContext context = started.get();
            if (context != null) {
                stop(context);
            }
        }, "weir-demo-shutdown"));
        start(started::set, args);
    }

    /**
     * Starts the demo and answers its context once the cluster is seeded and both data nodes
     * serve; {@link #stop} ends it. Tests use this directly. A demo that fails to start stops what
     * it started and removes its directory before it throws.
     */
    public static ConfigurableApplicationContext start(String... args) {
        return start(context -> { }, args);
    }

    /** {@link #start(String...)}, telling {@code created} of the context as soon as it exists. */
    private static ConfigurableApplicationContext start(Consumer<ConfigurableApplicationContext> created, String... args) {
        SimpleCommandLinePropertySource given = new SimpleCommandLinePropertySource(args);
        Path dir = directory(given.getProperty("weir.demo.dir"));
        // As arguments, so they win over application.yml (the control plane's ./data is not the demo's).
        // The directory always absolute: the data nodes run in directories of their own.
        List<String> all = new ArrayList<>(List.of(args));
        all.removeIf(a -> a.startsWith("--weir.demo.dir="));
        all.add("--weir.demo.dir=" + dir);
        if (!given.containsProperty("weir.data-dir")) {
            all.add("--weir.data-dir=" + dir.resolve("controlplane"));
        }
        try {
            return new SpringApplicationBuilder(ControlPlaneApplication.class, DemoConfiguration.class)
                    .profiles("demo")
                    .registerShutdownHook(false) // stop() orders the shutdown itself
                    .initializers(created::accept)
                    .run(all.toArray(String[]::new));
        } catch (RuntimeException | Error e) {
            // Spring closed the context (the data nodes, then the embedded PostgreSQL)
            DemoFiles.deleteTree(dir);
            throw e;
        }
    }

    /**
     * Stops the data nodes and the control plane (in that order), then removes the directory; also
     * for a demo still starting, and at most once.
     */
    public static void stop(ConfigurableApplicationContext context) {
        Path dir = Path.of(context.getEnvironment().getRequiredProperty("weir.demo.dir"));
        if (context.isActive()) {
            // The nodes first, while the control plane still serves them: closing the context would
            // first tell their agents that the replica is going away, and they would try to reconnect.
            context.getBeanProvider(DemoCluster.class).ifAvailable(DemoCluster::stop);
        }
        context.close();
        DemoFiles.deleteTree(dir);
        System.out.println("weir demo: stopped, " + dir + " removed");
    }

    private static Path directory(String given) {
        try {
            if (given == null) {
                return Files.createTempDirectory("weir-demo-");
            }
            Path dir = Path.of(given).toAbsolutePath().normalize();
            if (Files.exists(dir)) {
                try (var entries = Files.list(dir)) {
                    if (entries.findAny().isPresent()) {
                        throw new IllegalArgumentException("weir.demo.dir " + dir
                                + " is not empty: the demo starts from nothing and removes its directory at the end");
                    }
                }
            }
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the demo directory", e);
        }
    }
}
