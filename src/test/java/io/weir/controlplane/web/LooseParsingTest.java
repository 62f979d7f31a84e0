package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.LogCapture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Lenient parsing must not widen access or alter data: each loose form that Jackson or the
 * servlet container would have accepted answers 400 naming the field, and nothing is created.
 */
class LooseParsingTest extends IntegrationTest {

    private static final String TOKENS = "/api/v1/tokens";

    static void assertNamesField(Response r, String field) {
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(r.json().get("errors").get(0).get("field").asString()).as(r.toString()).isEqualTo(field);
    }

    private long tokenCount() {
        return api.get(TOKENS + "?size=1").json().get("totalItems").asLong();
    }

    @ParameterizedTest(name = "tenantId {0}")
    @ValueSource(strings = {"\"\"", "\"  \"", "\"\\t\""})
    void anEmptyOrBlankTenantIdIsNotACLusterWideViewer(String value) {
        long before = tokenCount();
        Response r = api.post(TOKENS, "{\"name\":\"" + unique("v") + "\",\"role\":\"viewer\",\"tenantId\":" + value + "}");
        assertNamesField(r, "tenantId");
        assertThat(tokenCount()).isEqualTo(before);
    }

    @Test
    void anEmptyPolicyIdDoesNotPickTheDefaultPolicy() {
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("lp") + "\"}").json().get("id").asString();
        Response r = api.post("/api/v1/tenants/" + tenant + "/volumes",
                "{\"name\":\"v\",\"sizeBytes\":4096,\"policyId\":\"\"}");
        assertNamesField(r, "policyId");
        assertThat(api.get("/api/v1/tenants/" + tenant + "/volumes").json().get("totalItems").asLong()).isZero();
    }

    @Test
    void aDuplicateKeyDoesNotMakeAViewerAnAdmin() {
        long before = tokenCount();
        Response r = api.post(TOKENS, "{\"name\":\"" + unique("d") + "\",\"role\":\"viewer\",\"role\":\"admin\"}");
        assertNamesField(r, "role");
        assertThat(tokenCount()).isEqualTo(before);
    }

    @Test
    void aDuplicateKeyInANestedObjectIsNamedByItsPath() {
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("lp") + "\"}").json().get("id").asString();
        Response r = api.post("/api/v1/tenants/" + tenant + "/volumes",
                "{\"name\":\"v\",\"sizeBytes\":4096,\"overrides\":{\"maxIops\":10,\"maxIops\":99999}}");
        assertNamesField(r, "overrides.maxIops");
    }

    @Test
    void aDuplicateKeyInAMergePatchIsRefused() {
        Response created = api.post("/api/v1/tenants", "{\"name\":\"" + unique("lp") + "\"}");
        String path = "/api/v1/tenants/" + created.json().get("id").asString();
        assertNamesField(api.patch(path, "{\"weight\":5,\"weight\":500}", null), "weight");
        assertThat(api.get(path).json().get("weight").asInt()).isEqualTo(100);
    }

    @ParameterizedTest(name = "role {0}")
    @ValueSource(strings = {"ADMIN", "admin ", " admin", "Admin", "tenant_admin", ""})
    void rolesAreMatchedExactly(String role) {
        long before = tokenCount();
        Response r = api.post(TOKENS, "{\"name\":\"" + unique("r") + "\",\"role\":\"" + role + "\"}");
        assertNamesField(r, "role");
        assertThat(r.json().get("errors").get(0).get("message").asString()).contains("tenant-admin");
        assertThat(tokenCount()).isEqualTo(before);
    }

    @Test
    void aRoleQueryParameterIsMatchedExactly() {
        assertThat(api.get(TOKENS + "?role=admin").status()).isEqualTo(200);
        assertNamesField(api.get(TOKENS + "?role=ADMIN"), "role");
    }

    @ParameterizedTest(name = "expiresAt {0}")
    @ValueSource(strings = {"99999999999", "1.5e12", "\"+999999999-12-31T23:59:59Z\"", "\"10000-01-01T00:00:00Z\"",
            "\"2030-01-01\"", "\"\"", "true"})
    void aTimestampIsAnRfc3339StringWithinRange(String value) {
        long before = tokenCount();
        Response r = api.post(TOKENS, "{\"name\":\"" + unique("e") + "\",\"role\":\"viewer\",\"expiresAt\":" + value + "}");
        assertNamesField(r, "expiresAt");
        assertThat(tokenCount()).isEqualTo(before);
    }

    @Test
    void aTimestampWithAnOffsetIsAccepted() {
        Response r = api.post(TOKENS, "{\"name\":\"" + unique("e") + "\",\"role\":\"viewer\","
                + "\"expiresAt\":\"2099-01-01T02:00:00+02:00\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        assertThat(r.json().get("expiresAt").asString()).isEqualTo("2099-01-01T00:00:00Z");
    }

    @ParameterizedTest(name = "displayName {0}")
    @ValueSource(strings = {"a\\ud800b", "\\udc00", "x\\u0000y", "\\ud83d"})
    void aLoneSurrogateOrNulInTextIsRefusedNotStoredAsSomethingElse(String text) {
        try (LogCapture log = LogCapture.open()) {
            Response r = api.post("/api/v1/tenants", "{\"name\":\"" + unique("s") + "\",\"displayName\":\"" + text + "\"}");
            assertNamesField(r, "displayName");
            assertThat(log.atLeast(Level.ERROR)).isEmpty();
        }
    }

    @Test
    void aPairedSurrogateIsValidText() {
        Response r = api.post("/api/v1/tenants", "{\"name\":\"" + unique("s") + "\",\"displayName\":\"\\ud83d\\ude00\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        assertThat(r.json().get("displayName").asString()).isEqualTo("\uD83D\uDE00");
    }

    @Test
    void aNulInAMergePatchIsRefused() {
        Response created = api.post("/api/v1/tenants", "{\"name\":\"" + unique("lp") + "\"}");
        String path = "/api/v1/tenants/" + created.json().get("id").asString();
        assertNamesField(api.patch(path, "{\"displayName\":\"a\\u0000\"}", null), "displayName");
    }

    @Test
    void aNulInALabelKeyIsRefused() {
        Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("n") + "\",\"labels\":{\"a\\u0000\":\"b\"}}");
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/problem+json");
    }

    @ParameterizedTest(name = "from={0}")
    @ValueSource(strings = {"1234", "%2B999999999-12-31T23:59:59Z", "2030-01-01", "%00"})
    void anAuditTimeParameterIsAnRfc3339StringWithinRange(String from) {
        try (LogCapture log = LogCapture.open()) {
            Response r = api.get("/api/v1/audit?from=" + from);
            assertThat(r.status()).as(r.toString()).isEqualTo(400);
            assertThat(r.body()).contains("\"from\"");
            assertThat(log.atLeast(Level.ERROR)).isEmpty();
        }
    }

    @ParameterizedTest(name = "maxIops {0}")
    @ValueSource(strings = {"9223372036854775808", "-9223372036854775809", "1e400"})
    void aNumberTooLargeForItsFieldIsNamed(String value) {
        Response r = api.post("/api/v1/tenants", "{\"name\":\"" + unique("big") + "\",\"maxIops\":" + value + "}");
        assertNamesField(r, "maxIops");
    }
}
