package io.weir.datanode;

import static io.weir.support.Bytes.MiB;
import static io.weir.support.Patience.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.OpenApiSpec;
import io.weir.support.TestPki;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * What a real data node, started as {@code weir datanode --control-plane ...} starts it, reports
 * to a real control plane, as {@code GET /api/v1/nodes/{id}} shows it: its NBD listen address, its
 * exports with their sizes, and the clients connected to each, following a real NBD client as it
 * connects and disconnects; the response conforms to the committed OpenAPI document.
 */
class DataNodeStatusReportTest extends IntegrationTest {

    @TempDir
    Path dir;

    private DataNodeCommand.Running running;
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @AfterEach
    void stop() {
        if (running != null) {
            running.stop(Duration.ofSeconds(5), new PrintStream(err, true, StandardCharsets.UTF_8));
        }
    }

    @Test
    void getNodeShowsTheListenAddressTheExportsWithTheirSizesAndTheConnectedClientsTheNodeReports() throws Exception {
        String tenantName = unique("rep");
        String tenant = id(api.post("/api/v1/tenants", "{\"name\":\"" + tenantName + "\"}"));
        HttpApi.Response created = api.post("/api/v1/nodes", "{\"name\":\"" + unique("dn") + "\"}");
        String nodeId = id(created);
        String token = created.json().get("token").asString();
        String small = id(api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"small\",\"sizeBytes\":" + 16 * MiB
                + ",\"nodeIds\":[\"" + nodeId + "\"]}"));
        String large = id(api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"large\",\"sizeBytes\":" + 48 * MiB
                + ",\"nodeIds\":[\"" + nodeId + "\"]}"));

        running = DataNodeCommand.start(DataNodeCommand.parse(new String[] {"--control-plane", "http://127.0.0.1:" + port,
                "--data-dir", dir.resolve("data").toString(), "--state-dir", dir.resolve("agent-state").toString(),
                "--listen", "127.0.0.1:0", "--workers", "2"}, Map.of("WEIR_TOKEN", token)),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String listen = "127.0.0.1:" + running.node().listenAddress().getPort();

        awaitIdleReport(nodeId, listen, large, small, tenantName);

        // the node requires TLS (the datanode command's default): a client of the tenant's, with a
        // certificate from the API, once the node has its own from the control plane
        JsonNode issued = api.post("/api/v1/tenants/" + tenant + "/client-certificates", "{\"name\":\"status\"}").json();
        javax.net.ssl.SSLContext tls = TestPki.clientContext(issued.get("privateKeyPem").asString(),
                issued.get("certificatePem").asString(), issued.get("caCertificatePem").asString());
        NbdTestClient plain = new NbdTestClient(running.node().listenAddress()).handshake();
        assertThat(plain.option(Nbd.OPT_GO, NbdTestClient.goData(tenantName + "/small")).get(0).type())
                .as("GO in clear").isEqualTo(Nbd.REP_ERR_TLS_REQD);
        plain.close();
        NbdTestClient overTls = await().atMost(PATIENCE).ignoreExceptions().until(() -> {
            NbdTestClient c = new NbdTestClient(running.node().listenAddress()).handshake();
            if (c.startTls(tls).type() != Nbd.REP_ACK) {
                c.close();
                return null;
            }
            return c;
        }, java.util.Objects::nonNull);
        try (NbdTestClient client = overTls.negotiate(tenantName + "/small")) {
            client.write(0, NbdServerTest.bytes(4096, 3));
            await().atMost(PATIENCE).untilAsserted(() -> assertThat(exports(report(nodeId))).containsExactly(
                    export(large, tenantName + "/large", 48 * MiB, 0),
                    export(small, tenantName + "/small", 16 * MiB, 1)));
            HttpApi.Response node = api.get("/api/v1/nodes/" + nodeId);
            OpenApiSpec spec = OpenApiSpec.committed();
            assertThat(spec.violations(node.json(), "/components/schemas/Node"))
                    .as("GET /nodes/{id} with a report, against the committed OpenAPI document: " + node).isEmpty();
            client.disconnect();
        }

        awaitIdleReport(nodeId, listen, large, small, tenantName);
    }

    /** Waits until the node reports its listen address and both exports with no client. */
    private void awaitIdleReport(String nodeId, String listen, String large, String small, String tenantName) {
        await().atMost(PATIENCE).untilAsserted(() -> {
            JsonNode report = report(nodeId);
            assertThat(report.get("listenAddress").asString()).isEqualTo(listen);
            assertThat(exports(report)).containsExactly(
                    export(large, tenantName + "/large", 48 * MiB, 0),
                    export(small, tenantName + "/small", 16 * MiB, 0));
        });
    }

    /** {@code status.dataNode} of {@code GET /api/v1/nodes/{id}}, present and timestamped. */
    private JsonNode report(String nodeId) {
        HttpApi.Response r = api.get("/api/v1/nodes/" + nodeId);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        JsonNode report = r.json().get("status").get("dataNode");
        assertThat(report).as(r.toString()).isNotNull();
        assertThat(report.isNull()).as("the node has reported: " + r + "\nits agent: " + running.agent().state()
                + "\nthe node's output:\n" + err.toString(StandardCharsets.UTF_8)).isFalse();
        assertThat(report.get("reportedAt").asString()).as(r.toString()).isNotBlank();
        return report;
    }

    /** The exports of a report, one string each, in the order reported. */
    private static java.util.List<String> exports(JsonNode report) {
        java.util.List<String> list = new java.util.ArrayList<>();
        for (JsonNode e : report.get("exports")) {
            list.add(export(e.get("volumeId").asString(), e.get("name").asString(), e.get("sizeBytes").asLong(),
                    e.get("clients").asInt()));
        }
        return list;
    }

    private static String export(String volumeId, String name, long sizeBytes, int clients) {
        return volumeId + " " + name + " " + sizeBytes + " bytes, " + clients + " clients";
    }

    private static String id(HttpApi.Response r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }
}
