package io.weir.controlplane.web;

import static io.weir.controlplane.web.LooseParsingTest.assertNamesField;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ids and filters in the URL are as strict as fields in a body: a UUID is the canonical
 * 8-4-4-4-12 hex form only (either case), and an empty filter is a mistake, not "no filter".
 * {@code UUID.fromString} and Spring's binding are lenient in both respects: {@code 1-1-1-1-1}
 * named a real id ({@code 00000001-0001-0001-0001-000000000001}), and {@code ?actor=} quietly
 * listed everything.
 */
class LooseParametersTest extends IntegrationTest {

    /** Not canonical: short groups, no dashes, an extra character, a misplaced dash, blanks, base64. */
    private static final String[] NOT_CANONICAL = {"1-1-1-1-1", "00000000000000000000000000000001",
            "00000001-0001-0001-0001-000000000001x", "00000001-0001-0001-0001-00000000001",
            "0000000-10001-0001-0001-000000000001", "%2000000001-0001-0001-0001-000000000001",
            "00000001-0001-0001-0001-000000000001%20", "+00000001-0001-0001-0001-000000000001",
            "0x000001-0001-0001-0001-000000000001", "AAAAAQABAAEAAQAAAAAAAQ"};

    private String tenant;

    @BeforeEach
    void tenant() {
        tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("lq") + "\"}").json().get("id").asString();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"/api/v1/tenants/{}, tenantId", "/api/v1/tenants/{}/volumes, tenantId", "/api/v1/volumes/{}, volumeId",
            "/api/v1/policies/{}, policyId", "/api/v1/nodes/{}, nodeId", "/api/v1/nodes/{}/desired-config, nodeId",
            "/api/v1/nodes/{}/task-shares, nodeId", "/api/v1/usage/volumes/{}, volumeId",
            "/api/v1/tenants/{}/nodes, tenantId"})
    void aPathIdThatIsNotACanonicalUuidIsA400NamingIt(String template, String parameter) {
        for (String id : NOT_CANONICAL) {
            Response r = api.get(template.replace("{}", id));
            assertNamesField(r, parameter);
            assertThat(r.json().get("errors").get(0).get("message").asString()).contains("8-4-4-4-12");
        }
        assertNamesField(api.delete("/api/v1/tokens/1-1-1-1-1", null), "tokenId");
        assertNamesField(api.delete("/api/v1/tenants/1-1-1-1-1", null), "tenantId");
    }

    @Test
    void aCanonicalUuidIsAcceptedInEitherCase() {
        assertThat(api.get("/api/v1/tenants/" + tenant.toUpperCase(Locale.ROOT)).status()).isEqualTo(200);
        Response unknown = api.get("/api/v1/tenants/" + UUID.randomUUID().toString().toUpperCase(Locale.ROOT));
        assertThat(unknown.status()).as(unknown.toString()).isEqualTo(404);
        assertThat(api.get("/api/v1/volumes?tenantId=" + tenant.toUpperCase(Locale.ROOT)).status()).isEqualTo(200);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"/api/v1/volumes?tenantId={}, tenantId", "/api/v1/volumes?nodeId={}, nodeId",
            "/api/v1/audit?tenantId={}, tenantId", "/api/v1/usage/top?tenantId={}, tenantId"})
    void aQueryIdThatIsNotACanonicalUuidIsA400NamingIt(String template, String parameter) {
        for (String id : NOT_CANONICAL) {
            assertNamesField(api.get(template.replace("{}", id)), parameter);
        }
    }

    @ParameterizedTest(name = "tenantId {0}")
    @ValueSource(strings = {"AAAAAQABAAEAAQAAAAAAAQ==", "AAAAAQABAAEAAQAAAAAAAQ", "1-1-1-1-1",
            "00000000000000000000000000000001", " 00000001-0001-0001-0001-000000000001"})
    void aUuidInABodyIsTheCanonicalFormOnly(String id) {
        long before = api.get("/api/v1/tokens?size=1").json().get("totalItems").asLong();
        Response r = api.post("/api/v1/tokens", "{\"name\":\"" + unique("u") + "\",\"role\":\"viewer\",\"tenantId\":\"" + id + "\"}");
        assertNamesField(r, "tenantId");
        assertThat(r.json().get("errors").get(0).get("message").asString()).contains("8-4-4-4-12");
        assertThat(api.get("/api/v1/tokens?size=1").json().get("totalItems").asLong()).isEqualTo(before);
        Response volume = api.post("/api/v1/tenants/" + tenant + "/volumes",
                "{\"name\":\"v\",\"sizeBytes\":4096,\"nodeIds\":[\"" + id + "\"]}");
        assertNamesField(volume, "nodeIds[0]");
        assertThat(volume.json().get("errors").get(0).get("message").asString()).contains("8-4-4-4-12");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"/api/v1/tenants?name=, name", "/api/v1/policies?name=, name", "/api/v1/nodes?name=, name",
            "/api/v1/nodes?label=, label", "/api/v1/nodes?label=zone%3Da&label=, label",
            "/api/v1/tenants/{t}/volumes?name=, name", "/api/v1/volumes?tenantId=, tenantId",
            "/api/v1/volumes?nodeId=, nodeId", "/api/v1/tokens?role=, role", "/api/v1/audit?resourceType=, resourceType",
            "/api/v1/audit?resourceId=, resourceId", "/api/v1/audit?actor=, actor", "/api/v1/audit?tenantId=, tenantId",
            "/api/v1/audit?from=, from", "/api/v1/audit?to=, to", "/api/v1/audit?actor=%20, actor",
            "/api/v1/usage/top?tenantId=, tenantId", "/api/v1/usage/top?by=, by", "/api/v1/usage/top?limit=, limit",
            "/api/v1/usage/tenants/{t}?from=, from", "/api/v1/usage/tenants/{t}?step=, step",
            "/api/v1/tenants?page=, page", "/api/v1/tenants?size=, size", "/api/v1/audit?actor, actor"})
    void anEmptyFilterIsA400NamingItNotNoFilter(String path, String parameter) {
        assertNamesField(api.get(path.replace("{t}", tenant)), parameter);
    }

    /**
     * A query parameter the endpoint does not take is a mistake too, most often a misspelt filter:
     * {@code ?nodeid=} (for nodeId) listed every volume, as if no filter had been given.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"/api/v1/volumes?nodeid=" + "00000001-0001-0001-0001-000000000001, nodeid",
            "/api/v1/tenants?nmae=x, nmae", "/api/v1/nodes?labels=zone%3Da, labels",
            "/api/v1/usage/top?tenant=x, tenant", "/api/v1/tenants/{t}/volumes?page=0&sise=5, sise",
            "/api/v1/tenants/{t}?verbose=1, verbose"})
    void aParameterTheEndpointDoesNotTakeIsA400NamingIt(String path, String parameter) {
        Response r = api.get(path.replace("{t}", tenant));
        assertNamesField(r, parameter);
        assertThat(r.json().toString()).contains("does not take");
    }

    @Test
    void everyParameterAnEndpointTakesIsAccepted() {
        assertThat(api.get("/api/v1/volumes?tenantId=" + tenant + "&nodeId=00000001-0001-0001-0001-000000000001&page=0&size=5")
                .status()).isEqualTo(200);
        assertThat(api.get("/api/v1/nodes?name=x&label=zone%3Da&label=rack%3D1&page=0&size=5").status()).isEqualTo(200);
        assertThat(api.get("/api/v1/usage/tenants/" + tenant + "?step=1m").status()).isEqualTo(200);
    }
}
