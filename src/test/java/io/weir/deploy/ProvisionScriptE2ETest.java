package io.weir.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compose's one-shot {@code provision} step ({@code src/main/docker/provision.py}, run by the
 * python3 it needs) on a second {@code docker compose up} after the operator revoked the
 * bootstrap admin token, as the docs advise: everything it makes exists, and it has no admin
 * token that works. It waited five minutes for the token file revoking deletes, or failed on the
 * revoked token's 401, and the data nodes, which start after it, never started. A stand-in for
 * the control plane on 127.0.0.1 answers readiness and refuses every API call.
 */
@Tag("e2e")
class ProvisionScriptE2ETest {

    @TempDir
    Path dir;
    HttpServer controlPlane;

    @BeforeEach
    void start() throws IOException {
        controlPlane = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        controlPlane.createContext("/", exchange -> {
            int status = exchange.getRequestURI().getPath().equals("/actuator/health/readiness") ? 200 : 401;
            byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        controlPlane.start();
        Files.createDirectories(dir.resolve("node-tokens"));
        Files.writeString(dir.resolve("node-tokens/dn1.token"), "weir_dn1\n");
        Files.writeString(dir.resolve("node-tokens/dn2.token"), "weir_dn2\n");
        Files.createDirectories(dir.resolve("client-pki/demo"));
        Files.writeString(dir.resolve("client-pki/demo/client-key.pem"), "key\n");
    }

    @AfterEach
    void stop() {
        controlPlane.stop(0);
    }

    private Process provision(String adminToken) throws IOException {
        ProcessBuilder pb = new ProcessBuilder("python3", "src/main/docker/provision.py").redirectErrorStream(true)
                .redirectOutput(dir.resolve("provision.log").toFile());
        Map<String, String> env = pb.environment();
        env.put("CONTROL_PLANE", "http://127.0.0.1:" + controlPlane.getAddress().getPort());
        env.put("CONTROL_PLANE_CA", "");
        env.put("ADMIN_TOKEN", adminToken);
        env.put("ADMIN_TOKEN_FILE", dir.resolve("admin-token").toString()); // deleted with the bootstrap token
        env.put("TOKEN_DIR", dir.resolve("node-tokens").toString());
        env.put("TOKEN_OWNER", "10001:10001");
        env.put("NODES", "dn1=127.0.0.1:10809 dn2=127.0.0.1:10810");
        env.put("VOLUMES", "demo/vol1@dn1:1073741824 demo/vol2@dn2:1073741824");
        env.put("CLIENT_CERTIFICATES", "demo");
        env.put("CLIENT_PKI_DIR", dir.resolve("client-pki").toString());
        return pb.start();
    }

    @Test
    void aSecondRunWithTheBootstrapTokenRevokedSucceedsWhenEverythingExists() throws Exception {
        for (String adminToken : new String[] {"", "weir_the-revoked-bootstrap-token"}) {
            Process p = provision(adminToken);
            try {
                assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("provision ends (admin token '%s')", adminToken).isTrue();
                String log = Files.readString(dir.resolve("provision.log"));
                assertThat(p.exitValue()).as(log).isZero();
                assertThat(log).contains("already provisioned");
            } finally {
                p.destroyForcibly();
            }
        }
    }
}
