package io.weir.controlplane.tenant;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;

class TenantApiTest extends IntegrationTest {

    @Autowired
    ConfigRevisions revisions;

    private Response create(String name, String extra) {
        return api.post("/api/v1/tenants", "{\"name\":\"" + name + "\"" + extra + "}");
    }

    @Test
    void createAnswers201WithLocationETagAndDefaults() {
        String name = unique("acme");
        Response r = create(name, ",\"displayName\":\"ACME\"");
        assertThat(r.status()).isEqualTo(201);
        JsonNode body = r.json();
        assertThat(r.header("Location")).endsWith("/api/v1/tenants/" + body.get("id").asString());
        assertThat(r.versionTag()).isEqualTo("\"0\"");
        assertThat(body.get("weight").asInt()).isEqualTo(100);
        assertThat(body.get("maxIops").isNull()).isTrue();
        assertThat(body.get("createdAt").asString()).endsWith("Z");

        Response read = api.get("/api/v1/tenants/" + body.get("id").asString());
        assertThat(read.status()).isEqualTo(200);
        assertThat(read.json()).isEqualTo(body);
    }

    @Test
    void duplicateNameAnswers409() {
        String name = unique("dup");
        assertThat(create(name, "").status()).isEqualTo(201);
        Response again = create(name, "");
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.contentType()).startsWith("application/problem+json");
    }

    @Test
    void invalidFieldsAreEachListed() {
        Response r = api.post("/api/v1/tenants", "{\"name\":\"Bad Name\",\"weight\":0,\"maxIops\":-1}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(r.json().get("errors").findValuesAsString("field")).containsExactly("maxIops", "name", "weight");
    }

    @Test
    void nameLongerThan63CharactersIsRejected() {
        Response r = create("a".repeat(64), "");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().get("errors").get(0).get("field").asString()).isEqualTo("name");
    }

    @Test
    void unknownFieldIsRejectedByName() {
        Response r = create(unique("t"), ",\"wieght\":5");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().get("detail").asString()).contains("wieght");
    }

    @Test
    void staleIfMatchAnswers412AndCurrentOneSucceeds() {
        Response created = create(unique("etag"), "");
        String path = "/api/v1/tenants/" + created.json().get("id").asString();
        Response updated = api.patch(path, "{\"weight\":300}", created.etag());
        assertThat(updated.status()).isEqualTo(200);
        assertThat(updated.versionTag()).isEqualTo("\"1\"");
        assertThat(updated.json().get("weight").asInt()).isEqualTo(300);

        Response stale = api.patch(path, "{\"weight\":400}", created.etag());
        assertThat(stale.status()).isEqualTo(412);
        assertThat(api.delete(path, created.etag()).status()).isEqualTo(412);
        assertThat(api.get(path).json().get("weight").asInt()).isEqualTo(300);
    }

    @Test
    void mergePatchNullRemovesALimit() {
        Response created = create(unique("limits"), ",\"maxIops\":1000,\"displayName\":\"x\"");
        String path = "/api/v1/tenants/" + created.json().get("id").asString();
        Response patched = api.patch(path, "{\"maxIops\":null}", null);
        assertThat(patched.status()).isEqualTo(200);
        assertThat(patched.json().get("maxIops").isNull()).isTrue();
        assertThat(patched.json().get("displayName").asString()).isEqualTo("x");
    }

    @Test
    void weightChangeBumpsTheRevisionButDisplayNameDoesNot() {
        Response created = create(unique("rev"), "");
        String path = "/api/v1/tenants/" + created.json().get("id").asString();
        createPlacedVolume(created.json().get("id").asString(), "");

        long before = revisions.current();
        assertThat(api.patch(path, "{\"displayName\":\"Renamed\"}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).isEqualTo(before);

        assertThat(api.patch(path, "{\"weight\":250}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).isGreaterThan(before);
    }

    @Test
    void renameBumpsTheRevisionBecauseSnapshotsCarryTheName() {
        Response created = create(unique("old"), "");
        String path = "/api/v1/tenants/" + created.json().get("id").asString();
        createPlacedVolume(created.json().get("id").asString(), "");
        long before = revisions.current();
        assertThat(api.patch(path, "{\"name\":\"" + unique("new") + "\"}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).isGreaterThan(before);
    }

    @Test
    void changesOfATenantWithoutPlacedVolumesBumpNothingBecauseNoSnapshotHoldsIt() {
        Response created = create(unique("idle"), "");
        String id = created.json().get("id").asString();
        String path = "/api/v1/tenants/" + id;
        // An unplaced volume does not put the tenant into any snapshot either.
        assertThat(api.post(path + "/volumes", "{\"name\":\"" + unique("v") + "\",\"sizeBytes\":4096}").status())
                .isEqualTo(201);
        long before = revisions.current();

        assertThat(api.patch(path, "{\"weight\":250,\"maxIops\":1000,\"name\":\"" + unique("idle2") + "\"}", null)
                .status()).isEqualTo(200);
        assertThat(revisions.current()).isEqualTo(before);

        createPlacedVolume(id, "");
        long placed = revisions.current();
        assertThat(api.patch(path, "{\"weight\":300}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).isEqualTo(placed + 1);
    }

    @Test
    void listsArePagedInCreationOrderAndFilterByName() {
        String marker = unique("page");
        for (int i = 0; i < 5; i++) {
            assertThat(create(marker + "-" + i, "").status()).isEqualTo(201);
        }
        Response first = api.get("/api/v1/tenants?name=" + marker + "&size=2&page=0");
        Response second = api.get("/api/v1/tenants?name=" + marker + "&size=2&page=1");
        Response third = api.get("/api/v1/tenants?name=" + marker + "&size=2&page=2");
        assertThat(first.json().get("totalItems").asLong()).isEqualTo(5);
        assertThat(first.json().get("totalPages").asInt()).isEqualTo(3);
        assertThat(first.json().get("items").findValuesAsString("name")).containsExactly(marker + "-0", marker + "-1");
        assertThat(second.json().get("items").findValuesAsString("name")).containsExactly(marker + "-2", marker + "-3");
        assertThat(third.json().get("items").findValuesAsString("name")).containsExactly(marker + "-4");
        assertThat(api.get("/api/v1/tenants?size=501").status()).isEqualTo(400);
    }

    @Test
    void deleteRemovesTheTenantAndLaterReadsAnswer404() {
        Response created = create(unique("gone"), "");
        String path = "/api/v1/tenants/" + created.json().get("id").asString();
        assertThat(api.delete(path, created.etag()).status()).isEqualTo(204);
        Response missing = api.get(path);
        assertThat(missing.status()).isEqualTo(404);
        assertThat(missing.contentType()).startsWith("application/problem+json");
    }
}
