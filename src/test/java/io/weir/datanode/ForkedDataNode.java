package io.weir.datanode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.json.JsonMapper;

/** A data node in its own JVM ({@code DataNodeCommand} with a config file), for kill -9 tests and external clients. */
final class ForkedDataNode implements AutoCloseable {

    private static final Pattern SERVING = Pattern.compile("serving NBD on ([0-9.]+):(\\d+)");

    final Process process;
    final InetSocketAddress address;
    /** Everything the process has printed (stdout and stderr) so far. */
    final StringBuffer output = new StringBuffer();

    private ForkedDataNode(Process process, InetSocketAddress address) {
        this.process = process;
        this.address = address;
    }

    static Path writeConfig(Path file, io.weir.protocol.DesiredConfig config) throws IOException {
        Files.writeString(file, JsonMapper.builder().build().writeValueAsString(config));
        return file;
    }

    static ForkedDataNode start(Path configFile, Path dataDir, String... extra) throws IOException {
        return start(List.of(), configFile, dataDir, extra);
    }

    /** As {@link #start(Path, Path, String...)}, with options for the JVM (e.g. {@code -XX:MaxDirectMemorySize=256m}). */
    static ForkedDataNode start(List<String> jvm, Path configFile, Path dataDir, String... extra) throws IOException {
        List<String> options = new ArrayList<>(List.of("--config-file", configFile.toString()));
        options.addAll(List.of(extra));
        return launch(jvm, dataDir, options);
    }

    /**
     * A node whose embedded agent connects to the control plane at {@code controlPlane} with
     * {@code token} (its state directory inside {@code dataDir}'s parent, so a restart keeps it).
     */
    static ForkedDataNode connected(String controlPlane, String token, Path dataDir, String... extra) throws IOException {
        List<String> options = new ArrayList<>(List.of("--control-plane", controlPlane, "--token", token,
                "--state-dir", dataDir.resolveSibling(dataDir.getFileName() + "-agent").toString()));
        options.addAll(List.of(extra));
        return launch(List.of("-XX:+ExitOnOutOfMemoryError"), dataDir, options);
    }

    private static ForkedDataNode launch(List<String> jvm, Path dataDir, List<String> options) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(jvm);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), DataNodeCommand.class.getName(),
                "--data-dir", dataDir.toString(), "--listen", "127.0.0.1:0", "--workers", "2"));
        cmd.addAll(options);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        String line;
        while ((line = r.readLine()) != null) {
            seen.append(line).append('\n');
            Matcher m = SERVING.matcher(line);
            if (m.find()) {
                ForkedDataNode started = new ForkedDataNode(p, new InetSocketAddress(m.group(1), Integer.parseInt(m.group(2))));
                started.output.append(seen);
                Thread drain = new Thread(() -> {
                    try {
                        String more;
                        while ((more = r.readLine()) != null) {
                            started.output.append(more).append('\n');
                        }
                    } catch (IOException ignored) {
                        // process gone
                    }
                }, "datanode-output");
                drain.setDaemon(true);
                drain.start();
                return started;
            }
        }
        p.destroyForcibly();
        throw new IOException("data node did not start:\n" + seen);
    }

    /** SIGKILL: no shutdown hook, no flush. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            kill();
        }
    }
}
