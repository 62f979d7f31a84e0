package io.weir.controlplane.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.transaction.IllegalTransactionStateException;
import tools.jackson.databind.JsonNode;

class AuditLogTest extends IntegrationTest {

    @Autowired
    AuditLog audit;

    private JsonNode entries(HttpApi caller, String query) {
        Response r = caller.get("/api/v1/audit?size=500&" + query);
        assertThat(r.status()).isEqualTo(200);
        return r.json().get("items");
    }

    @Test
    void tenantChangesAreRecordedWithActorAndBeforeAndAfter() {
        String name = unique("au");
        Response created = api.post("/api/v1/tenants", "{\"name\":\"" + name + "\"}");
        String id = created.json().get("id").asString();
        api.patch("/api/v1/tenants/" + id, "{\"weight\":300}", null);
        api.delete("/api/v1/tenants/" + id, null);

        JsonNode items = entries(api, "resourceType=tenant&resourceId=" + id);
        assertThat(items.findValuesAsString("action")).containsExactly("tenant.create", "tenant.update", "tenant.delete");
        JsonNode create = items.get(0);
        assertThat(create.get("actorType").asString()).isEqualTo("token");
        assertThat(create.get("actorName").asString()).isEqualTo("bootstrap-admin");
        assertThat(create.get("tenantId").asString()).isEqualTo(id);
        assertThat(create.get("before").isNull()).isTrue();
        assertThat(create.get("after")).isEqualTo(created.json());
        JsonNode update = items.get(1);
        assertThat(update.get("before").get("weight").asInt()).isEqualTo(100);
        assertThat(update.get("after").get("weight").asInt()).isEqualTo(300);
        JsonNode delete = items.get(2);
        assertThat(delete.get("before").get("name").asString()).isEqualTo(name);
        assertThat(delete.get("after").isNull()).isTrue();
        assertThat(Instant.parse(delete.get("occurredAt").asString()))
                .isAfterOrEqualTo(Instant.parse(create.get("occurredAt").asString()));
    }

