package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.OpenApiSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The committed OpenAPI document tells the truth: the status codes it documents are the ones
 * the server answers, the bounds it documents are the ones the server enforces, and every
 * response conforms to its schema (required members present, null only where nullable).
 */
class SpecTruthTest extends IntegrationTest {

    private final OpenApiSpec spec = OpenApiSpec.committed();

    private String tenant;
    private String policy;
    private String node;
    /** Two more nodes, so that a valid volume body may ask for the most replicas (three, one per node). */
    private String node2;
    private String node3;
    private String volume;

    /** A valid body for each create, by path (a fresh name each time). */
    private Map<String, Supplier<String>> validBodies() {
        Map<String, Supplier<String>> bodies = new LinkedHashMap<>();
        bodies.put("/api/v1/tenants", () -> "{\"name\":\"" + unique("st") + "\",\"displayName\":\"x\",\"weight\":5}");
        bodies.put("/api/v1/policies", () -> "{\"name\":\"" + unique("sp") + "\",\"description\":\"d\",\"weight\":5}");
        bodies.put("/api/v1/nodes", () -> "{\"name\":\"" + unique("sn") + "\",\"address\":\"h:1\",\"labels\":{\"zone\":\"a\"}}");
        bodies.put("/api/v1/tenants/{tenantId}/volumes", () -> "{\"name\":\"" + unique("sv")
                + "\",\"sizeBytes\":4096,\"overrides\":{\"weight\":5,\"maxIops\":100},\"nodeIds\":[\"" + node + "\",\""
                + node2 + "\",\"" + node3 + "\"]}");
        bodies.put("/api/v1/tokens", () -> "{\"name\":\"" + unique("sk") + "\",\"role\":\"viewer\"}");
        bodies.put("/api/v1/tenants/{tenantId}/client-certificates", () -> "{\"name\":\"" + unique("sc") + "\"}");
        return bodies;
    }

