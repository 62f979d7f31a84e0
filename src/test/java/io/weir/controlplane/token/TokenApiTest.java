package io.weir.controlplane.token;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.security.TokenSecrets;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import tools.jackson.databind.JsonNode;

class TokenApiTest extends IntegrationTest {

    @Autowired
    JdbcClient jdbc;

    private Response create(String json) {
        return api.post("/api/v1/tokens", json);
    }

    private UUID tenant() {
        return UUID.fromString(api.post("/api/v1/tenants", "{\"name\":\"" + unique("tk") + "\"}").json().get("id").asString());
    }

    @Test
    void createReturnsTheSecretOnceWithLocationAndNoStore() {
        String name = unique("ci");
        Response r = create("{\"name\":\"" + name + "\",\"role\":\"viewer\"}");
        assertThat(r.status()).isEqualTo(201);
        JsonNode body = r.json();
        String secret = body.get("token").asString();
        assertThat(secret).matches("weir_[0-9a-f]{32}_[A-Za-z0-9_-]{43}");
        assertThat(secret.substring(5, 37)).isEqualTo(body.get("id").asString().replace("-", ""));
        assertThat(body.get("role").asString()).isEqualTo("viewer");
        assertThat(body.get("tenantId").isNull()).isTrue();
        assertThat(r.header("Location")).endsWith("/api/v1/tokens/" + body.get("id").asString());
        assertThat(r.header("Cache-Control")).contains("no-store");

        Response list = newestPage("/api/v1/tokens?role=viewer");
        assertThat(list.status()).isEqualTo(200);
        assertThat(list.body()).contains(name).doesNotContain(secret).doesNotContain(secret.substring(38));
        JsonNode listed = list.json().get("items").findParents("name").stream()
                .filter(n -> n.get("name").asString().equals(name)).findFirst().orElseThrow();
        assertThat(listed.has("token")).isFalse();
    }

    @Test
    void newTokenAuthenticatesWithItsRole() {
        String secret = mintToken("viewer", null, null);
        HttpApi viewer = apiAs(secret);
        assertThat(viewer.get("/api/v1/tenants").status()).isEqualTo(200);
        assertThat(viewer.post("/api/v1/tenants", "{\"name\":\"" + unique("v") + "\"}").status()).isEqualTo(403);
    }

    @Test
    void onlyTheHashOfTheSecretIsStored() {
        Response r = create("{\"name\":\"" + unique("h") + "\",\"role\":\"viewer\"}");
        String secret = r.json().get("token").asString();
        UUID id = UUID.fromString(r.json().get("id").asString());
        byte[] stored = jdbc.sql("SELECT secret_hash FROM api_token WHERE id = ?").param(id).query(byte[].class).single();
        assertThat(stored).isEqualTo(TokenSecrets.hash(secret));
        String row = jdbc.sql("SELECT row_to_json(t)::text FROM api_token t WHERE id = ?").param(id).query(String.class).single();
        assertThat(row).doesNotContain(secret.substring(38));
        String audit = jdbc.sql("SELECT coalesce(string_agg(after_state::text, ''), '') FROM audit_event WHERE resource_id = ?")
                .param(id.toString()).query(String.class).single();
        assertThat(audit).contains(id.toString()).doesNotContain(secret.substring(38));
    }

