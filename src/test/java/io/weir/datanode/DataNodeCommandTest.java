package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import io.weir.agent.CommandLine;
import io.weir.support.TestConfigs;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import tools.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataNodeCommandTest {

    /**
     * The README's configuration table shows each data node option with its environment variable
     * and default as the command defines them: the defaults have one home (the command's options,
     * built from {@code NbdServer.Limits} and {@code BufferPool}), and the manual follows it.
     */
    @Test
    void theReadmeShowsEveryOptionWithItsDefault() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        for (CommandLine.Option o : DataNodeCommand.OPTIONS.options()) {
            if (o.defaultValue() == null || o.name().equals("workers")) {
                continue; // "unset", or a default computed from the machine: said in words
            }
            assertThat(readme).as("README row of --%s", o.name())
                    .contains("| `--" + o.name() + "` | `" + o.env() + "` | `" + o.defaultValue() + "` |");
        }
        assertThat(readme).contains("| `--buffer-memory` | `WEIR_BUFFER_MEMORY` | " + BufferPool.DEFAULT_BUDGET + " |");
    }

    /** Every option has its row in the README's data node table, those without a default too. */
    @Test
    void theReadmeHasARowForEveryOption() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        int from = readme.indexOf("| **data node** (`datanode`)");
        int to = readme.indexOf("| **agent** (`agent`, standalone)");
        assertThat(from).as("the data node's part of the configuration table").isPositive().isLessThan(to);
        String table = readme.substring(from, to);
        for (CommandLine.Option o : DataNodeCommand.OPTIONS.options()) {
            assertThat(table).as("README row of --%s", o.name()).contains("`--" + o.name() + "`", "`" + o.env() + "`");
        }
    }

    @Test
    void helpListsEveryOptionWithItsEnvironmentVariableAndDefault() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = DataNodeCommand.run(new String[] {"--help"}, new PrintStream(out, true, StandardCharsets.UTF_8),
                System.err, Map.of());
        String help = out.toString(StandardCharsets.UTF_8);
        assertThat(code).isZero();
        assertThat(help).contains("--control-plane", "--token", "--token-file", "--node-id", "--data-dir", "--listen",
                "--buffer-memory", "WEIR_BUFFER_MEMORY", "--workers", "--config-file", "--qos", "WEIR_CONTROL_PLANE",
                "WEIR_TOKEN_FILE", "WEIR_DATA_DIR", "WEIR_LISTEN", "WEIR_WORKERS", "default: 127.0.0.1:10809", "default: ./weir-data");
    }

    @Test
    void aConfigFileThatIsNotADesiredConfigIsAUsageErrorThatSaysWhy(@TempDir Path dir) throws IOException {
        Path config = Files.writeString(dir.resolve("desired.json"),
                "{\"nodeId\":\"00000000-0000-0000-0000-000000000001\",\"revision\":1,\"tasks\":[],\"tenants\":[]}");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = DataNodeCommand.run(new String[] {"--config-file", config.toString(), "--data-dir",
                dir.resolve("data").toString(), "--listen", "127.0.0.1:0"}, System.out,
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());
        assertThat(code).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("weir datanode: ").contains(config.toString())
                .doesNotContain("\tat ");
    }

    /** A config file of one tenant with one 1 MiB volume, as JSON. */
    private static String configJson() {
        return JsonMapper.builder().build().writeValueAsString(
                TestConfigs.config().tenant("acme").volume("acme", "db", 1 << 20).build());
    }

    /** Runs the command to its failure (a node that starts instead fails the test); what it printed on stderr. */
    private static String failure(int expectedCode, String... args) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = assertTimeoutPreemptively(Duration.ofMinutes(1),
                () -> DataNodeCommand.run(args, System.out, new PrintStream(err, true, StandardCharsets.UTF_8), Map.of()),
                () -> "the node started: " + err.toString(StandardCharsets.UTF_8));
        String printed = err.toString(StandardCharsets.UTF_8);
        assertThat(code).as(printed).isEqualTo(expectedCode);
        assertThat(printed).startsWith("weir datanode: ").doesNotContain("\tat ");
        return printed;
    }

    /**
     * A data dir belongs to one node: a second one over it would set aside the first's volume
     * files at its first config (and, with a control plane, read the first's cached config).
     */
    @Test
    void aSecondNodeOnADataDirInUseIsRefused(@TempDir Path dir) throws IOException {
        Path config = Files.writeString(dir.resolve("desired.json"), configJson());
        Path data = dir.resolve("data");
        try (DataNode first = DataNode.builder().dataDir(data).listen(new InetSocketAddress("127.0.0.1", 0)).build()) {
            assertThatThrownBy(() -> DataNode.builder().dataDir(data).listen(new InetSocketAddress("127.0.0.1", 0)).build())
                    .isInstanceOf(IOException.class).hasMessageContaining(data.toString()).hasMessageContaining("in use");
            assertThat(failure(1, "--config-file", config.toString(), "--data-dir", data.toString(), "--listen",
                    "127.0.0.1:0")).contains(data.toString()).contains("in use by another data node");
        }
        DataNode.builder().dataDir(data).listen(new InetSocketAddress("127.0.0.1", 0)).build().close();
    }

    @Test
    void aConfigFileWithAMisspeltOrRepeatedKeyIsAUsageErrorNamingIt(@TempDir Path dir) throws IOException {
        String json = configJson();
        assertThat(json).contains("\"maxIops\"");
        Path misspelt = Files.writeString(dir.resolve("misspelt.json"), json.replaceFirst("\"maxIops\"", "\"maxIOPS\""));
        assertThat(failure(2, "--config-file", misspelt.toString(), "--data-dir", dir.resolve("data").toString(),
                "--listen", "127.0.0.1:0")).contains("maxIOPS");
        Path twice = Files.writeString(dir.resolve("twice.json"), json.replaceFirst("\"revision\"", "\"revision\":7,\"revision\""));
        assertThat(failure(2, "--config-file", twice.toString(), "--data-dir", dir.resolve("data").toString(),
                "--listen", "127.0.0.1:0")).contains("revision");
    }

    @Test
    void aConfigFileWithAVolumeOrTenantWithoutAnIdIsAUsageErrorThatSaysWhy(@TempDir Path dir) throws IOException {
        String json = configJson();
        String volumeId = TestConfigs.volumeId("acme", "db").toString();
        Path noVolumeId = Files.writeString(dir.resolve("v.json"), json.replace("\"id\":\"" + volumeId + "\"", "\"id\":null"));
        assertThat(noVolumeId).content().isNotEqualTo(json);
        assertThat(failure(2, "--config-file", noVolumeId.toString(), "--data-dir", dir.resolve("data").toString(),
                "--listen", "127.0.0.1:0")).contains("id");
        String tenantId = TestConfigs.id("tenant:acme").toString();
        Path noTenantId = Files.writeString(dir.resolve("t.json"), json.replace("\"id\":\"" + tenantId + "\"", "\"id\":null"));
        assertThat(noTenantId).content().isNotEqualTo(json);
        assertThat(failure(2, "--config-file", noTenantId.toString(), "--data-dir", dir.resolve("data").toString(),
                "--listen", "127.0.0.1:0")).contains("id");
    }

    @Test
    void aListenAddressThatCannotBeUsedIsAnErrorNamingItAndItsOption(@TempDir Path dir) throws IOException {
        Path config = Files.writeString(dir.resolve("desired.json"), configJson());
        assertThat(failure(2, "--config-file", config.toString(), "--data-dir", dir.resolve("data").toString(),
                "--listen", "no-such-host.invalid:10809")).contains("no-such-host.invalid").contains("--listen");
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            String at = "127.0.0.1:" + taken.getLocalPort();
            assertThat(failure(1, "--config-file", config.toString(), "--data-dir", dir.resolve("data").toString(),
                    "--listen", at)).contains(at).contains("--listen");
            assertThat(failure(1, "--config-file", config.toString(), "--data-dir", dir.resolve("data").toString(),
                    "--listen", "127.0.0.1:0", "--replication-listen", at)).contains(at).contains("--replication-listen");
        }
    }

    @Test
    void environmentVariablesSetOptionsAndOptionsWin() throws Exception {
        CommandLine.Values v = DataNodeCommand.parse(new String[] {"--listen", "127.0.0.1:0"},
                Map.of("WEIR_LISTEN", "0.0.0.0:1", "WEIR_CONFIG_FILE", "c.json", "WEIR_WORKERS", "3"));
        assertThat(v.get("listen")).isEqualTo("127.0.0.1:0");
        assertThat(v.get("config-file")).isEqualTo("c.json");
        assertThat(v.get("buffer-memory")).as("unset: the JVM's direct memory limit decides").isNull();
        assertThat(v.get("workers")).isEqualTo("3");
    }

    @Test
    void durationsTakeTheSameSyntaxAsTheAgentsAndTheTokenTheSamePrecedence(@TempDir Path dir) throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("node.token"), "from-file\n");
        CommandLine.Values v = DataNodeCommand.parse(new String[] {"--config-file", "c.json", "--write-stall-timeout", "500ms",
                "--handshake-timeout", "PT2S", "--scrub-period", "0s", "--token-file", tokenFile.toString()},
                Map.of("WEIR_DRAIN_TIMEOUT", "2m"));
        assertThat(v.duration("write-stall-timeout", false)).isEqualTo(java.time.Duration.ofMillis(500));
        assertThat(v.duration("handshake-timeout", false)).isEqualTo(java.time.Duration.ofSeconds(2));
        assertThat(v.duration("scrub-period", true)).isEqualTo(java.time.Duration.ZERO);
        assertThat(v.duration("drain-timeout", false)).isEqualTo(java.time.Duration.ofMinutes(2));
        assertThat(v.token()).isEqualTo("from-file");
        assertThat(DataNodeCommand.parse(new String[] {"--config-file", "c.json", "--token-file", tokenFile.toString()},
                Map.of("WEIR_TOKEN", "from-env")).token()).isEqualTo("from-env");
        assertThatThrownBy(() -> DataNodeCommand.parse(new String[] {"--config-file", "c.json", "--handshake-timeout", "soon"},
                Map.of()).duration("handshake-timeout", false)).hasMessageContaining("--handshake-timeout must be a positive duration");
        assertThatThrownBy(() -> DataNodeCommand.parse(new String[] {"--config-file", "c.json", "--listen", "a:1", "--listen", "b:2"},
                Map.of())).hasMessageContaining("--listen given twice");
    }

    @Test
    void unknownOptionsAndMissingSourcesAreRefused() {
        assertThatThrownBy(() -> DataNodeCommand.parse(new String[] {"--nope", "1"}, Map.of()))
                .hasMessageContaining("unknown option '--nope'");
        assertThatThrownBy(() -> DataNodeCommand.parse(new String[0], Map.of()))
                .hasMessageContaining("--control-plane").hasMessageContaining("--config-file");
        assertThatThrownBy(() -> DataNodeCommand.parse(new String[] {"--control-plane", "http://x"}, Map.of()))
                .hasMessageContaining("--token");
    }

    /**
     * A node takes its configs from one source: applied from both, the file's would undo the
     * control plane's at every change, and the file's, applied first, would use up the check a
     * restarted primary makes with the control plane before it serves a replicated volume.
     */
    @Test
    void aConfigFileAndAControlPlaneTogetherAreRefused() {
        assertThatThrownBy(() -> DataNodeCommand.parse(new String[] {"--config-file", "c.json", "--control-plane", "http://x",
                "--token", "t"}, Map.of())).isInstanceOf(CommandLine.UsageException.class)
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> DataNodeCommand.parse(new String[] {"--token", "t"},
                Map.of("WEIR_CONFIG_FILE", "c.json", "WEIR_CONTROL_PLANE", "http://x")))
                .isInstanceOf(CommandLine.UsageException.class).hasMessageContaining("not both");
    }

    @Test
    void theIssuesCommandLineWithOnlyATokenFileAndNoNodeIdIsAccepted(@TempDir Path dir) throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("node.token"), "weir_node-token\n");
        CommandLine.Values v = DataNodeCommand.parse(new String[] {"--control-plane", "http://127.0.0.1:8080",
                "--token-file", tokenFile.toString(), "--data-dir", "/var/lib/weir", "--listen", "127.0.0.1:0",
                "--workers", "2"}, Map.of());
        assertThat(v.get("control-plane")).isEqualTo("http://127.0.0.1:8080");
        assertThat(v.token()).isEqualTo("weir_node-token");
        assertThat(v.get("node-id")).isNull();
    }

    @Test
    void aNodeIdThatIsGivenMustBeAUuid() {
        assertThatThrownBy(() -> DataNodeCommand.parse(new String[] {"--control-plane", "http://x", "--token", "t",
                "--node-id", "n1"}, Map.of())).hasMessageContaining("--node-id is not a UUID");
    }

    @Test
    void aHeapOutOfMemoryErrorPrintsWhyAndHaltsWithItsOwnStatus() {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.util.List<Integer> halted = new java.util.ArrayList<>();
        DataNodeCommand.haltOnHeapExhausted(new java.io.PrintStream(bytes, true), halted::add)
                .accept(new OutOfMemoryError("Java heap space"));
        assertThat(halted).containsExactly(DataNodeCommand.HEAP_EXHAUSTED_STATUS);
        assertThat(bytes.toString()).contains("FATAL: out of heap memory (Java heap space)").contains("status 3");
    }
}