    @Test
    void policyAndVolumeChangesAreRecordedAndATenantAdminSeesOnlyItsOwn() {
        String policyId = api.post("/api/v1/policies", "{\"name\":\"" + unique("au") + "\"}").json().get("id").asString();
        api.patch("/api/v1/policies/" + policyId, "{\"weight\":222}", null);
        api.delete("/api/v1/policies/" + policyId, null);
        assertThat(entries(api, "resourceType=policy&resourceId=" + policyId).findValuesAsString("action"))
                .containsExactly("policy.create", "policy.update", "policy.delete");

        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("au") + "\"}").json().get("id").asString();
        HttpApi tenantAdmin = apiAs("tenant-admin", UUID.fromString(tenant), null);
        Response volume = tenantAdmin.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"v\",\"sizeBytes\":1048576}");
        String volumeId = volume.json().get("id").asString();
        tenantAdmin.patch("/api/v1/volumes/" + volumeId, "{\"sizeBytes\":2097152}", null);
        tenantAdmin.delete("/api/v1/volumes/" + volumeId, null);

        JsonNode own = entries(tenantAdmin, "resourceType=volume&resourceId=" + volumeId);
        assertThat(own.findValuesAsString("action")).containsExactly("volume.create", "volume.update", "volume.delete");
        assertThat(own.get(0).get("tenantId").asString()).isEqualTo(tenant);
        assertThat(own.get(0).get("actorName").asString()).startsWith("t-tenant-admin");
        assertThat(own.get(1).get("before").get("sizeBytes").asLong()).isEqualTo(1048576);
        assertThat(own.get(1).get("after").get("sizeBytes").asLong()).isEqualTo(2097152);
        // Global policies belong to no tenant: a tenant-admin's audit view does not show them.
        assertThat(entries(tenantAdmin, "resourceId=" + policyId).isEmpty()).isTrue();
        assertThat(entries(tenantAdmin, "size=500").findValuesAsString("tenantId")).allMatch(tenant::equals);
    }

    @Test
    void aTenantAdminSeesAdminActorsByNameOnlyNotByTokenId() {
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("au") + "\"}").json().get("id").asString();
        api.patch("/api/v1/tenants/" + tenant, "{\"weight\":150}", null);
        String adminId = entries(api, "resourceId=" + tenant).get(0).get("actor").asString();
        assertThat(adminId).isNotBlank();

        HttpApi tenantAdmin = apiAs("tenant-admin", UUID.fromString(tenant), null);
        tenantAdmin.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"v\",\"sizeBytes\":1048576}");
        JsonNode seen = entries(tenantAdmin, "tenantId=" + tenant);
        JsonNode byAdmin = seen.get(0);
        assertThat(byAdmin.get("action").asString()).isEqualTo("tenant.create");
        assertThat(byAdmin.get("actorType").asString()).isEqualTo("token");
        assertThat(byAdmin.get("actorName").asString()).isEqualTo("bootstrap-admin");
        assertThat(byAdmin.get("actor").isNull()).as(byAdmin.toString()).isTrue();
        JsonNode byTenantAdmin = seen.get(seen.size() - 1);
        assertThat(byTenantAdmin.get("action").asString()).isEqualTo("volume.create");
        assertThat(byTenantAdmin.get("actor").asString()).isNotBlank();
        // Nor can it test an admin's id through the filter; the name still filters.
        assertThat(entries(tenantAdmin, "actor=" + adminId).isEmpty()).isTrue();
        assertThat(entries(tenantAdmin, "actor=bootstrap-admin").findValuesAsString("action"))
                .containsExactly("tenant.create", "tenant.update", "token.create");
        // An admin sees every actor.
        assertThat(entries(api, "tenantId=" + tenant).get(0).get("actor").asString()).isEqualTo(adminId);
    }

    @Test
    void refusedChangesLeaveNoEntry() {
        Response created = api.post("/api/v1/tenants", "{\"name\":\"" + unique("au") + "\"}");
        String id = created.json().get("id").asString();
        assertThat(api.patch("/api/v1/tenants/" + id, "{\"weight\":0}", null).status()).isEqualTo(400);
        assertThat(api.patch("/api/v1/tenants/" + id, "{\"weight\":5}", "\"42\"").status()).isEqualTo(412);
        assertThat(entries(api, "resourceId=" + id).findValuesAsString("action")).containsExactly("tenant.create");
    }

    @Test
    void recordOutsideATransactionIsRefused() {
        assertThatThrownBy(() -> audit.record("tenant.update", "tenant", UUID.randomUUID(), null, null, null))
                .isInstanceOf(IllegalTransactionStateException.class);
    }

    @Test
    void filtersByActorAndTime() {
        String viewerName = unique("auditor");
        Response token = api.post("/api/v1/tokens", "{\"name\":\"" + viewerName + "\",\"role\":\"viewer\"}");
        String tokenId = token.json().get("id").asString();
        JsonNode byResource = entries(api, "resourceType=token&resourceId=" + tokenId);
        assertThat(byResource.findValuesAsString("action")).containsExactly("token.create");
        assertThat(byResource.get(0).get("after").get("name").asString()).isEqualTo(viewerName);
        assertThat(byResource.get(0).get("after").has("token")).isFalse();

        clock.advance(Duration.ofHours(3));
        Instant later = clock.instant();
        api.post("/api/v1/tenants", "{\"name\":\"" + unique("au") + "\"}");
        JsonNode recent = entries(api, "from=" + later.minusSeconds(1));
        assertThat(recent.findValuesAsString("action")).contains("tenant.create").doesNotContain("token.create");
        JsonNode old = entries(api, "resourceId=" + tokenId + "&to=" + later.minusSeconds(1));
        assertThat(old.size()).isEqualTo(1);

        JsonNode mine = entries(api, "actor=bootstrap-admin&resourceId=" + tokenId);
        assertThat(mine.size()).isEqualTo(1);
        assertThat(entries(api, "actor=" + unique("nobody")).isEmpty()).isTrue();
    }

    @Test
    void badFiltersAnswer400() {
        assertThat(api.get("/api/v1/audit?from=yesterday").status()).isEqualTo(400);
        assertThat(api.get("/api/v1/audit?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z").status()).isEqualTo(400);
        assertThat(api.get("/api/v1/audit?size=0").status()).isEqualTo(400);
    }

    @Test
    void listIsPaged() {
        String id = api.post("/api/v1/tenants", "{\"name\":\"" + unique("au") + "\"}").json().get("id").asString();
        for (int i = 0; i < 3; i++) {
            api.patch("/api/v1/tenants/" + id, "{\"weight\":" + (200 + i) + "}", null);
        }
        Response first = api.get("/api/v1/audit?resourceId=" + id + "&size=3&page=0");
        Response second = api.get("/api/v1/audit?resourceId=" + id + "&size=3&page=1");
        assertThat(first.json().get("totalItems").asLong()).isEqualTo(4);
        assertThat(first.json().get("totalPages").asInt()).isEqualTo(2);
        assertThat(first.json().get("items").size()).isEqualTo(3);
        assertThat(second.json().get("items").findValuesAsString("action")).containsExactly("tenant.update");
    }

    /** A PATCH {} (or a PUT of what is stored) changes nothing, so it records nothing: changes, not calls. */
    @Test
    void writesThatChangeNothingLeaveNoEntryForAnyResource() {
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("noop") + "\",\"weight\":150}")
                .json().get("id").asString();
        String policy = api.post("/api/v1/policies", "{\"name\":\"" + unique("noop") + "\"}").json().get("id").asString();
        String node = newNode();
        Response volume = api.post("/api/v1/tenants/" + tenant + "/volumes",
                "{\"name\":\"" + unique("noop") + "\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + node + "\"]}");
        String volumeId = volume.json().get("id").asString();
        String shares = "{\"tasks\":[{\"name\":\"foreground\",\"share\":600},{\"name\":\"gc\",\"share\":100}]}";
        assertThat(api.put("/api/v1/nodes/" + node + "/task-shares", shares, null).status()).isEqualTo(200);

        assertThat(api.patch("/api/v1/tenants/" + tenant, "{}", null).status()).isEqualTo(200);
        assertThat(api.patch("/api/v1/tenants/" + tenant, "{\"weight\":150}", null).status()).isEqualTo(200);
        assertThat(api.patch("/api/v1/policies/" + policy, "{}", null).status()).isEqualTo(200);
        assertThat(api.patch("/api/v1/nodes/" + node, "{}", null).status()).isEqualTo(200);
        assertThat(api.patch("/api/v1/volumes/" + volumeId, "{}", null).status()).isEqualTo(200);
        assertThat(api.put("/api/v1/nodes/" + node + "/task-shares", shares, null).status()).isEqualTo(200);

        assertThat(entries(api, "resourceType=tenant&resourceId=" + tenant).findValuesAsString("action"))
                .containsExactly("tenant.create");
        assertThat(entries(api, "resourceType=policy&resourceId=" + policy).findValuesAsString("action"))
                .containsExactly("policy.create");
        assertThat(entries(api, "resourceType=node&resourceId=" + node).findValuesAsString("action"))
                .containsExactly("node.create");
        assertThat(entries(api, "resourceType=volume&resourceId=" + volumeId).findValuesAsString("action"))
                .containsExactly("volume.create");
        assertThat(entries(api, "resourceType=task-shares&resourceId=" + node).findValuesAsString("action"))
                .containsExactly("task-shares.create");
        // A real change is still recorded.
        assertThat(api.patch("/api/v1/tenants/" + tenant, "{\"weight\":151}", null).status()).isEqualTo(200);
        assertThat(entries(api, "resourceType=tenant&resourceId=" + tenant).findValuesAsString("action"))
                .containsExactly("tenant.create", "tenant.update");
    }
}
