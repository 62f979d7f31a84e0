package io.weir.controlplane.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Every endpoint times every role gets the status written in {@link #MATRIX}.
 *
 * <p>The matrix is data: one row per endpoint, with the status each kind of caller gets. Each
 * row runs against fresh resources of a tenant A (and, where the path names one, a data node
 * and its node token), so "tenant-admin" and "viewer of A" act on their own tenant and the
 * row shows what the role itself allows; isolation from other tenants is
 * {@link TenantIsolationTest}'s job. Callers run in the order of {@link Caller}, the admin last,
 * so its deletes do not take a resource away from the others.
 *
 * <p>{@link #everyEndpointHasARow()} compares the rows with the handler methods Spring MVC
 * actually maps: an endpoint added without a row fails the build.
 */
class AuthorizationMatrixTest extends IntegrationTest {

    /** The callers of every row, in the order they run. */
    enum Caller { NONE, NODE, VIEWER_A, VIEWER_ALL, TENANT_ADMIN_A, ADMIN }

    /**
     * One endpoint and the status each caller gets.
     *
     * @param api true for endpoints Spring MVC maps (checked against the handler mapping); false
     *     for actuator and springdoc endpoints, which are listed for their rules only
     */
    record Row(String method, String path, Function<Fixture, String> body, Map<Caller, Integer> expected, boolean api,
            Consumer<Fixture> prepare) {

        @Override
        public String toString() {
            return method + " " + path;
        }
    }

    //                                                                          none node vA  vAll tA  admin
    static final List<Row> MATRIX = List.of(
            // tenants
            api("POST", "/api/v1/tenants", f -> "{\"name\":\"" + unique("mx") + "\"}",
                                                                                 401, 403, 403, 403, 403, 201),
            api("GET", "/api/v1/tenants", null,                                  401, 403, 200, 200, 200, 200),
            api("GET", "/api/v1/tenants/{tenantId}", null,                       401, 403, 200, 200, 200, 200),
            api("PUT", "/api/v1/tenants/{tenantId}", f -> "{\"name\":\"" + f.tenantName + "\",\"weight\":120}",
                                                                                 401, 403, 403, 403, 403, 200),
            api("PATCH", "/api/v1/tenants/{tenantId}", f -> "{\"displayName\":\"M\"}",
                                                                                 401, 403, 403, 403, 403, 200),
            api("GET", "/api/v1/tenants/{tenantId}/nodes", null,                 401, 403, 200, 200, 200, 200),
            api("DELETE", "/api/v1/tenants/{tenantId}", null,                    401, 403, 403, 403, 403, 204),
            // policies: global; everyone but nodes reads them, only admins change them
            api("POST", "/api/v1/policies", f -> "{\"name\":\"" + unique("mx") + "\"}",
                                                                                 401, 403, 403, 403, 403, 201),
            api("GET", "/api/v1/policies", null,                                 401, 403, 200, 200, 200, 200),
            api("GET", "/api/v1/policies/{policyId}", null,                      401, 403, 200, 200, 200, 200),
            api("PUT", "/api/v1/policies/{policyId}", f -> "{\"name\":\"" + f.policyName + "\",\"weight\":150}",
                                                                                 401, 403, 403, 403, 403, 200),
            api("PATCH", "/api/v1/policies/{policyId}", f -> "{\"weight\":160}",
                                                                                 401, 403, 403, 403, 403, 200),
            api("DELETE", "/api/v1/policies/{policyId}", null,                   401, 403, 403, 403, 403, 204),
            // volumes: a tenant-admin manages its own tenant's
            api("POST", "/api/v1/tenants/{tenantId}/volumes",
                    f -> "{\"name\":\"" + unique("mx") + "\",\"sizeBytes\":1048576}",
                                                                                 401, 403, 403, 403, 201, 201),
            api("GET", "/api/v1/tenants/{tenantId}/volumes", null,               401, 403, 200, 200, 200, 200),
            api("GET", "/api/v1/volumes", null,                                  401, 403, 200, 200, 200, 200),
            api("GET", "/api/v1/volumes/{volumeId}", null,                       401, 403, 200, 200, 200, 200),
            api("PUT", "/api/v1/volumes/{volumeId}", f -> "{\"name\":\"" + f.volumeName + "\",\"sizeBytes\":2097152}",
                                                                                 401, 403, 403, 403, 200, 200),
            api("PATCH", "/api/v1/volumes/{volumeId}", f -> "{\"overrides\":{\"weight\":300}}",
                                                                                 401, 403, 403, 403, 200, 200),
            api("DELETE", "/api/v1/volumes/{volumeId}", null,                    401, 403, 403, 403, 204, 204),
            // client certificates: a tenant-admin manages its own tenant's, viewers read (never a key)
            api("POST", "/api/v1/tenants/{tenantId}/client-certificates", f -> "{\"name\":\"" + unique("mx") + "\"}",
                                                                                 401, 403, 403, 403, 201, 201),
            api("GET", "/api/v1/tenants/{tenantId}/client-certificates", null,   401, 403, 200, 200, 200, 200),
            api("DELETE", "/api/v1/tenants/{tenantId}/client-certificates/{certificateId}", null,
                                                                                 401, 403, 403, 403, 204, 204),
            // data nodes and cluster resources: admins and unbound viewers; a node reads its own config
            api("POST", "/api/v1/nodes", f -> "{\"name\":\"" + unique("mx") + "\"}",
                                                                                 401, 403, 403, 403, 403, 201),
            api("GET", "/api/v1/nodes", null,                                    401, 403, 403, 200, 403, 200),
            api("GET", "/api/v1/nodes/{nodeId}", null,                           401, 403, 403, 200, 403, 200),
            api("PATCH", "/api/v1/nodes/{nodeId}", f -> "{\"labels\":{\"zone\":\"z1\"}}",
                                                                                 401, 403, 403, 403, 403, 200),
            api("DELETE", "/api/v1/nodes/{nodeId}", null,                        401, 403, 403, 403, 403, 204),
            api("GET", "/api/v1/nodes/{nodeId}/desired-config", null,            401, 200, 403, 200, 403, 200),
            api("GET", "/api/v1/task-shares", null,                              401, 403, 403, 200, 403, 200),
            api("PUT", "/api/v1/task-shares", Fixture::currentDefaultShares,     401, 403, 403, 403, 403, 200),
            api("GET", "/api/v1/nodes/{nodeId}/task-shares", null,               401, 403, 403, 200, 403, 200),
            api("PUT", "/api/v1/nodes/{nodeId}/task-shares", Fixture::currentDefaultShares,
                                                                                 401, 403, 403, 403, 403, 200),
            prepared("DELETE", "/api/v1/nodes/{nodeId}/task-shares", Fixture::withTaskShareOverride,
                                                                                 401, 403, 403, 403, 403, 204),
            // usage: a tenant's callers read its volumes' and its own; node task usage is cluster-wide
            api("GET", "/api/v1/usage/volumes/{volumeId}", null,                 401, 403, 200, 200, 200, 200),
            api("GET", "/api/v1/usage/volumes/{volumeId}/used", null,            401, 403, 200, 200, 200, 200),
            api("GET", "/api/v1/usage/tenants/{tenantId}", null,                 401, 403, 200, 200, 200, 200),
            api("GET", "/api/v1/usage/total", null,                              401, 403, 200, 200, 200, 200),
            api("GET", "/api/v1/usage/nodes/{nodeId}/tasks", null,               401, 403, 403, 200, 403, 200),
            api("GET", "/api/v1/usage/top", null,                                401, 403, 200, 200, 200, 200),
            // tokens
            api("POST", "/api/v1/tokens", f -> "{\"name\":\"" + unique("mx") + "\",\"role\":\"viewer\"}",
                                                                                 401, 403, 403, 403, 403, 201),
            api("GET", "/api/v1/tokens", null,                                   401, 403, 403, 403, 403, 200),
            api("DELETE", "/api/v1/tokens/{tokenId}", null,                      401, 403, 403, 403, 403, 204),
            // audit
            api("GET", "/api/v1/audit", null,                                    401, 403, 403, 403, 200, 200),
            // not Spring MVC: actuator and springdoc
            other("GET", "/actuator/health",                                     200, 200, 200, 200, 200, 200),
            other("GET", "/actuator/health/liveness",                            200, 200, 200, 200, 200, 200),
            other("GET", "/actuator/health/readiness",                           200, 200, 200, 200, 200, 200),
            other("GET", "/actuator/prometheus",                                 401, 403, 403, 200, 403, 200),
            other("GET", "/v3/api-docs",                                         200, 200, 200, 200, 200, 200),
            other("GET", "/swagger-ui/index.html",                               200, 200, 200, 200, 200, 200),
            other("GET", "/swagger-ui.html",                                     302, 302, 302, 302, 302, 302),
            // the dashboard's static files: the page signs in by itself
            other("GET", "/",                                                    200, 200, 200, 200, 200, 200),
            other("GET", "/dashboard/dashboard.js",                              200, 200, 200, 200, 200, 200),
            other("GET", "/webjars/uplot/dist/uPlot.iife.min.js",                200, 200, 200, 200, 200, 200));

    private static Row api(String method, String path, Function<Fixture, String> body, int... statuses) {
        return new Row(method, path, body, expected(statuses), true, f -> { });
    }

    /** A row whose resources need more than creating: {@code prepare} runs on each fresh fixture. */
    private static Row prepared(String method, String path, Consumer<Fixture> prepare, int... statuses) {
        return new Row(method, path, null, expected(statuses), true, prepare);
    }

    private static Row other(String method, String path, int... statuses) {
        return new Row(method, path, null, expected(statuses), false, f -> { });
    }

    private static Map<Caller, Integer> expected(int... statuses) {
        Map<Caller, Integer> map = new EnumMap<>(Caller.class);
        for (Caller c : Caller.values()) {
            map.put(c, statuses[c.ordinal()]);
        }
        return map;
    }

    private static final Pattern VARIABLE = Pattern.compile("\\{([A-Za-z]+)}");

    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    private String viewerAllToken;

    @BeforeEach
    void sharedTokens() {
        if (viewerAllToken == null) {
            viewerAllToken = mintToken("viewer", null, null);
        }
    }

    @Test
    void everyEndpointHasARow() {
        Set<String> served = new TreeSet<>();
        mappings.getHandlerMethods().forEach((RequestMappingInfo info, HandlerMethod handler) -> {
            String type = handler.getBeanType().getName();
            if (type.startsWith("org.springdoc") || type.startsWith("org.springframework")) {
                return; // springdoc's and Boot's own (error) controllers
            }
            for (String pattern : info.getPathPatternsCondition().getPatternValues()) {
                info.getMethodsCondition().getMethods().forEach(m -> served.add(m.name() + " " + pattern));
            }
        });
        Set<String> listed = new TreeSet<>();
        MATRIX.stream().filter(Row::api).forEach(r -> listed.add(r.method() + " " + r.path()));
        assertThat(listed).as("rows of AuthorizationMatrixTest.MATRIX vs the endpoints Spring MVC serves")
                .isEqualTo(served);
    }

    @TestFactory
    Stream<DynamicTest> everyRoleGetsTheExpectedStatusOnEveryEndpoint() {
        return MATRIX.stream().map(row -> DynamicTest.dynamicTest(row.toString(), () -> check(row)));
    }

    private void check(Row row) {
        Fixture f = new Fixture();
        row.prepare().accept(f);
        List<String> wrong = new ArrayList<>();
        for (Caller caller : Caller.values()) {
            if (row.method().equals("DELETE")) {
                f = new Fixture(); // each caller deletes a resource of its own
                row.prepare().accept(f);
            }
            String path = resolve(row.path(), f);
            String body = row.body() == null ? null : row.body().apply(f);
            String type = body == null ? null : row.method().equals("PATCH") ? HttpApi.MERGE_PATCH : HttpApi.JSON;
            Response r = client(caller, f).send(row.method(), path, type, body, Map.of());
            int want = row.expected().get(caller);
            if (r.status() != want) {
                wrong.add(caller + ": want " + want + ", got " + r);
            } else if (r.status() == 401 || r.status() == 403) {
                if (!String.valueOf(r.contentType()).startsWith("application/problem+json")) {
                    wrong.add(caller + ": " + r.status() + " is not problem+json");
                }
            }
        }
        assertThat(wrong).as(row.toString()).isEmpty();
    }

    private HttpApi client(Caller caller, Fixture f) {
        return switch (caller) {
            case NONE -> anonymousApi();
            case NODE -> apiAs(f.nodeToken());
            case VIEWER_A -> apiAs(f.viewerA);
            case VIEWER_ALL -> apiAs(viewerAllToken);
            case TENANT_ADMIN_A -> apiAs(f.tenantAdminA);
            case ADMIN -> api;
        };
    }

    private String resolve(String template, Fixture f) {
        Matcher m = VARIABLE.matcher(template);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String value = switch (m.group(1)) {
                case "tenantId" -> f.tenantId.toString();
                case "tokenId" -> f.tokenId().toString();
                case "nodeId" -> f.nodeId().toString();
                case "policyId" -> f.policyId().toString();
                case "volumeId" -> f.volumeId().toString();
                case "certificateId" -> f.certificateId().toString();
                default -> throw new IllegalArgumentException("no fixture for {" + m.group(1) + "} in " + template);
            };
            m.appendReplacement(out, value);
        }
        return m.appendTail(out).toString();
    }

    /** Fresh resources of one row: tenant A with its tokens; a node and a token made when asked for. */
    final class Fixture {
        final String tenantName = unique("mx");
        final UUID tenantId;
        final String tenantAdminA;
        final String viewerA;
        private UUID nodeId;
        private String nodeToken;
        private UUID tokenId;
        final String policyName = unique("mx");
        private UUID policyId;
        final String volumeName = unique("mx");
        private UUID volumeId;
        private UUID certificateId;

        Fixture() {
            Response t = api.post("/api/v1/tenants", "{\"name\":\"" + tenantName + "\"}");
            assertThat(t.status()).isEqualTo(201);
            tenantId = UUID.fromString(t.json().get("id").asString());
            tenantAdminA = mintToken("tenant-admin", tenantId, null);
            viewerA = mintToken("viewer", tenantId, null);
        }

        /** A data node, registered through the API, which answers its token. */
        UUID nodeId() {
            if (nodeId == null) {
                Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("mx") + "\"}");
                assertThat(r.status()).isEqualTo(201);
                nodeId = UUID.fromString(r.json().get("id").asString());
                nodeToken = r.json().get("token").asString();
            }
            return nodeId;
        }

        String nodeToken() {
            nodeId();
            return nodeToken;
        }

        /** The cluster default's tasks as a body: putting it back changes no share. */
        String currentDefaultShares() {
            return "{\"tasks\":" + api.get("/api/v1/task-shares").json().get("tasks") + "}";
        }

        void withTaskShareOverride() {
            Response r = api.put("/api/v1/nodes/" + nodeId() + "/task-shares", currentDefaultShares(), null);
            assertThat(r.status()).isEqualTo(200);
        }

        UUID policyId() {
            if (policyId == null) {
                Response r = api.post("/api/v1/policies", "{\"name\":\"" + policyName + "\"}");
                assertThat(r.status()).isEqualTo(201);
                policyId = UUID.fromString(r.json().get("id").asString());
            }
            return policyId;
        }

        UUID volumeId() {
            if (volumeId == null) {
                Response r = api.post("/api/v1/tenants/" + tenantId + "/volumes",
                        "{\"name\":\"" + volumeName + "\",\"sizeBytes\":1048576}");
                assertThat(r.status()).isEqualTo(201);
                volumeId = UUID.fromString(r.json().get("id").asString());
            }
            return volumeId;
        }

        /** A client certificate of tenant A, issued through the API. */
        UUID certificateId() {
            if (certificateId == null) {
                Response r = api.post("/api/v1/tenants/" + tenantId + "/client-certificates",
                        "{\"name\":\"" + unique("mx") + "\"}");
                assertThat(r.status()).isEqualTo(201);
                certificateId = UUID.fromString(r.json().get("id").asString());
            }
            return certificateId;
        }

        UUID tokenId() {
            if (tokenId == null) {
                Response r = api.post("/api/v1/tokens", "{\"name\":\"" + unique("mx") + "\",\"role\":\"viewer\"}");
                tokenId = UUID.fromString(r.json().get("id").asString());
            }
            return tokenId;
        }
    }
}
