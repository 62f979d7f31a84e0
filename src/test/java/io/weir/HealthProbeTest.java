package io.weir;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The image's HEALTHCHECK: what it checks for each role, and that it tells ready from not ready. */
class HealthProbeTest {

    private static final List<String> LAUNCHER = List.of("java", "-XX:MaxRAMPercentage=75", "-cp", "/opt/weir",
            "org.springframework.boot.loader.launch.JarLauncher");

    @Test
    void theControlPlaneIsCheckedOnItsReadinessGroupAtItsPort() {
        assertThat(HealthProbe.target(LAUNCHER, Map.of()))
                .isEqualTo("http://127.0.0.1:8080/actuator/health/readiness");
        assertThat(HealthProbe.target(concat(LAUNCHER, "controlplane"), Map.of("SERVER_PORT", "9090")))
                .isEqualTo("http://127.0.0.1:9090/actuator/health/readiness");
        assertThat(HealthProbe.target(concat(LAUNCHER, "controlplane", "--server.port=9191"), Map.of("SERVER_PORT", "9090")))
                .isEqualTo("http://127.0.0.1:9191/actuator/health/readiness");
        assertThat(HealthProbe.target(List.of("java", "-jar", "weir.jar", "--server.port=7000"), Map.of()))
                .isEqualTo("http://127.0.0.1:7000/actuator/health/readiness");
        assertThat(HealthProbe.target(concat(LAUNCHER, "demo"), Map.of()))
                .isEqualTo("http://127.0.0.1:8080/actuator/health/readiness");
    }

    @Test
    void aDataNodeIsCheckedOnTheNbdPortItListensOn() {
        assertThat(HealthProbe.target(concat(LAUNCHER, "datanode", "--control-plane", "http://cp:8080"), Map.of()))
                .isEqualTo("nbd://127.0.0.1:10809");
        assertThat(HealthProbe.target(concat(LAUNCHER, "datanode"), Map.of("WEIR_LISTEN", "0.0.0.0:10900")))
                .isEqualTo("nbd://127.0.0.1:10900");
        assertThat(HealthProbe.target(concat(LAUNCHER, "datanode", "--listen", "[::]:10901"), Map.of("WEIR_LISTEN", "0.0.0.0:10900")))
                .isEqualTo("nbd://127.0.0.1:10901");
    }

    /** A node listening on one address only is not reachable on 127.0.0.1: the probe goes where it listens. */
    @Test
    void aDataNodeListeningOnOneAddressIsCheckedThere() {
        assertThat(HealthProbe.target(concat(LAUNCHER, "datanode", "--listen", "172.17.0.2:10809"), Map.of()))
                .isEqualTo("nbd://172.17.0.2:10809");
        assertThat(HealthProbe.target(concat(LAUNCHER, "datanode"), Map.of("WEIR_LISTEN", "[::1]:10900")))
                .isEqualTo("nbd://[::1]:10900");
        assertThat(HealthProbe.target(concat(LAUNCHER, "datanode", "--listen=dn1.internal:10809"), Map.of()))
                .isEqualTo("nbd://dn1.internal:10809");
        assertThat(HealthProbe.target(concat(LAUNCHER, "datanode", "--listen", ":10902"), Map.of()))
                .isEqualTo("nbd://127.0.0.1:10902");
    }

    @Test
    void theAgentIsReadyWhileItRuns() {
        assertThat(HealthProbe.target(concat(LAUNCHER, "agent"), Map.of())).isEqualTo("none");
        assertThat(HealthProbe.check("none")).isNull();
    }

    @Test
    void anHttpTargetIsReadyOnlyWhenItAnswers2xx() throws IOException {
        AtomicInteger status = new AtomicInteger(503);
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/actuator/health/readiness", exchange -> {
            exchange.sendResponseHeaders(status.get(), -1);
            exchange.close();
        });
        server.start();
        try {
            String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/actuator/health/readiness";
            assertThat(HealthProbe.check(url)).isEqualTo("HTTP 503");
            status.set(200);
            assertThat(HealthProbe.check(url)).isNull();
        } finally {
            server.stop(0);
        }
    }

    @Test
    void anNbdTargetIsReadyOnlyWhenTheServerGreetsWithTheNewstyleHandshake() throws Exception {
        assertThat(HealthProbe.check("nbd://127.0.0.1:" + greetingServer("NBDMAGICIHAVEOPT\0\3"))).isNull();
        assertThat(HealthProbe.check("nbd://127.0.0.1:" + greetingServer("HTTP/1.1 400 Bad"))).isEqualTo(
                "no NBD newstyle greeting");
    }

    @Test
    void nothingListeningIsNotReady() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        assertThat(HealthProbe.check("nbd://127.0.0.1:" + port)).contains("ConnectException");
        assertThat(HealthProbe.check("http://127.0.0.1:" + port + "/")).contains("ConnectException");
    }

    /** A one-connection server that sends {@code greeting} and closes; returns its port. */
    private static int greetingServer(String greeting) throws IOException {
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Thread thread = new Thread(() -> {
            try (server; Socket client = server.accept(); OutputStream out = client.getOutputStream()) {
                out.write(greeting.getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
            } catch (IOException ignored) {
                // the probe has gone; nothing to clean up beyond the sockets closed here
            }
        }, "greeting-server");
        thread.setDaemon(true);
        thread.start();
        return server.getLocalPort();
    }

    private static List<String> concat(List<String> head, String... tail) {
        return java.util.stream.Stream.concat(head.stream(), java.util.Arrays.stream(tail)).toList();
    }
}
