package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.OpenApiSpec;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The check {@code SpecTruthTest} relies on finds what it must: the committed document's schemas
 * checked by a real JSON Schema validator, so that a response with an undocumented member, a
 * malformed id or timestamp, a value past a documented bound, or a status documented without a
 * body does not pass for a conforming one (the hand-written check before it let all of these by).
 */
class OpenApiSchemaCheckTest {

    private static final JsonMapper JSON = JsonMapper.shared();
    private final OpenApiSpec spec = OpenApiSpec.committed();

    private static ObjectNode tenant() {
        return (ObjectNode) JSON.readTree("""
                {"id":"0b0c8f8e-5a0e-4d6f-9a51-6f0b6d3b1c11","name":"acme","displayName":null,"weight":200,
                 "maxIops":null,"maxBytesPerSec":null,"nodeSelector":{"rack":"r1"},
                 "maxIopsPerGiB":null,"maxIopsFloor":null,"maxBytesPerSecPerGiB":null,"maxBytesPerSecFloor":null,
                 "capacityBasis":null,"effectiveLimits":{"capacityBasis":null,"capacityBytes":null,"maxIops":null,
                 "maxIopsSource":null,"maxBytesPerSec":null,"maxBytesPerSecSource":null},
                 "createdAt":"2026-12-03T08:00:00Z","updatedAt":"2026-12-03T08:00:00Z","version":0}""");
    }

    private static final String TENANT = "/components/schemas/Tenant";

    @Test
    void aConformingTenantHasNoViolations() {
        assertThat(spec.violations(tenant(), TENANT)).isEmpty();
    }

    @Test
    void aMemberTheSchemaDoesNotNameIsAViolation() {
        ObjectNode t = tenant();
        t.put("secret", "x");
        assertThat(spec.violations(t, TENANT)).singleElement().asString().contains("secret");
    }

    @Test
    void aMissingRequiredMemberIsAViolation() {
        ObjectNode t = tenant();
        t.remove("version");
        assertThat(spec.violations(t, TENANT)).singleElement().asString().contains("version");
    }

    @Test
    void formatsAreAsserted() {
        ObjectNode badId = tenant();
        badId.put("id", "not-a-uuid");
        assertThat(spec.violations(badId, TENANT)).singleElement().asString().contains("id");
        ObjectNode badTime = tenant();
        badTime.put("createdAt", "yesterday");
        assertThat(spec.violations(badTime, TENANT)).singleElement().asString().contains("createdAt");
    }

    @Test
    void nullWhereTheSchemaDoesNotAllowItIsAViolation() {
        ObjectNode t = tenant();
        t.putNull("name");
        assertThat(spec.violations(t, TENANT)).singleElement().asString().contains("name");
    }

    @Test
    void documentedBoundsAreChecked() {
        // TenantRequest documents weight 1-10000.
        JsonNode ok = JSON.readTree("{\"name\":\"acme\",\"weight\":10000}");
        JsonNode over = JSON.readTree("{\"name\":\"acme\",\"weight\":10001}");
        assertThat(spec.violations(ok, "/components/schemas/TenantRequest")).isEmpty();
        assertThat(spec.violations(over, "/components/schemas/TenantRequest")).singleElement().asString().contains("weight");
    }

    @Test
    void aStatusDocumentedWithoutABodyIsAViolationNotAPass() {
        OpenApiSpec.Operation delete = spec.operations().stream()
                .filter(op -> op.method().equals("delete") && op.path().equals("/api/v1/tenants/{tenantId}"))
                .findFirst().orElseThrow();
        assertThat(spec.responseViolations(tenant(), delete, "200")).singleElement().asString().contains("no body");
        assertThat(spec.violations(tenant(), "/components/schemas/NoSuchSchema")).singleElement().asString().contains("no schema");
    }

    @Test
    void aResponseIsCheckedAgainstItsOperationsSchema() {
        OpenApiSpec.Operation get = spec.operations().stream()
                .filter(op -> op.method().equals("get") && op.path().equals("/api/v1/tenants/{tenantId}"))
                .findFirst().orElseThrow();
        assertThat(spec.responseViolations(tenant(), get, "200")).isEmpty();
        ObjectNode extra = tenant();
        extra.put("undocumented", 1);
        assertThat(spec.responseViolations(extra, get, "200")).isNotEmpty();
    }
}