    @BeforeEach
    void fixtures() {
        // a selector and a node it matches, without an address: the tenant's placeable nodes are not empty
        String rack = unique("rack");
        tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("st") + "\",\"nodeSelector\":{\"rack\":\"" + rack
                + "\"}}").json().get("id").asString();
        api.post("/api/v1/nodes", "{\"name\":\"" + unique("sn") + "\",\"labels\":{\"rack\":\"" + rack + "\"}}");
        policy = api.post("/api/v1/policies", "{\"name\":\"" + unique("sp") + "\"}").json().get("id").asString();
        node = newNode();
        node2 = newNode();
        node3 = newNode();
        volume = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"" + unique("sv")
                + "\",\"sizeBytes\":4096,\"policyId\":\"" + policy + "\",\"nodeIds\":[\"" + node + "\"]}")
                .json().get("id").asString();
    }

    private String fill(String template) {
        return template.replace("{tenantId}", tenant).replace("{policyId}", policy).replace("{nodeId}", node)
                .replace("{volumeId}", volume);
    }

    private JsonNode documented(OpenApiSpec.Operation op, String code) {
        JsonNode content = op.node().path("responses").path(code).path("content");
        return content.isMissingNode() || content.isEmpty() ? null : content.properties().iterator().next().getValue().path("schema");
    }

    @Test
    void createsAreDocumentedAs201WithLocationAndTheServerAnswersSo() {
        Map<String, Supplier<String>> bodies = validBodies();
        for (OpenApiSpec.Operation op : spec.operations()) {
            if (!op.method().equals("post")) {
                continue;
            }
            assertThat(op.responseCodes()).as(op.toString()).contains("201").doesNotContain("200");
            assertThat(op.node().path("responses").path("201").path("headers").has("Location")).as(op.toString()).isTrue();
            Response created = api.post(fill(op.path()), bodies.get(op.path()).get());
            assertThat(created.status()).as(op + " " + created).isEqualTo(201);
            assertThat(created.header("Location")).as(op.toString()).isNotBlank();
            assertThat(spec.responseViolations(created.json(), op, "201")).as(op.toString()).isEmpty();
        }
    }

    @Test
    void deletesAreDocumentedAs204AndTheServerAnswersSo() {
        List<String> deletes = new ArrayList<>();
        for (OpenApiSpec.Operation op : spec.operations()) {
            if (op.method().equals("delete")) {
                assertThat(op.responseCodes()).as(op.toString()).contains("204").doesNotContain("200");
                assertThat(documented(op, "204")).as(op.toString()).isNull();
                deletes.add(op.path());
            }
        }
        String token = api.post("/api/v1/tokens", validBodies().get("/api/v1/tokens").get()).json().get("id").asString();
        String certificate = api.post(fill("/api/v1/tenants/{tenantId}/client-certificates"),
                validBodies().get("/api/v1/tenants/{tenantId}/client-certificates").get()).json().get("id").asString();
        api.put("/api/v1/nodes/" + node + "/task-shares", "{\"tasks\":[{\"name\":\"foreground\",\"share\":10}]}", null);
        // Dependants first: the volume, the tenant's certificate, the node's override, then what they used.
        List<String> order = List.of("/api/v1/volumes/" + volume,
                "/api/v1/tenants/" + tenant + "/client-certificates/" + certificate,
                "/api/v1/nodes/" + node + "/task-shares", "/api/v1/nodes/" + node, "/api/v1/policies/" + policy,
                "/api/v1/tenants/" + tenant, "/api/v1/tokens/" + token);
        assertThat(order).hasSameSizeAs(deletes);
        for (String path : order) {
            Response deleted = api.delete(path, null);
            assertThat(deleted.status()).as(path + " " + deleted).isEqualTo(204);
            assertThat(deleted.body()).isEmpty();
        }
    }

    @Test
    void everyReadConformsToItsDocumentedSchema() {
        for (OpenApiSpec.Operation op : spec.operations()) {
            if (!op.method().equals("get")) {
                continue;
            }
            Response r = api.get(fill(op.path()));
            assertThat(r.status()).as(op + " " + r).isEqualTo(200);
            assertThat(spec.responseViolations(r.json(), op, "200")).as(op.toString()).isEmpty();
        }
    }

    @Test
    void responseSchemasMarkEveryAlwaysPresentMemberRequired() {
        JsonNode schemas = spec.root().path("components").path("schemas");
        for (String name : List.of("Tenant", "Volume", "Node", "Policy", "Token", "IssuedToken", "AuditEvent",
                "TaskShares", "DesiredConfig", "EffectivePolicy", "NodeStatus", "VolumeOverrides")) {
            JsonNode schema = schemas.path(name);
            List<String> properties = new ArrayList<>();
            schema.path("properties").propertyNames().forEach(properties::add);
            List<String> required = new ArrayList<>();
            schema.path("required").forEach(r -> required.add(r.asString()));
            List<String> expected = new ArrayList<>(properties);
            if (name.equals("Node")) {
                expected.remove("token"); // only in the create response
            }
            if (name.equals("DesiredConfig")) {
                expected.remove("tls"); // left out of a snapshot without a cluster CA (config files, older control planes)
            }
            assertThat(required).as(name).containsExactlyInAnyOrderElementsOf(expected);
        }
        assertThat(schemas.path("Tenant").path("properties").path("maxIops").path("type").toString()).contains("null");
        assertThat(schemas.path("Tenant").path("properties").path("id").path("type").asString()).isEqualTo("string");
        // Requests keep their own, non-required copy of what they share with responses.
        assertThat(schemas.path("VolumeRequest").path("properties").path("overrides").path("$ref").asString())
                .endsWith("/VolumeOverridesRequest");
        assertThat(schemas.path("VolumeOverridesRequest").has("required")).isFalse();
    }

    @Test
    void pagingBoundsAreDocumentedAndEnforced() {
        for (OpenApiSpec.Operation op : spec.operations()) {
            for (JsonNode p : op.parameters("query")) {
                String name = p.path("name").asString();
                if (name.equals("size")) {
                    assertThat(p.path("schema").path("maximum").asInt()).as(op.toString()).isEqualTo(500);
                    assertThat(p.path("schema").path("minimum").asInt()).as(op.toString()).isEqualTo(1);
                    String path = fill(op.path());
                    assertThat(api.get(path + "?size=500").status()).as(op.toString()).isEqualTo(200);
                    assertField(api.get(path + "?size=501"), "size");
                    assertField(api.get(path + "?size=0"), "size");
                } else if (name.equals("page")) {
                    assertThat(p.path("schema").path("minimum").asInt()).as(op.toString()).isZero();
                    assertField(api.get(fill(op.path()) + "?page=-1"), "page");
                }
            }
        }
    }

    @Test
    void bodyBoundsAreDocumentedAndEnforced() {
        Map<String, Supplier<String>> bodies = validBodies();
        int checked = 0;
        for (OpenApiSpec.Operation op : spec.operations()) {
            if (!op.method().equals("post")) {
                continue;
            }
            JsonNode schema = spec.resolve(op.requestSchema());
            for (var member : schema.path("properties").properties()) {
                JsonNode property = spec.resolve(member.getValue());
                String field = member.getKey();
                List<JsonNode> outOfBounds = new ArrayList<>();
                List<JsonNode> inBounds = new ArrayList<>();
                if (property.has("maxLength")) {
                    int max = property.get("maxLength").asInt();
                    outOfBounds.add(JsonMapper.shared().getNodeFactory().stringNode("a".repeat(max + 1)));
                }
                if (property.has("maximum") && property.path("type").asString().equals("integer")) {
                    long max = property.get("maximum").asLong();
                    outOfBounds.add(JsonMapper.shared().getNodeFactory().numberNode(max + 1));
                    inBounds.add(JsonMapper.shared().getNodeFactory().numberNode(max));
                }
                if (property.has("minimum") && property.path("type").asString().equals("integer")) {
                    long min = property.get("minimum").asLong();
                    outOfBounds.add(JsonMapper.shared().getNodeFactory().numberNode(min - 1));
                }
                for (JsonNode bad : outOfBounds) {
                    ObjectNode body = (ObjectNode) JsonMapper.shared().readTree(bodies.get(op.path()).get());
                    body.set(field, bad);
                    assertField(api.post(fill(op.path()), body.toString()), field);
                    checked++;
                }
                for (JsonNode good : inBounds) {
                    ObjectNode body = (ObjectNode) JsonMapper.shared().readTree(bodies.get(op.path()).get());
                    body.set(field, good);
                    Response r = api.post(fill(op.path()), body.toString());
                    assertThat(r.status()).as(op + " " + field + "=" + good + " " + r).isEqualTo(201);
                }
            }
        }
        JsonNode tenantRequest = spec.root().path("components").path("schemas").path("TenantRequest").path("properties");
        assertThat(tenantRequest.path("name").path("maxLength").asInt()).isEqualTo(63);
        assertThat(tenantRequest.path("weight").path("maximum").asInt()).isEqualTo(10000);
        assertThat(tenantRequest.path("weight").path("minimum").asInt()).isEqualTo(1);
        assertThat(checked).as("bounds checked").isGreaterThan(8);
    }

    @Test
    void everyDocumentedErrorIsAProblem() {
        for (OpenApiSpec.Operation op : spec.operations()) {
            op.node().path("responses").properties().forEach(response -> {
                if (response.getKey().startsWith("4") || response.getKey().startsWith("5")) {
                    assertThat(response.getValue().path("content").has("application/problem+json"))
                            .as(op + " " + response.getKey()).isTrue();
                }
            });
        }
    }

    private static void assertField(Response r, String field) {
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(r.json().get("errors").get(0).get("field").asString()).as(r.toString()).isEqualTo(field);
    }
}
