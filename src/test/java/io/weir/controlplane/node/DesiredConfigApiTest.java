package io.weir.controlplane.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;

/** {@code GET /nodes/{nodeId}/desired-config}: the snapshot the push channel sends to a node's agent. */
class DesiredConfigApiTest extends IntegrationTest {

    private static final long SIZE = 256 * 4096;

    private static final String OVERRIDE = """
            {"tasks":[
              {"name":"foreground","share":800},
              {"name":"flush","share":100,"dynamic":{"t1":0.3,"t2":0.7,"low":20,"high":600,"curve":"linear"}}
            ]}""";

    @Autowired
    ConfigRevisions revisions;

    private String node() {
        Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("dc-node") + "\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }

    private JsonNode tenant(String name, String extra) {
        Response r = api.post("/api/v1/tenants", "{\"name\":\"" + name + "\"" + extra + "}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json();
    }

    private JsonNode volume(String tenantId, String name, String nodeId, String extra) {
        Response r = api.post("/api/v1/tenants/" + tenantId + "/volumes",
                "{\"name\":\"" + name + "\",\"sizeBytes\":" + SIZE + ",\"nodeIds\":[\"" + nodeId + "\"]" + extra + "}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json();
    }

    private JsonNode desired(String nodeId) {
        Response r = api.get("/api/v1/nodes/" + nodeId + "/desired-config");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.contentType()).startsWith("application/json");
        return r.json();
    }

    @Test
    void snapshotHoldsExactlyTheNodesVolumesTheirTenantsAndItsTaskShareOverride() {
        String node = node();
        String otherNode = node();
        JsonNode alpha = tenant(unique("dc-a"), ",\"weight\":300,\"maxIops\":9000");
        JsonNode beta = tenant(unique("dc-b"), ",\"maxBytesPerSec\":104857600");
        JsonNode elsewhere = tenant(unique("dc-c"), "");
        JsonNode v1 = volume(alpha.get("id").asString(), "vol-1", node, ",\"overrides\":{\"weight\":250,\"maxIops\":1234}");
        JsonNode v2 = volume(beta.get("id").asString(), "vol-2", node, "");
        JsonNode away = volume(elsewhere.get("id").asString(), "vol-away", otherNode, "");
        JsonNode away2 = volume(alpha.get("id").asString(), "vol-away-2", otherNode, "");
        assertThat(api.put("/api/v1/nodes/" + node + "/task-shares", OVERRIDE, null).status()).isEqualTo(200);

        JsonNode snapshot = desired(node);
        assertThat(snapshot.propertyNames()).containsExactlyInAnyOrder("nodeId", "revision", "tasks", "tenants", "volumes",
                "usageReportIntervalSeconds", "tls", "ioCost");
        assertThat(snapshot.get("nodeId").asString()).isEqualTo(node);
        assertThat(snapshot.get("revision").asLong()).isEqualTo(revisions.current());

        JsonNode tasks = snapshot.get("tasks");
        assertThat(tasks.findValuesAsString("name")).containsExactly("foreground", "flush");
        assertThat(tasks.get(0).get("share").asInt()).isEqualTo(800);
        assertThat(tasks.get(1).get("dynamic").get("curve").asString()).isEqualTo("linear");
        assertThat(tasks.get(1).get("dynamic").get("high").asInt()).isEqualTo(600);

        JsonNode volumes = snapshot.get("volumes");
        assertThat(volumes.findValuesAsString("id")).containsExactlyInAnyOrder(v1.get("id").asString(), v2.get("id").asString())
                .doesNotContain(away.get("id").asString(), away2.get("id").asString());
        for (JsonNode placed : volumes) {
            JsonNode created = placed.get("id").asString().equals(v1.get("id").asString()) ? v1 : v2;
            assertThat(placed.get("tenantId")).isEqualTo(created.get("tenantId"));
            assertThat(placed.get("name")).isEqualTo(created.get("name"));
            assertThat(placed.get("sizeBytes").asLong()).isEqualTo(SIZE);
            assertThat(placed.get("effectivePolicy")).as("effective policy").isEqualTo(created.get("effectivePolicy"));
            assertThat(placed.has("policy")).as("named effectivePolicy, as in the REST volume").isFalse();
            assertThat(placed.get("effectivePolicy").get("costModel").get("minChargeBytes").isInt()).isTrue();
        }
        JsonNode v1Policy = volumes.get(volumes.get(0).get("id").asString().equals(v1.get("id").asString()) ? 0 : 1).get("effectivePolicy");
        assertThat(v1Policy.get("weight").asInt()).isEqualTo(250);
        assertThat(v1Policy.get("maxIops").asLong()).isEqualTo(1234);

        JsonNode tenants = snapshot.get("tenants");
        assertThat(tenants.findValuesAsString("id")).containsExactlyInAnyOrder(alpha.get("id").asString(), beta.get("id").asString());
        for (JsonNode t : tenants) {
            JsonNode created = t.get("id").asString().equals(alpha.get("id").asString()) ? alpha : beta;
            assertThat(t.get("name")).isEqualTo(created.get("name"));
            assertThat(t.get("weight")).isEqualTo(created.get("weight"));
            assertThat(t.get("maxIops")).isEqualTo(created.get("maxIops"));
            assertThat(t.get("maxBytesPerSec")).isEqualTo(created.get("maxBytesPerSec"));
        }

        JsonNode other = desired(otherNode);
        assertThat(other.get("volumes").findValuesAsString("id"))
                .containsExactlyInAnyOrder(away.get("id").asString(), away2.get("id").asString());
        assertThat(other.get("tenants").findValuesAsString("id"))
                .containsExactlyInAnyOrder(alpha.get("id").asString(), elsewhere.get("id").asString());
        assertThat(other.get("tasks")).as("no override: cluster default").isEqualTo(api.get("/api/v1/task-shares").json().get("tasks"));
    }

    @Test
    void aConfigChangeBumpsTheRevisionTheSnapshotCarries() {
        String node = node();
        JsonNode tenant = tenant(unique("dc-rev"), "");
        volume(tenant.get("id").asString(), "vol", node, "");
        JsonNode before = desired(node);

        Response patched = api.patch("/api/v1/tenants/" + tenant.get("id").asString(), "{\"weight\":4321}", null);
        assertThat(patched.status()).isEqualTo(200);
        JsonNode after = desired(node);
        assertThat(after.get("revision").asLong()).isGreaterThan(before.get("revision").asLong());
        assertThat(after.get("revision").asLong()).isEqualTo(revisions.current());
        assertThat(after.get("tenants").get(0).get("weight").asInt()).isEqualTo(4321);

        assertThat(api.put("/api/v1/nodes/" + node + "/task-shares", OVERRIDE, null).status()).isEqualTo(200);
        JsonNode withOverride = desired(node);
        assertThat(withOverride.get("revision").asLong()).isGreaterThan(after.get("revision").asLong());
        assertThat(withOverride.get("tasks").get(0).get("share").asInt()).isEqualTo(800);
    }

    @Test
    void aNodeWithoutVolumesGetsTheClusterDefaultTasksAndNothingElse() {
        String node = node();
        JsonNode snapshot = desired(node);
        assertThat(snapshot.get("tenants").isEmpty()).isTrue();
        assertThat(snapshot.get("volumes").isEmpty()).isTrue();
        assertThat(snapshot.get("tasks")).isEqualTo(api.get("/api/v1/task-shares").json().get("tasks"));
        assertThat(snapshot.get("revision").asLong()).isEqualTo(revisions.current());
    }

    @Test
    void nodeLabelChangesLeaveTheSnapshotRevisionAlone() {
        String node = node();
        long revision = desired(node).get("revision").asLong();
        assertThat(api.patch("/api/v1/nodes/" + node, "{\"labels\":{\"zone\":\"z9\"},\"address\":\"h:10809\"}", null).status())
                .isEqualTo(200);
        assertThat(desired(node).get("revision").asLong()).isEqualTo(revision);
    }

    @Test
    void unknownNodeAnswers404AndMalformedIdAnswers400() {
        Response missing = api.get("/api/v1/nodes/" + UUID.randomUUID() + "/desired-config");
        assertThat(missing.status()).isEqualTo(404);
        assertThat(missing.contentType()).startsWith("application/problem+json");
        assertThat(api.get("/api/v1/nodes/xyz/desired-config").status()).isEqualTo(400);
    }
}
