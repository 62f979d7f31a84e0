package io.weir.controlplane.token;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Deleting a tenant or a node removed its tokens (and a node's task-share override) through
 * {@code ON DELETE CASCADE}, and the audit log showed only the tenant or node going. Every
 * removal is now recorded: each dependant gets its own delete entry, by the same actor, in the
 * same transaction as the delete that caused it.
 */
class CascadingDeleteAuditTest extends IntegrationTest {

    private List<JsonNode> audit(String resourceType, String resourceId) {
        Response r = newestPage("/api/v1/audit?resourceType=" + resourceType + "&resourceId=" + resourceId);
        assertThat(r.status()).isEqualTo(200);
        return r.json().get("items").valueStream().toList();
    }

    @Test
    void deletingATenantRecordsTheRevocationOfEachOfItsTokens() {
        Response tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("casc") + "\"}");
        String tenantId = tenant.json().get("id").asString();
        Response admin = api.post("/api/v1/tokens", "{\"name\":\"" + unique("casc-ta") + "\",\"role\":\"tenant-admin\","
                + "\"tenantId\":\"" + tenantId + "\"}");
        Response viewer = api.post("/api/v1/tokens", "{\"name\":\"" + unique("casc-v") + "\",\"role\":\"viewer\","
                + "\"tenantId\":\"" + tenantId + "\"}");
        HttpApi tenantAdmin = apiAs(admin.json().get("token").asString());

        assertThat(api.delete("/api/v1/tenants/" + tenantId, null).status()).isEqualTo(204);
        JsonNode tenantDelete = audit("tenant", tenantId).get(audit("tenant", tenantId).size() - 1);
        assertThat(tenantDelete.get("action").asString()).isEqualTo("tenant.delete");

        for (Response token : List.of(admin, viewer)) {
            String id = token.json().get("id").asString();
            List<JsonNode> entries = audit("token", id);
            assertThat(entries).extracting(e -> e.get("action").asString()).containsExactly("token.create", "token.delete");
            JsonNode delete = entries.get(1);
            assertThat(delete.get("before").get("name").asString()).isEqualTo(token.json().get("name").asString());
            assertThat(delete.get("after").isNull()).isTrue();
            assertThat(delete.get("tenantId").asString()).isEqualTo(tenantId);
            assertThat(delete.get("actor").asString()).isEqualTo(tenantDelete.get("actor").asString());
        }
        assertThat(tenantAdmin.get("/api/v1/tenants/" + tenantId).status()).isEqualTo(401);
    }

    @Test
    void deletingANodeRecordsTheRevocationOfItsTokenAndTheRemovalOfItsTaskShareOverride() {
        Response node = api.post("/api/v1/nodes", "{\"name\":\"" + unique("casc-node") + "\"}");
        String nodeId = node.json().get("id").asString();
        HttpApi agent = apiAs(node.json().get("token").asString());
        Response override = api.put("/api/v1/nodes/" + nodeId + "/task-shares",
                "{\"tasks\":[{\"name\":\"foreground\",\"share\":600},{\"name\":\"gc\",\"share\":100}]}", null);
        assertThat(override.status()).isEqualTo(200);
        String nodeTokenId = tokenIdOfNode(nodeId);

        assertThat(api.delete("/api/v1/nodes/" + nodeId, null).status()).isEqualTo(204);

        assertThat(audit("token", nodeTokenId)).extracting(e -> e.get("action").asString())
                .containsExactly("token.create", "token.delete");
        List<JsonNode> shares = audit("task-shares", nodeId);
        assertThat(shares).extracting(e -> e.get("action").asString()).containsExactly("task-shares.create", "task-shares.delete");
        assertThat(shares.get(1).get("before").get("tasks").get(0).get("share").asInt()).isEqualTo(600);
        assertThat(agent.get("/api/v1/nodes/" + nodeId + "/desired-config").status()).isEqualTo(401);
    }

    private String tokenIdOfNode(String nodeId) {
        Response tokens = newestPage("/api/v1/tokens?role=node");
        return tokens.json().get("items").valueStream()
                .filter(t -> nodeId.equals(t.get("nodeId").asString()))
                .map(t -> t.get("id").asString())
                .findFirst().orElseThrow();
    }
}
