package io.weir.demo;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One data node of the demo: {@code weir datanode} in a child JVM, started from the same jar or
 * class path as this one, so it runs exactly the code a deployed node runs. Its output is copied
 * to ours with a {@code [name]} prefix; the port it listens on is read from its start line.
 */
final class DataNodeProcess implements AutoCloseable {

    /** The line {@code weir datanode} prints once it listens. */
    private static final Pattern SERVING = Pattern.compile("serving NBD on (\\S+):(\\d+),");
    /** What the node logs once it has its TLS certificate from the control plane. */
    private static final String TLS_READY = "NBD over TLS with a certificate valid until";
    /** How long a node may take to stop after SIGTERM before it is killed. */
    private static final Duration STOP_GRACE = Duration.ofSeconds(15);
    /** Lines of a node's output kept for the error when it exits before it serves. */
    private static final int LAST_LINES = 20;

    private final String name;
    private final Process process;
    private final CompletableFuture<Integer> port = new CompletableFuture<>();
    /** Completed once the node has its TLS certificate (clients must use TLS). */
    private final CompletableFuture<Void> tls = new CompletableFuture<>();

    private DataNodeProcess(String name, Process process, PrintStream out) {
        this.name = name;
        this.process = process;
        Thread pump = new Thread(() -> pump(out), "weir-demo-" + name + "-output");
        pump.setDaemon(true);
        pump.start();
    }

    /**
     * Starts {@code weir datanode} for {@code name}, connected to the control plane at
     * {@code controlPlane} with the token in {@code tokenFile}, its files under {@code dir}.
     */
    static DataNodeProcess start(String name, String controlPlane, Path tokenFile, Path dir, String listenHost,
            int nbdPort, String heap, PrintStream out) {
        List<String> command = new ArrayList<>(javaCommand(heap));
        command.addAll(List.of("datanode", "--control-plane", controlPlane, "--token-file", tokenFile.toString(),
                "--data-dir", dir.resolve("data").toString(), "--listen", listenHost + ":" + nbdPort,
                // the demo's nodes share one host: each takes a free port for its copies, and reports it
                "--replication-listen", listenHost + ":0",
                // clients still connected at Ctrl-C get this long to finish what they have in flight
                "--drain-timeout", "5s"));
        try {
            Files.createDirectories(dir);
            Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
            p.getOutputStream().close();
            return new DataNodeProcess(name, p, out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start data node " + name + ": " + String.join(" ", command), e);
        }
    }

    /** The NBD port, once the node serves; fails if it exits or takes longer than {@code timeout}. */
    int awaitPort(Duration timeout) throws InterruptedException, TimeoutException {
        return await(port, timeout, "did not serve");
    }

    /** Returns once the node has its TLS certificate; fails if it takes longer than {@code timeout}. */
    void awaitTls(Duration timeout) throws InterruptedException, TimeoutException {
        await(tls, timeout, "had no TLS certificate");
    }

    /** The value of {@code step}, a future the node's output completes; {@code late} says what a timeout means. */
    private <T> T await(CompletableFuture<T> step, Duration timeout, String late) throws InterruptedException, TimeoutException {
        try {
            return step.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new TimeoutException("data node " + name + " " + late + " within " + timeout);
        }
    }

    String name() {
        return name;
    }

    /** Stops the node as Ctrl-C would (SIGTERM), and kills it if it does not stop in time. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                System.err.println("weir demo: data node " + name + " did not stop in " + STOP_GRACE + "; killing it");
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Copies the node's output to ours; at its end (the node exited), fails a start still awaited. */
    private void pump(PrintStream out) {
        Deque<String> last = new ArrayDeque<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                out.println("[" + name + "] " + line);
                if (!port.isDone()) {
                    last.addLast(line);
                    if (last.size() > LAST_LINES) {
                        last.removeFirst();
                    }
                }
                if (line.contains(TLS_READY)) {
                    tls.complete(null);
                }
                Matcher m = SERVING.matcher(line);
                if (m.find()) {
                    port.complete(Integer.parseInt(m.group(2)));
                }
            }
        } catch (IOException e) {
            last.addLast("(its output could not be read: " + e.getMessage() + ")");
        }
        if (!port.isDone()) {
            String code;
            try {
                code = String.valueOf(process.waitFor());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                code = "unknown";
            }
            port.completeExceptionally(new IllegalStateException("data node " + name + " exited with code " + code
                    + " before it served; it said:\n  " + String.join("\n  ", last)));
        }
        tls.completeExceptionally(new IllegalStateException("data node " + name + " exited before it had its TLS certificate"));
    }

    /**
     * {@code java ...} as this JVM was started: {@code -jar} for Weir's executable jar; the same
     * class path and Spring Boot launcher for an extracted jar (the container image); else the
     * same class path and {@code io.weir.Main} (under {@code mvn spring-boot:run}, and in tests,
     * where the class path may be a manifest-only jar that the JVM follows the same way).
     */
    static List<String> javaCommand(String heap) {
        return javaCommand(heap, System.getProperty("sun.java.command", ""), System.getProperty("java.class.path"));
    }

    /**
     * {@link #javaCommand(String)} for a JVM started as {@code sunJavaCommand} (its main class or
     * jar, then its arguments, joined by spaces) with class path {@code javaClassPath}. Under
     * {@code java -jar} the class path is the jar alone, as given: it is read from there, for a
     * jar whose path has spaces cannot be told from its arguments in the command.
     */
    static List<String> javaCommand(String heap, String sunJavaCommand, String javaClassPath) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String started = sunJavaCommand.split(" ", 2)[0];
        String[] entries = javaClassPath.split(File.pathSeparator);
        // absolute: the node runs in its own directory
        String classPath = Arrays.stream(entries)
                .map(entry -> Path.of(entry).toAbsolutePath().toString()).collect(Collectors.joining(File.pathSeparator));
        // out of heap, a node exits (and says so) rather than staying up and serving nobody
        List<String> command = new ArrayList<>(List.of(java, "-Xmx" + heap, "-XX:+UseSerialGC",
                "-XX:+ExitOnOutOfMemoryError"));
        if (entries.length == 1 && entries[0].endsWith(".jar") && sunJavaCommand.startsWith(entries[0])
                && isSpringBootJar(Path.of(entries[0]))) {
            command.addAll(List.of("-jar", classPath));
        } else if (started.startsWith("org.springframework.boot.loader.")) {
            command.addAll(List.of("-cp", classPath, started));
        } else {
            command.addAll(List.of("-cp", classPath, "io.weir.Main"));
        }
        return command;
    }

    /** Whether {@code jar} is a Spring Boot executable jar (not, say, a test runner's launcher jar). */
    private static boolean isSpringBootJar(Path jar) {
        try (JarFile file = new JarFile(jar.toFile())) {
            return file.getManifest() != null && file.getManifest().getMainAttributes().getValue("Spring-Boot-Version") != null;
        } catch (IOException e) {
            return false;
        }
    }
}
