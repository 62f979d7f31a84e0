package io.weir.controlplane.volume;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A tenant-admin could place its volumes on any node, and "no such node" told it which node ids
 * exist. Now an admin gives each tenant a nodeSelector (labels); a tenant-admin places volumes
 * only on nodes that carry all of them, and a node it may not use is refused exactly like one
 * that does not exist. Admins place anywhere.
 */
class TenantNodeSelectorTest extends IntegrationTest {

    private String pool;
    private String tenant;
    private String ownNode;
    private String foreignNode;
    private HttpApi tenantAdmin;

    @BeforeEach
    void tenantWithASelectorAndTwoNodes() {
        pool = unique("pool");
        tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("sel") + "\",\"nodeSelector\":{\"pool\":\"" + pool + "\"}}")
                .json().get("id").asString();
        ownNode = node("{\"pool\":\"" + pool + "\",\"rack\":\"r1\"}");
        foreignNode = node("{\"pool\":\"" + unique("other") + "\"}");
        tenantAdmin = apiAs("tenant-admin", UUID.fromString(tenant), null);
    }

    private String node(String labels) {
        Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("sel-node") + "\",\"labels\":" + labels + "}");
        assertThat(r.status()).isEqualTo(201);
        return r.json().get("id").asString();
    }

    private Response place(HttpApi caller, String nodeId) {
        return caller.post("/api/v1/tenants/" + tenant + "/volumes",
                "{\"name\":\"" + unique("v") + "\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + nodeId + "\"]}");
    }

    @Test
    void aTenantAdminPlacesOnNodesCarryingItsTenantsSelector() {
        Response r = place(tenantAdmin, ownNode);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        assertThat(r.json().get("nodeIds").get(0).asString()).isEqualTo(ownNode);
    }

    @Test
    void aNodeTheTenantMayNotUseIsRefusedExactlyLikeOneThatDoesNotExist() {
        String missing = UUID.randomUUID().toString();
        Response foreign = place(tenantAdmin, foreignNode);
        Response unknown = place(tenantAdmin, missing);
        assertThat(foreign.status()).isEqualTo(400);
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(foreign.body().replace(foreignNode, "<id>")).isEqualTo(unknown.body().replace(missing, "<id>"));
        // Moving an existing volume there is refused the same way.
        String volume = place(tenantAdmin, ownNode).json().get("id").asString();
        Response move = tenantAdmin.patch("/api/v1/volumes/" + volume, "{\"nodeIds\":[\"" + foreignNode + "\"]}", null);
        assertThat(move.status()).isEqualTo(400);
        assertThat(move.json().get("errors").get(0).get("field").asString()).isEqualTo("nodeIds");
    }

    @Test
    void aTenantWithoutASelectorPlacesNothingAndAnAdminPlacesAnywhere() {
        String bare = api.post("/api/v1/tenants", "{\"name\":\"" + unique("bare") + "\"}").json().get("id").asString();
        HttpApi bareAdmin = apiAs("tenant-admin", UUID.fromString(bare), null);
        Response refused = bareAdmin.post("/api/v1/tenants/" + bare + "/volumes",
                "{\"name\":\"v\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + ownNode + "\"]}");
        assertThat(refused.status()).isEqualTo(400);
        assertThat(place(api, foreignNode).status()).isEqualTo(201);
        // What an admin placed stays when the tenant-admin edits something else.
        String placedByAdmin = place(api, foreignNode).json().get("id").asString();
        Response grown = tenantAdmin.patch("/api/v1/volumes/" + placedByAdmin, "{\"sizeBytes\":2097152}", null);
        assertThat(grown.status()).as(grown.toString()).isEqualTo(200);
    }

    @Test
    void aTenantsCallersListTheNodesTheyMayUseAndOnlyAnAdminSetsTheSelector() {
        Response listed = tenantAdmin.get("/api/v1/tenants/" + tenant + "/nodes");
        assertThat(listed.status()).isEqualTo(200);
        assertThat(listed.json().get("items").findValuesAsString("id")).containsExactly(ownNode);
        assertThat(listed.json().get("items").get(0).has("status")).isFalse();
        assertThat(tenantAdmin.patch("/api/v1/tenants/" + tenant, "{\"nodeSelector\":{}}", null).status()).isEqualTo(403);
        Response tenantRead = tenantAdmin.get("/api/v1/tenants/" + tenant);
        assertThat(tenantRead.json().get("nodeSelector").get("pool").asString()).isEqualTo(pool);
    }
}
