package io.weir.controlplane.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import org.junit.jupiter.api.Test;

/** A node's token comes with its create response, once, and opens that node's config only. */
class NodeTokenTest extends IntegrationTest {

    private Response createNode() {
        Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("nt") + "\"}");
        assertThat(r.status()).isEqualTo(201);
        return r;
    }

    @Test
    void createResponseCarriesTheTokenOnceAndNothingElseDoes() {
        Response created = createNode();
        String id = created.json().get("id").asString();
        String token = created.json().get("token").asString();
        assertThat(token).matches("weir_[0-9a-f]{32}_[A-Za-z0-9_-]{43}");
        assertThat(created.header("Cache-Control")).contains("no-store");
        assertThat(api.get("/api/v1/nodes/" + id).json().has("token")).isFalse();
        assertThat(newestPage("/api/v1/nodes?").body()).contains(id).doesNotContain(token);
        Response tokens = newestPage("/api/v1/tokens?role=node");
        assertThat(tokens.body()).contains("\"nodeId\":\"" + id + "\"").doesNotContain(token);
        Response audit = api.get("/api/v1/audit?resourceType=node&resourceId=" + id);
        assertThat(audit.json().get("items").findValuesAsString("action")).containsExactly("node.create");
        assertThat(audit.body()).doesNotContain(token);
    }

    @Test
    void aNodeTokenReadsItsOwnConfigOnly() {
        Response one = createNode();
        Response two = createNode();
        HttpApi node1 = apiAs(one.json().get("token").asString());
        String own = "/api/v1/nodes/" + one.json().get("id").asString() + "/desired-config";
        String other = "/api/v1/nodes/" + two.json().get("id").asString() + "/desired-config";
        Response config = node1.get(own);
        assertThat(config.status()).isEqualTo(200);
        assertThat(config.json().get("nodeId").asString()).isEqualTo(one.json().get("id").asString());
        Response refused = node1.get(other);
        assertThat(refused.status()).isEqualTo(404);
        assertThat(refused.contentType()).startsWith("application/problem+json");
        assertThat(node1.get("/api/v1/nodes/00000000-0000-4000-8000-000000000000/desired-config").status()).isEqualTo(404);
        // Nothing else is open to it.
        assertThat(node1.get("/api/v1/nodes/" + one.json().get("id").asString()).status()).isEqualTo(403);
        assertThat(node1.get("/api/v1/volumes").status()).isEqualTo(403);
        assertThat(node1.get("/api/v1/tenants").status()).isEqualTo(403);
        assertThat(node1.get("/api/v1/task-shares").status()).isEqualTo(403);
        assertThat(node1.post("/api/v1/nodes", "{\"name\":\"" + unique("nt") + "\"}").status()).isEqualTo(403);
    }

    @Test
    void deletingTheNodeRevokesItsToken() {
        Response created = createNode();
        HttpApi node = apiAs(created.json().get("token").asString());
        String id = created.json().get("id").asString();
        assertThat(node.get("/api/v1/nodes/" + id + "/desired-config").status()).isEqualTo(200);
        assertThat(api.delete("/api/v1/nodes/" + id, null).status()).isEqualTo(204);
        assertThat(node.get("/api/v1/nodes/" + id + "/desired-config").status()).isEqualTo(401);
    }

    @Test
    void aTenantBoundViewerSeesNoNodes() {
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("nt") + "\"}").json().get("id").asString();
        HttpApi viewer = apiAs("viewer", java.util.UUID.fromString(tenant), null);
        String node = createNode().json().get("id").asString();
        assertThat(viewer.get("/api/v1/nodes").status()).isEqualTo(403);
        assertThat(viewer.get("/api/v1/nodes/" + node + "/desired-config").status()).isEqualTo(403);
        assertThat(viewer.get("/actuator/prometheus").status()).isEqualTo(403);
    }
}
