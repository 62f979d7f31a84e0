package io.weir.datanode;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import tools.jackson.databind.json.JsonMapper;

/** A data node in its own JVM ({@code DataNodeCommand} with a config file), for kill -9 tests and external clients. */
final class ForkedDataNode implements AutoCloseable {

    private static final Pattern SERVING = Pattern.compile("serving NBD on ([0-9.]+):(\\d+)");

    private final ForkedProcess forked;
    final Process process;
    final InetSocketAddress address;
    /** Everything the process has printed (stdout and stderr) so far. */
    final StringBuffer output;

    private ForkedDataNode(ForkedProcess forked, InetSocketAddress address) {
        this.forked = forked;
        this.process = forked.process;
        this.output = forked.output;
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
        ForkedProcess p = ForkedProcess.start("data node", cmd, SERVING);
        return new ForkedDataNode(p, new InetSocketAddress(p.ready.group(1), Integer.parseInt(p.ready.group(2))));
    }

    /** SIGKILL: no shutdown hook, no flush. */
    void kill() throws InterruptedException {
        forked.kill();
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() throws InterruptedException {
        forked.stop();
    }
}
