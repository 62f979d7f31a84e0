package io.weir;

import static io.weir.support.Patience.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Every role logs in one format (issue 20): a data node started as users start it
 * ({@code io.weir.Main datanode}, in a JVM of its own) prints its own lines and those of its
 * embedded agent, both written through the JDK's {@code System.Logger}, in Spring Boot's console
 * pattern tagged {@code [weir-datanode]}, one line each; with
 * {@code LOGGING_STRUCTURED_FORMAT_CONSOLE=ecs}, as one JSON object per line. The control plane
 * it points to is not there (port 1), so its agent logs its reconnects.
 */
class RoleLoggingTest {

    /** Spring Boot's console pattern: time, level, pid, ---, [application], [thread], logger, colon. */
    private static final String BOOT_LINE =
            "^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\S*\\s+(INFO|WARN|ERROR|DEBUG) \\d+ --- \\[weir-datanode\\] "
                    + "\\[.*\\] \\S+\\s+: .*";

    @TempDir
    Path dir;

    private List<String> run(Map<String, String> env, String until) throws IOException {
        Path token = Files.writeString(dir.resolve("token"), "weir_000000000000000000000000000000a1_"
                + "abcdefghijklmnopqrstuvwxyz0123456789ab\n");
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), Main.class.getName(), "datanode", "--control-plane",
                "http://127.0.0.1:1", "--token-file", token.toString(), "--data-dir",
                dir.resolve("data-" + env.size()).toString(), "--listen", "127.0.0.1:0").redirectErrorStream(true);
        pb.environment().putAll(env);
        Process process = pb.start();
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process ended
            }
        });
        reader.setDaemon(true);
        reader.start();
        try {
            await().atMost(PATIENCE).until(() -> lines.stream().anyMatch(l -> l.contains("serving NBD on"))
                    && lines.stream().anyMatch(l -> l.contains(until)));
        } finally {
            process.destroyForcibly();
        }
        return List.copyOf(lines);
    }

    @Test
    void aDataNodeAndItsAgentLogInSpringBootsOneLinePattern() throws IOException {
        List<String> lines = run(Map.of(), "reconnecting in");
        assertThat(lines).filteredOn(l -> l.contains("serving NBD on")).singleElement().asString()
                .matches(BOOT_LINE).contains("io.weir.datanode.DataNodeCommand").contains("INFO");
        assertThat(lines).filteredOn(l -> l.contains("reconnecting in")).first().asString()
                .matches(BOOT_LINE).contains("io.weir.agent.QosAgent");
        assertThat(lines).as("every line is one event in the one pattern (no JDK two-line format, no bare print)")
                .allMatch(l -> l.matches(BOOT_LINE), "matches Spring Boot's console pattern");
    }

    @Test
    void withStructuredLoggingEveryLineIsOneJsonObject() throws IOException {
        List<String> lines = run(Map.of("LOGGING_STRUCTURED_FORMAT_CONSOLE", "ecs"), "reconnecting in");
        JsonMapper json = JsonMapper.builder().build();
        for (String line : lines) {
            JsonNode event = json.readTree(line);
            assertThat(event.path("service").path("name").asString()).as(line).isEqualTo("weir-datanode");
            assertThat(event.path("log").path("level").asString()).as(line).isNotEmpty();
        }
        assertThat(lines).anySatisfy(l -> assertThat(json.readTree(l).path("message").asString())
                .startsWith("serving NBD on 127.0.0.1:"));
    }
}