    @Test
    void bindingsAreValidatedPerRole() {
        UUID tenant = tenant();
        assertThat(create("{\"name\":\"" + unique("b") + "\",\"role\":\"tenant-admin\"}").json()
                .get("errors").findValuesAsString("field")).containsExactly("tenantId");
        assertThat(create("{\"name\":\"" + unique("b") + "\",\"role\":\"node\"}").json()
                .get("errors").findValuesAsString("field")).containsExactly("nodeId");
        assertThat(create("{\"name\":\"" + unique("b") + "\",\"role\":\"admin\",\"tenantId\":\"" + tenant + "\"}")
                .status()).isEqualTo(400);
        assertThat(create("{\"name\":\"" + unique("b") + "\",\"role\":\"viewer\",\"nodeId\":\"" + UUID.randomUUID() + "\"}")
                .status()).isEqualTo(400);
        Response missingTenant = create("{\"name\":\"" + unique("b") + "\",\"role\":\"tenant-admin\",\"tenantId\":\""
                + UUID.randomUUID() + "\"}");
        assertThat(missingTenant.status()).isEqualTo(400);
        assertThat(missingTenant.json().get("errors").get(0).get("field").asString()).isEqualTo("tenantId");
        assertThat(create("{\"name\":\"" + unique("b") + "\",\"role\":\"tenant-admin\",\"tenantId\":\"" + tenant + "\"}")
                .status()).isEqualTo(201);
    }

    @Test
    void badBodiesAnswer400() {
        Response badRole = create("{\"name\":\"" + unique("b") + "\",\"role\":\"root\"}");
        assertThat(badRole.status()).isEqualTo(400);
        assertThat(badRole.contentType()).startsWith("application/problem+json");
        assertThat(create("{\"name\":\"Bad Name\",\"role\":\"viewer\"}").json().get("errors")
                .findValuesAsString("field")).containsExactly("name");
        assertThat(create("{\"name\":\"" + unique("b") + "\"}").json().get("errors")
                .findValuesAsString("field")).containsExactly("role");
        assertThat(create("{\"name\":\"" + unique("b") + "\",\"role\":\"viewer\",\"secret\":\"x\"}").status())
                .isEqualTo(400);
        Response past = create("{\"name\":\"" + unique("b") + "\",\"role\":\"viewer\",\"expiresAt\":\""
                + Instant.now().minus(1, ChronoUnit.MINUTES) + "\"}");
        assertThat(past.json().get("errors").findValuesAsString("field")).containsExactly("expiresAt");
        assertThat(api.get("/api/v1/tokens?role=root").status()).isEqualTo(400);
    }

    @Test
    void duplicateNameAnswers409() {
        String name = unique("dup");
        assertThat(create("{\"name\":\"" + name + "\",\"role\":\"viewer\"}").status()).isEqualTo(201);
        assertThat(create("{\"name\":\"" + name + "\",\"role\":\"viewer\"}").status()).isEqualTo(409);
    }

    @Test
    void deleteRevokesAtOnceAndAnswers404Afterwards() {
        Response created = create("{\"name\":\"" + unique("rv") + "\",\"role\":\"viewer\"}");
        HttpApi viewer = apiAs(created.json().get("token").asString());
        assertThat(viewer.get("/api/v1/tenants").status()).isEqualTo(200);
        String path = "/api/v1/tokens/" + created.json().get("id").asString();
        assertThat(api.delete(path, "\"7\"").status()).isEqualTo(412);
        assertThat(api.delete(path, created.etag()).status()).isEqualTo(204);
        assertThat(viewer.get("/api/v1/tenants").status()).isEqualTo(401);
        assertThat(api.delete(path, null).status()).isEqualTo(404);
    }

    @Test
    void theLastAdminTokenCannotBeRevoked() {
        long admins = jdbc.sql("SELECT count(*) FROM api_token WHERE role = 'admin'").query(Long.class).single();
        if (admins > 1) {
            // Other tests made admin tokens: revoke every one but the bootstrap token first.
            jdbc.sql("SELECT id FROM api_token WHERE role = 'admin' AND name <> 'bootstrap-admin'").query(UUID.class).list()
                    .forEach(id -> assertThat(api.delete("/api/v1/tokens/" + id, null).status()).isEqualTo(204));
        }
        UUID bootstrap = jdbc.sql("SELECT id FROM api_token WHERE name = 'bootstrap-admin'").query(UUID.class).single();
        Response refused = api.delete("/api/v1/tokens/" + bootstrap, null);
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.contentType()).startsWith("application/problem+json");
        assertThat(api.get("/api/v1/tenants").status()).isEqualTo(200);
    }
}
