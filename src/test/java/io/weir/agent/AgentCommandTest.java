package io.weir.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code java -jar weir.jar agent ...}: its options, environment variables and defaults. */
class AgentCommandTest {

    @TempDir
    Path dir;

    @Test
    void helpListsEveryOptionWithItsDefaultAndVariable() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status = AgentCommand.run(new String[] {"--help"}, Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8),
                System.err);

        String help = out.toString(StandardCharsets.UTF_8);
        assertThat(status).isZero();
        assertThat(help).contains("--control-plane", "--node-id", "--token-file", "--token", "--state-dir", "--heartbeat-interval",
                "--heartbeat-timeout", "--backoff-initial", "--backoff-max", "--workers", "--help",
                "WEIR_CONTROL_PLANE", "WEIR_TOKEN_FILE", "WEIR_TOKEN", "WEIR_NODE_ID", "default: 10s", "default: 30s", "default: 200ms",
                "$WEIR_DATA_DIR/agent-state");
    }

    /** Every option has its row in the README's table of the standalone agent, with its variable and default. */
    @Test
    void theReadmeHasARowForEveryOption() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        int from = readme.indexOf("| **agent** (`agent`, standalone)");
        assertThat(from).as("the agent's part of the configuration table").isPositive();
        int end = readme.indexOf("\n\n", from);
        String table = readme.substring(from, end < 0 ? readme.length() : end);
        for (CommandLine.Option o : AgentCommand.OPTIONS.options()) {
            assertThat(table).as("README row of --%s", o.name()).contains("`--" + o.name() + "`", "`" + o.env() + "`");
            if (o.defaultValue() != null) {
                assertThat(table).as("README row of --%s", o.name()).contains("`" + o.defaultValue() + "`");
            }
        }
    }

    @Test
    void optionsAndATokenFileMakeTheAgentsSettings() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), "  weir_secret-token \n");

        AgentCommand.Options o = AgentCommand.parse(new String[] {"--control-plane", "http://127.0.0.1:8080", "--node-id", "3f2c1b2a-0000-4000-8000-000000000001", 
                "--token-file", tokenFile.toString(), "--state-dir=" + dir, "--heartbeat-interval", "2s",
                "--heartbeat-timeout", "PT5S", "--backoff-initial", "50ms", "--backoff-max", "1m", "--workers", "3"},
                Map.of());

        assertThat(o.controlPlane()).isEqualTo(URI.create("http://127.0.0.1:8080"));
        assertThat(o.nodeId()).hasToString("3f2c1b2a-0000-4000-8000-000000000001");
        assertThat(o.token()).isEqualTo("weir_secret-token");
        assertThat(o.stateDir()).isEqualTo(dir);
        assertThat(o.heartbeatInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(o.heartbeatTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.backoffInitial()).isEqualTo(Duration.ofMillis(50));
        assertThat(o.backoffMax()).isEqualTo(Duration.ofMinutes(1));
        assertThat(o.workers()).isEqualTo(3);
    }

    @Test
    void environmentVariablesFillInAndOptionsWin() throws Exception {
        Map<String, String> env = Map.of("WEIR_CONTROL_PLANE", "https://cp.example:8443", "WEIR_TOKEN", "from-env",
                "WEIR_NODE_ID", "3f2c1b2a-0000-4000-8000-000000000001",
                "WEIR_STATE_DIR", "/var/lib/weir", "WEIR_HEARTBEAT_INTERVAL", "3s");

        AgentCommand.Options o = AgentCommand.parse(new String[] {"--heartbeat-interval", "4s"}, env);

        assertThat(o.controlPlane()).isEqualTo(URI.create("https://cp.example:8443"));
        assertThat(o.token()).isEqualTo("from-env");
        assertThat(o.stateDir()).isEqualTo(Path.of("/var/lib/weir"));
        assertThat(o.heartbeatInterval()).isEqualTo(Duration.ofSeconds(4));
        assertThat(o.heartbeatTimeout()).isEqualTo(QosAgent.DEFAULT_HEARTBEAT_TIMEOUT);
        assertThat(o.workers()).isEqualTo(1);
    }

    /**
     * In the container image, which sets {@code WEIR_DATA_DIR} to its volume, the agent keeps its
     * last good config there, as a data node's agent does ({@code <data-dir>/agent-state}): it
     * kept it beside the working directory, outside the volume, and lost it with the container.
     */
    @Test
    void theStateDirectoryDefaultsToTheDataDirectoryWhereTheEnvironmentNamesOne() throws Exception {
        AgentCommand.Options o = AgentCommand.parse(new String[] {"--control-plane", "http://h:1", "--token", "t"},
                Map.of("WEIR_DATA_DIR", "/var/lib/weir/data"));
        assertThat(o.stateDir()).isEqualTo(Path.of("/var/lib/weir/data/agent-state"));
        AgentCommand.Options given = AgentCommand.parse(new String[] {"--control-plane", "http://h:1", "--token", "t",
                "--state-dir", "/s"}, Map.of("WEIR_DATA_DIR", "/var/lib/weir/data"));
        assertThat(given.stateDir()).isEqualTo(Path.of("/s"));
    }

    @Test
    void defaultsApplyWhenOnlyTheRequiredOptionsAreGiven() throws Exception {
        AgentCommand.Options o = AgentCommand.parse(new String[] {"--control-plane", "http://h:1", "--token", "t"}, Map.of());

        assertThat(o.nodeId()).isNull();
        assertThat(o.stateDir()).isEqualTo(Path.of("weir-agent-state"));
        assertThat(o.heartbeatInterval()).isEqualTo(QosAgent.DEFAULT_HEARTBEAT_INTERVAL);
        assertThat(o.backoffInitial()).isEqualTo(QosAgent.DEFAULT_BACKOFF_INITIAL);
        assertThat(o.backoffMax()).isEqualTo(QosAgent.DEFAULT_BACKOFF_MAX);
    }

    @Test
    void theIssuesCommandLineWithOnlyATokenFileAndNoNodeIdStartsTheAgent() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("node.token"), "weir_node-token\n");

        AgentCommand.Options fromOptions = AgentCommand.parse(new String[] {"--control-plane", "http://127.0.0.1:8080",
                "--token-file", tokenFile.toString(), "--state-dir", dir.toString()}, Map.of());
        AgentCommand.Options fromEnvironment = AgentCommand.parse(new String[0], Map.of("WEIR_CONTROL_PLANE",
                "http://127.0.0.1:8080", "WEIR_TOKEN_FILE", tokenFile.toString(), "WEIR_STATE_DIR", dir.toString()));

        for (AgentCommand.Options o : java.util.List.of(fromOptions, fromEnvironment)) {
            assertThat(o.nodeId()).isNull();
            assertThat(o.token()).isEqualTo("weir_node-token");
            assertThat(o.stateDir()).isEqualTo(dir);
        }
    }

    @Test
    void theTokenComesFromItsOptionThenItsVariableThenATokenFile() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), "from-file\n");
        String[] base = {"--control-plane", "http://h:1", "--token-file", tokenFile.toString()};

        assertThat(AgentCommand.parse(base, Map.of()).token()).isEqualTo("from-file");
        assertThat(AgentCommand.parse(base, Map.of("WEIR_TOKEN", "from-env")).token()).isEqualTo("from-env");
        String[] withToken = java.util.stream.Stream.concat(java.util.Arrays.stream(base), java.util.stream.Stream.of("--token", "from-flag"))
                .toArray(String[]::new);
        assertThat(AgentCommand.parse(withToken, Map.of("WEIR_TOKEN", "from-env")).token()).isEqualTo("from-flag");
    }

    @Test
    void mistakesAreUsageErrorsThatSayWhatIsWrong() throws IOException {
        assertThatThrownBy(() -> AgentCommand.parse(new String[] {"--token", "t"}, Map.of()))
                .hasMessageContaining("--control-plane is required");
        assertThatThrownBy(() -> AgentCommand.parse(new String[] {"--control-plane", "http://h:1", "--node-id", "3f2c1b2a-0000-4000-8000-000000000001"}, Map.of()))
                .hasMessageContaining("a node token is required");
        assertThatThrownBy(() -> AgentCommand.parse(new String[] {"--control-plane", "http://h:1", "--node-id", "n1",
                "--token", "t"}, Map.of())).hasMessageContaining("--node-id is not a UUID");
        assertThatThrownBy(() -> AgentCommand.parse(new String[] {"--control-plane", "ftp://h", "--token", "t"}, Map.of()))
                .hasMessageContaining("http(s)://");
        assertThatThrownBy(() -> AgentCommand.parse(new String[] {"--control-plane", "http://h:1", "--token", "t",
                "--token", "u"}, Map.of())).hasMessageContaining("--token given twice");
        assertThatThrownBy(() -> AgentCommand.parse(new String[] {"--control-plane", "http://h:1", "--node-id", "3f2c1b2a-0000-4000-8000-000000000001", "--token-file",
                dir.resolve("missing").toString()}, Map.of())).hasMessageContaining("cannot read the token file");
        assertThatThrownBy(() -> AgentCommand.parse(new String[] {"--control-plane", "http://h:1", "--node-id", "3f2c1b2a-0000-4000-8000-000000000001", "--token", "t",
                "--heartbeat-interval", "soon"}, Map.of())).hasMessageContaining("--heartbeat-interval must be a positive duration");
        assertThatThrownBy(() -> AgentCommand.parse(new String[] {"--control-plane", "http://h:1", "--node-id", "3f2c1b2a-0000-4000-8000-000000000001", "--token", "t",
                "--workers", "0"}, Map.of())).hasMessageContaining("--workers");
        assertThatThrownBy(() -> AgentCommand.parse(new String[] {"--bogus"}, Map.of()))
                .hasMessageContaining("unknown option '--bogus'");
        assertThatThrownBy(() -> AgentCommand.parse(new String[] {"--control-plane"}, Map.of()))
                .hasMessageContaining("needs a value");

        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = AgentCommand.run(new String[] {"--bogus"}, Map.of(), System.out, new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(status).isEqualTo(AgentCommand.EXIT_USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("unknown option", "--help");
    }
}
