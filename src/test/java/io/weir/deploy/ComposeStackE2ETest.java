package io.weir.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.weir.support.LibnbdHome;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The compose cluster as a user starts it: {@code docker compose up --build --wait} on the
 * packaged jar, then the README's certificate line and fio line (over TLS, as a user) against the
 * first data node, which must complete IO.
 * The published ports are moved to free ones (CP1_PORT, ... of docker-compose.yml) and the fio
 * line follows, so the test does not collide with anything else on the machine.
 *
 * <p>It needs a Docker engine with Compose v2 and fio. Where no Docker engine answers, it is
 * skipped, and says so in the output: the only test of the build allowed to skip.
 */
@Tag("e2e")
class ComposeStackE2ETest {

    private static final long UP_TIMEOUT_SECONDS = 900;

    @Test
    void theReadmesFioLineRunsAgainstTheComposeCluster() throws Exception {
        Result docker = run(List.of("docker", "info", "--format", "{{.ServerVersion}}"), Map.of(), 60);
        String why = "No Docker engine here (`docker info`: " + docker.output.strip().lines().findFirst().orElse("")
                + "), so the compose cluster test (docker compose up, then the README's fio line) is SKIPPED.";
        if (docker.exit != 0) {
            System.out.println("ComposeStackE2ETest: " + why);
        }
        assumeTrue(docker.exit == 0, why);

        assertThat(packagedJar()).as("the image is built from the packaged jar: run `mvn package` first").isPresent();
        Map<String, String> ports = Map.of("CP1_PORT", String.valueOf(freePort()), "CP2_PORT", String.valueOf(freePort()),
                "DN1_PORT", String.valueOf(freePort()), "DN2_PORT", String.valueOf(freePort()));
        String project = "weir-e2e-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        List<String> compose = List.of("docker", "compose", "--project-name", project, "--file", "docker-compose.yml");
        try {
            Result up = run(concat(compose, "up", "--detach", "--build", "--wait", "--wait-timeout",
                    String.valueOf(UP_TIMEOUT_SECONDS)), ports, UP_TIMEOUT_SECONDS + 120);
            assertThat(up.exit).as("docker compose up:%n%s%n%s", up.output, logs(compose, ports)).isZero();

            // the README's two lines: the tenant's client certificate to ~/.pki/libnbd, then fio over
            // TLS, as a user (fio's nbd engine reads the certificate from its home)
            Path certificateHome = Files.createTempDirectory("compose-certificate");
            String copy = DeploymentConfigurationTest.readmeCertificateLine()
                    .replace("docker compose cp ", String.join(" ", compose) + " cp ");
            Map<String, String> copyEnv = new java.util.HashMap<>(ports);
            copyEnv.put("HOME", certificateHome.toString());
            Result copied = run(List.of("bash", "-euc", copy), copyEnv, 120);
            assertThat(copied.exit).as("%s:%n%s", copy, copied.output).isZero();
            String fio = DeploymentConfigurationTest.readmeFioLine()
                    .replace("nbds://127.0.0.1:10809/", "nbds://127.0.0.1:" + ports.get("DN1_PORT") + "/");
            List<String> asUser = LibnbdHome.prefix(Files.createTempDirectory("compose-fio"),
                    certificateHome.resolve(".pki").resolve("libnbd"));
            List<String> command = new ArrayList<>(asUser);
            command.addAll(List.of("bash", "-c", fio + " --output-format=json"));
            Result io = run(command, Map.of(), 180);
            assertThat(io.exit).as("%s:%n%s%n%s", fio, io.output, logs(compose, ports)).isZero();
            JsonNode job = JsonMapper.builder().build().readTree(io.output.substring(io.output.indexOf('{')))
                    .path("jobs").path(0);
            assertThat(job.path("error").asInt(-1)).as("fio's error").isZero();
            assertThat(job.path("read").path("total_ios").asLong() + job.path("write").path("total_ios").asLong())
                    .as("IOs fio completed").isPositive();
        } finally {
            run(concat(compose, "down", "--volumes", "--remove-orphans", "--timeout", "20"), ports, 300);
        }
    }

    private static java.util.Optional<Path> packagedJar() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("target"))) {
            return files.filter(p -> p.getFileName().toString().matches("weir-.*\\.jar")
                    && !p.getFileName().toString().endsWith("-agent.jar")).findFirst();
        }
    }

    private static String logs(List<String> compose, Map<String, String> env) {
        return run(concat(compose, "logs", "--no-color", "--tail", "60"), env, 120).output;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private record Result(int exit, String output) {
    }

    private static Result run(List<String> command, Map<String, String> env, long timeoutSeconds) {
        try {
            Path output = Files.createTempFile("compose", ".out");
            try {
                ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(output.toFile());
                builder.environment().putAll(env);
                Process process = builder.start();
                if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    return new Result(-1, command + " did not end in " + timeoutSeconds + " s\n"
                            + Files.readString(output, StandardCharsets.UTF_8));
                }
                return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(output);
            }
        } catch (IOException e) {
            return new Result(-1, "cannot run " + command.get(0) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static List<String> concat(List<String> head, String... tail) {
        List<String> all = new ArrayList<>(head);
        all.addAll(List.of(tail));
        return all;
    }
}
