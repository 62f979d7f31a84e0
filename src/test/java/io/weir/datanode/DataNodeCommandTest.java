package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataNodeCommandTest {

    @Test
    void helpListsEveryOptionWithItsEnvironmentVariableAndDefault() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = DataNodeCommand.run(new String[] {"--help"}, new PrintStream(out, true, StandardCharsets.UTF_8),
                System.err, Map.of());
        String help = out.toString(StandardCharsets.UTF_8);
        assertThat(code).isZero();
        assertThat(help).contains("--control-plane", "--token", "--token-file", "--node-id", "--data-dir", "--listen",
                "--workers", "--config-file", "--qos", "WEIR_CONTROL_PLANE", "WEIR_TOKEN_FILE", "WEIR_DATA_DIR",
                "WEIR_LISTEN", "WEIR_WORKERS", "default: 127.0.0.1:10809", "default: ./weir-data");
    }

    @Test
    void environmentVariablesSetOptionsAndOptionsWin() {
        Map<String, String> v = DataNodeCommand.parse(new String[] {"--listen", "127.0.0.1:0"},
                Map.of("WEIR_LISTEN", "0.0.0.0:1", "WEIR_CONFIG_FILE", "c.json", "WEIR_WORKERS", "3"));
        assertThat(v).containsEntry("listen", "127.0.0.1:0").containsEntry("config-file", "c.json")
                .containsEntry("workers", "3");
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

    @Test
    void theIssuesCommandLineWithOnlyATokenFileAndNoNodeIdIsAccepted(@TempDir Path dir) throws IOException {
        Path tokenFile = Files.writeString(dir.resolve("node.token"), "weir_node-token\n");
        Map<String, String> v = DataNodeCommand.parse(new String[] {"--control-plane", "http://127.0.0.1:8080",
                "--token-file", tokenFile.toString(), "--data-dir", "/var/lib/weir", "--listen", "127.0.0.1:0",
                "--workers", "2"}, Map.of());
        assertThat(v).containsEntry("control-plane", "http://127.0.0.1:8080")
                .containsEntry("token", "weir_node-token").containsEntry("node-id", null);
    }

    @Test
    void aNodeIdThatIsGivenMustBeAUuid() {
        assertThatThrownBy(() -> DataNodeCommand.parse(new String[] {"--control-plane", "http://x", "--token", "t",
                "--node-id", "n1"}, Map.of())).hasMessageContaining("--node-id is not a UUID");
    }
}
