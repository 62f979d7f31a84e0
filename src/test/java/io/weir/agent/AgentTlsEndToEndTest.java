package io.weir.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.controlplane.pki.PkiCommand;
import io.weir.controlplane.support.ControlPlaneInstance;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.DesiredConfig;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A real control plane serving HTTPS (a Spring Boot SSL bundle over the certificate that
 * {@code weir pki init} made, the CA brought as files) and real agents over {@code wss://} that
 * verify it against the cluster CA file. Data nodes' server certificates travel over that channel:
 * the lifetime is set to 15 s here, so the renewal at two thirds of it happens within the test,
 * while the agent stays connected.
 */
class AgentTlsEndToEndTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    static Path dir;

    static ControlPlaneInstance controlPlane;
    static HttpClient https;

    @BeforeAll
    static void start() throws Exception {
        Path pki = dir.resolve("pki");
        assertThat(PkiCommand.run(new String[] {"init", "--dir", pki.toString(), "--server-names", "localhost,127.0.0.1"},
                new PrintStream(new ByteArrayOutputStream()), System.err)).isZero();
        controlPlane = ControlPlaneInstance.start(Map.of(
                "server.ssl.bundle", "weir",
                "spring.ssl.bundle.pem.weir.keystore.certificate", "file:" + pki.resolve("controlplane.crt"),
                "spring.ssl.bundle.pem.weir.keystore.private-key", "file:" + pki.resolve("controlplane.key"),
                "weir.pki.ca-certificate", pki.resolve("ca.crt").toString(),
                "weir.pki.ca-private-key", pki.resolve("ca.key").toString(),
                "weir.pki.server-certificate-lifetime", "15s"));
        https = HttpClient.newBuilder().sslContext(ControlPlaneTrust.sslContext(pki.resolve("ca.crt"))).build();
    }

    @AfterAll
    static void stop() {
        if (controlPlane != null) {
            controlPlane.close();
        }
    }

    private static String base() {
        return "https://127.0.0.1:" + controlPlane.port();
    }

    private static JsonNode post(String path, String body) throws Exception {
        HttpResponse<String> r = https.send(HttpRequest.newBuilder(URI.create(base() + path))
                .header("Authorization", "Bearer " + IntegrationTest.ADMIN_TOKEN).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        return JSON.readTree(r.body());
    }

    private static QosAgent agent(String token, Path state, Path ca, List<ServerCertificate> certificates,
            List<String> disconnects, List<AutoCloseable> close) {
        QosExecutor executor = QosExecutor.builder(SchedulerConfig.builder().defaultTasks().build()).workers(1).build();
        QosAgent agent = QosAgent.builder().controlPlane(URI.create(base())).controlPlaneCa(ca).token(token)
                .stateDir(state).executor(executor).serverCertificates(true)
                .heartbeatInterval(Duration.ofMillis(500)).heartbeatTimeout(Duration.ofSeconds(30))
                .backoff(Duration.ofMillis(100), Duration.ofSeconds(1))
                .listener(new AgentListener() {
                    @Override
                    public void serverCertificate(ServerCertificate certificate) {
                        certificates.add(certificate);
                    }

                    @Override
                    public void disconnected(String reason) {
                        disconnects.add(reason);
                    }
                }).build();
        close.add(executor);
        close.add(agent);
        return agent;
    }

    @Test
    void anAgentOverWssGetsItsServerCertificateAndRenewsItAtTwoThirdsWithoutReconnecting() throws Exception {
        JsonNode node = post("/api/v1/nodes", "{\"name\":\"tls-" + UUID.randomUUID().toString().substring(0, 8)
                + "\",\"address\":\"127.0.0.1:10809\"}");
        String nodeId = node.get("id").asString();
        List<ServerCertificate> certificates = new CopyOnWriteArrayList<>();
        List<String> disconnects = new CopyOnWriteArrayList<>();
        List<AutoCloseable> close = new CopyOnWriteArrayList<>();
        Path state = dir.resolve("state-" + nodeId);
        try {
            QosAgent agent = agent(node.get("token").asString(), state, dir.resolve("pki/ca.crt"), certificates, disconnects,
                    close);
            agent.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> agent.state().connected() && agent.appliedConfig() != null
                    && agent.serverCertificate() != null);
            // the desired config came over wss and carries the cluster CA
            assertThat(agent.appliedConfig().tls().caCertificatesPem().get(0))
                    .isEqualTo(Files.readString(dir.resolve("pki/ca.crt")));

            ServerCertificate first = agent.serverCertificate();
            X509Certificate ca = ServerCertificates.certificates(Files.readString(dir.resolve("pki/ca.crt"))).get(0);
            first.certificate().verify(ca.getPublicKey());
            assertThat(first.certificate().getSubjectAlternativeNames())
                    .containsExactly(List.of(6, "urn:weir:node:" + nodeId), List.of(7, "127.0.0.1"));
            assertThat(first.certificate().getExtendedKeyUsage()).as("serverAuth, and clientAuth for the replication channel")
                    .containsExactly("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2");
            assertThat(Files.getPosixFilePermissions(state.resolve(ServerCertificates.KEY_FILE)))
                    .isEqualTo(PosixFilePermissions.fromString("rw-------"));
            assertThat(Files.readString(state.resolve(ServerCertificates.CERTIFICATE_FILE)))
                    .contains("BEGIN CERTIFICATE");

            // 15 s lifetime: renewed at two thirds of it, over the same connection
            await().atMost(Duration.ofSeconds(60)).until(() -> agent.serverCertificate() != first);
            ServerCertificate second = agent.serverCertificate();
            assertThat(second.certificate().getSerialNumber()).isNotEqualTo(first.certificate().getSerialNumber());
            assertThat(second.privateKey()).isNotEqualTo(first.privateKey());
            assertThat(second.certificate().getNotBefore()).isBefore(first.certificate().getNotAfter());
            // the agent puts a certificate in force, then tells its listener (on its event thread)
            await().atMost(Duration.ofSeconds(10)).until(() -> certificates.contains(second));
            assertThat(certificates).startsWith(first, second);
            assertThat(disconnects).as("the agent stayed connected").isEmpty();
            // what is stored is the new one: a restarted agent starts from it
            assertThat(ServerCertificates.open(state, java.time.Clock.systemUTC()).current().certificate())
                    .isEqualTo(second.certificate());
        } finally {
            closeAll(close);
        }
    }

    /**
     * A data node restarted while the control plane is down starts from what its agent kept: the
     * certificate must reach it before the cached config does, or the node acts on the config (its
     * replicated volumes open links to their copies) without its identity, in clear.
     */
    @Test
    void aRestartedAgentHandsOverItsKeptCertificateBeforeItsCachedConfig() throws Exception {
        JsonNode node = post("/api/v1/nodes", "{\"name\":\"tls-" + UUID.randomUUID().toString().substring(0, 8)
                + "\",\"address\":\"127.0.0.1:10809\"}");
        List<AutoCloseable> close = new CopyOnWriteArrayList<>();
        Path state = dir.resolve("state-" + node.get("id").asString());
        try {
            QosAgent first = agent(node.get("token").asString(), state, dir.resolve("pki/ca.crt"), new CopyOnWriteArrayList<>(),
                    new CopyOnWriteArrayList<>(), close);
            first.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> first.appliedConfig() != null && first.serverCertificate() != null);
            first.close();

            List<String> events = new CopyOnWriteArrayList<>();
            QosExecutor executor = QosExecutor.builder(SchedulerConfig.builder().defaultTasks().build()).workers(1).build();
            close.add(executor);
            QosAgent restarted = QosAgent.builder().controlPlane(URI.create("https://127.0.0.1:1")) // nobody listens there
                    .controlPlaneCa(dir.resolve("pki/ca.crt")).token(node.get("token").asString()).stateDir(state)
                    .executor(executor).serverCertificates(true).listener(new AgentListener() {
                        @Override
                        public void serverCertificate(ServerCertificate certificate) {
                            events.add("certificate");
                        }

                        @Override
                        public void applying(DesiredConfig config) {
                            events.add("config");
                        }
                    }).build();
            close.add(restarted);
            restarted.start();
            assertThat(events).as("what the restarted agent handed over, in order (%s)", restarted.state().lastError())
                    .containsExactly("certificate", "config");
        } finally {
            closeAll(close);
        }
    }

    /** A client certificate issued and then revoked reaches the connected agent's desired config, each within the push latency. */
    @Test
    void aRevocationReachesTheConnectedAgent() throws Exception {
        JsonNode node = post("/api/v1/nodes", "{\"name\":\"tls-" + UUID.randomUUID().toString().substring(0, 8)
                + "\",\"address\":\"127.0.0.1:10809\"}");
        String tenant = post("/api/v1/tenants", "{\"name\":\"tls-" + UUID.randomUUID().toString().substring(0, 8) + "\"}")
                .get("id").asString();
        post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"v\",\"sizeBytes\":1048576,\"nodeIds\":[\""
                + node.get("id").asString() + "\"]}");
        List<AutoCloseable> close = new CopyOnWriteArrayList<>();
        try {
            QosAgent agent = agent(node.get("token").asString(), dir.resolve("state-rev-" + node.get("id").asString()),
                    dir.resolve("pki/ca.crt"), new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>(), close);
            agent.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> agent.state().connected() && agent.appliedConfig() != null);
            JsonNode issued = post("/api/v1/tenants/" + tenant + "/client-certificates", "{\"name\":\"c\"}");
            String serial = issued.get("serial").asString();
            await().atMost(Duration.ofSeconds(30)).until(() -> agent.appliedConfig().tls().clientCertificates().stream()
                    .anyMatch(c -> c.serial().equals(serial) && c.tenantId().toString().equals(tenant)));
            HttpResponse<String> revoke = https.send(HttpRequest.newBuilder(URI.create(base() + "/api/v1/tenants/" + tenant
                    + "/client-certificates/" + issued.get("id").asString()))
                    .header("Authorization", "Bearer " + IntegrationTest.ADMIN_TOKEN).DELETE().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(revoke.statusCode()).isEqualTo(204);
            await().atMost(Duration.ofSeconds(30)).until(() -> agent.appliedConfig().tls().revoked().stream()
                    .anyMatch(c -> c.serial().equals(serial)));
            assertThat(agent.appliedConfig().tls().clientCertificates()).noneMatch(c -> c.serial().equals(serial));
        } finally {
            closeAll(close);
        }
    }

    @Test
    void anAgentThatTrustsAnotherCaDoesNotConnect() throws Exception {
        Path other = dir.resolve("other-pki");
        assertThat(PkiCommand.run(new String[] {"init", "--dir", other.toString(), "--server-names", "localhost,127.0.0.1"},
                new PrintStream(new ByteArrayOutputStream()), System.err)).isZero();
        JsonNode node = post("/api/v1/nodes", "{\"name\":\"tls-" + UUID.randomUUID().toString().substring(0, 8) + "\"}");
        List<AutoCloseable> close = new CopyOnWriteArrayList<>();
        try {
            QosAgent agent = agent(node.get("token").asString(), dir.resolve("state-other"), other.resolve("ca.crt"),
                    new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>(), close);
            agent.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> agent.state().lastError() != null);
            assertThat(agent.state().lastError()).contains("cannot connect");
            assertThat(agent.state().connected()).isFalse();
            assertThat(agent.serverCertificate()).isNull();
        } finally {
            closeAll(close);
        }
    }

    private static void closeAll(List<AutoCloseable> close) throws Exception {
        for (int i = close.size() - 1; i >= 0; i--) {
            close.get(i).close();
        }
    }

    @Test
    void theControlPlaneServesOnlyHttps() throws Exception {
        HttpResponse<String> health = https.send(HttpRequest.newBuilder(URI.create(base() + "/actuator/health")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        HttpResponse<String> plain = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + controlPlane.port() + "/actuator/health")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(plain.statusCode()).isEqualTo(400);
        assertThat(plain.body()).doesNotContain("UP");
        // the image's health check finds HTTPS from SERVER_SSL_BUNDLE and verifies it against the cluster CA
        String target = io.weir.HealthProbeAccess.target(List.of("java", "io.weir.Main", "controlplane",
                "--server.port=" + controlPlane.port()), Map.of("SERVER_SSL_BUNDLE", "weir"));
        assertThat(target).startsWith("https://127.0.0.1:");
        assertThat(io.weir.HealthProbeAccess.check(target, dir.resolve("pki/ca.crt"))).isNull();
        Path other = dir.resolve("probe-other-pki");
        assertThat(PkiCommand.run(new String[] {"init", "--dir", other.toString(), "--server-names", "127.0.0.1"},
                new PrintStream(new ByteArrayOutputStream()), System.err)).isZero();
        assertThat(io.weir.HealthProbeAccess.check(target, other.resolve("ca.crt"))).contains("PKIX");
    }
}
