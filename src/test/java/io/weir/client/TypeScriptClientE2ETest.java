package io.weir.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.IntegrationTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Automation outside Java: a TypeScript client generated from the committed OpenAPI spec
 * ({@code openapi-typescript} types for {@code openapi-fetch}) must type-check a small program
 * under {@code tsc --strict}, and that program must drive this live server: create, read,
 * update, a stale {@code If-Match} answered 412, delete.
 *
 * <p>The npm project is {@code src/test/typescript} (versions pinned by its
 * {@code package-lock.json}); it is copied to {@code target/typescript-client}, where
 * {@code npm ci} installs it, so nothing is written into the sources. Needs node 20+ and npm,
 * hence tagged e2e: {@code mvn -Pe2e verify} (as {@code .ci/run} does) runs it.
 */
@Tag("e2e")
class TypeScriptClientE2ETest extends IntegrationTest {

    private static final Path PROJECT = Path.of("src/test/typescript");
    private static final Path WORK = Path.of("target/typescript-client");

    @Test
    void aTypeScriptClientGeneratedFromTheCommittedSpecTypeChecksAndDrivesTheServer() throws Exception {
        Files.createDirectories(WORK);
        for (String file : List.of("package.json", "package-lock.json", "tsconfig.json", "client-check.ts")) {
            Files.copy(PROJECT.resolve(file), WORK.resolve(file), StandardCopyOption.REPLACE_EXISTING);
        }
        Map<String, String> env = Map.of(
                "WEIR_SPEC", Path.of("src/main/openapi/weir-api.json").toAbsolutePath().toString(),
                "WEIR_URL", api.baseUrl(),
                "WEIR_TOKEN", ADMIN_TOKEN);
        run(env, 600, "npm", "ci", "--no-audit", "--no-fund");
        run(env, 300, "npm", "run", "-s", "generate");
        run(env, 300, "npx", "--no-install", "tsc", "-p", "tsconfig.json");
        String out = run(env, 120, "node", "build/client-check.js");
        assertThat(out).contains("refused a stale ETag (412)");
    }

    /** Runs {@code command} in {@link #WORK}; fails the test with its output unless it exits 0. */
    private static String run(Map<String, String> env, long timeoutSeconds, String... command)
            throws IOException, InterruptedException {
        Path log = Files.createTempFile(WORK.toAbsolutePath(), "run", ".log");
        ProcessBuilder builder = new ProcessBuilder(command).directory(WORK.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(env);
        Process process = builder.start();
        boolean done = process.waitFor(timeoutSeconds, TimeUnit.SECONDS);
        if (!done) {
            process.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        Files.delete(log);
        assertThat(done).as("%s did not finish in %d s:%n%s", String.join(" ", command), timeoutSeconds, output).isTrue();
        assertThat(process.exitValue()).as("%s failed:%n%s", String.join(" ", command), output).isZero();
        return output;
    }
}
