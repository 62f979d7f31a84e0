package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.LogCapture;
import io.weir.controlplane.support.RawRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client's mistake is a 4xx problem, never a 500, never a 409 about a "concurrent change",
 * never Tomcat's HTML page or Spring's default JSON, never logged at ERROR; and an error body
 * does not echo unbounded input.
 */
class ClientMistakeErrorsTest extends IntegrationTest {

    /** Every list endpoint; {tenant} is replaced with a real tenant id. */
    private static final List<String> LISTS = List.of("/api/v1/tenants", "/api/v1/tenants/{tenant}/volumes",
            "/api/v1/volumes", "/api/v1/policies", "/api/v1/nodes", "/api/v1/tokens", "/api/v1/audit");

    private LogCapture log;
    private String tenant;

    @BeforeEach
    void capture() {
        log = LogCapture.open();
        tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("cm") + "\"}").json().get("id").asString();
    }

    @AfterEach
    void noErrorLogged() {
        try {
            assertThat(log.atLeast(Level.ERROR)).as("client mistakes are not logged at ERROR").isEmpty();
        } finally {
            log.close();
        }
    }

    private static void assertProblem(Response r, int status) {
        assertThat(r.status()).as(r.toString()).isEqualTo(status);
        assertThat(r.contentType()).as(r.toString()).startsWith("application/problem+json");
        assertThat(r.json().get("status").asInt()).isEqualTo(status);
    }

    private static void assertProblem(RawRequest.Response r, int status) {
        assertThat(r.status()).as(r.toString()).isEqualTo(status);
        assertThat(r.contentType()).as(r.toString()).startsWith("application/problem+json");
        assertThat(r.body()).contains("\"status\":" + status);
    }

    private List<String> lists() {
        List<String> paths = new ArrayList<>();
        LISTS.forEach(p -> paths.add(p.replace("{tenant}", tenant)));
        return paths;
    }

    @Test
    void aPageOffsetPastIntegerMaxValueIsA400NamingPageOnEveryList() {
        for (String list : lists()) {
            Response r = api.get(list + "?page=42949673");
            assertProblem(r, 400);
            assertThat(r.json().get("errors").get(0).get("field").asString()).as(list).isEqualTo("page");
        }
    }

    @Test
    void theLastPageBelowTheOffsetLimitIsServed() {
        assertThat(api.get("/api/v1/tenants?page=" + Integer.MAX_VALUE / 500 + "&size=500").status()).isEqualTo(200);
    }

    @ParameterizedTest(name = "?{0}")
    @ValueSource(strings = {"name=%FF%FE", "name=a%00b", "name=%ED%A0%80", "name=%E2%82", "x%FF=1", "name=%25%FF"})
    void invalidTextInAQueryParameterIsA400NamingIt(String query) {
        for (String list : lists()) {
            Response r = api.get(list + "?" + query);
            assertProblem(r, 400);
            assertThat(r.json().get("errors")).as(list).hasSize(1);
        }
        Response r = api.get("/api/v1/tenants?" + query);
        if (query.startsWith("name=")) {
            assertThat(r.json().get("errors").get(0).get("field").asString()).isEqualTo("name");
        }
    }

    @Test
    void theErrorPathAskedForDirectlyIsA400Problem() {
        for (String method : List.of("GET", "POST", "PUT", "DELETE", "PATCH")) {
            Response r = api.send(method, "/error", null, null, java.util.Map.of());
            assertProblem(r, 400);
            assertThat(r.json().get("detail").asString()).as(method).contains("/error");
        }
        assertProblem(api.get("/error?x=1"), 400);
        assertProblem(anonymousApi().get("/error"), 401);
    }

    @Test
    void traceIsA405Problem() {
        assertProblem(RawRequest.send(port, "TRACE", "/api/v1/tenants", "Authorization: Bearer " + ADMIN_TOKEN), 405);
    }

    @ParameterizedTest(name = "Accept: {0}")
    @ValueSource(strings = {"text/html", "application/xml", "text/plain", "image/png", "garbage", "a/b;q=x"})
    void anUnacceptableAcceptIsA406ProblemWithABody(String accept) {
        for (String path : List.of("/api/v1/tenants", "/api/v1/tenants/" + tenant, "/api/v1/nodes/" + UUID.randomUUID())) {
            Response r = api.send("GET", path, null, null, java.util.Map.of("Accept", accept));
            assertProblem(r, 406);
            assertThat(r.json().get("detail").asString()).isNotBlank();
        }
        // A delete has no body to negotiate: a parsable Accept reaches it (404 here), garbage does not.
        for (String collection : List.of("tenants", "tokens", "policies", "nodes", "volumes")) {
            Response delete = api.send("DELETE", "/api/v1/" + collection + "/" + UUID.randomUUID(), null, null,
                    java.util.Map.of("Accept", accept));
            assertThat(delete.status()).as("DELETE %s: %s", collection, delete)
                    .isEqualTo(accept.contains("/") && !accept.contains("q=x") ? 404 : 406);
            assertProblem(delete, delete.status());
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/api/v1/tenants/%00", "/api/v1/tenants/a%2Fb", "/api/v1/tenants/a%5Cb",
            "/api/v1/tenants/../tokens", "/api/v1/%2e%2e/tokens", "/api/v1/tenants/%ZZ"})
    void aPathTomcatRefusesIsA400Problem(String path) {
        RawRequest.Response r = RawRequest.send(port, "GET", path, "Authorization: Bearer " + ADMIN_TOKEN);
        assertProblem(r, 400);
        assertThat(r.body()).doesNotContain("<html");
    }

    @Test
    void anOversizedHeaderIsA400Problem() {
        RawRequest.Response r = RawRequest.send(port, "GET", "/api/v1/tenants",
                "Authorization: Bearer " + ADMIN_TOKEN, "X-Big: " + "a".repeat(20_000));
        assertProblem(r, 400);
    }

    @Test
    void aQueryStringOver16KbIsA400Problem() {
        RawRequest.Response r = RawRequest.send(port, "GET", "/api/v1/tenants?name=" + "a".repeat(17_000),
                "Authorization: Bearer " + ADMIN_TOKEN);
        assertProblem(r, 400);
    }

    @Test
    void anErrorBodyDoesNotEchoAHugeId() {
        Response r = api.get("/api/v1/tenants/" + "a".repeat(10_000));
        assertProblem(r, 400);
        assertThat(r.body().length()).isLessThan(1_500);
        Response unknownPath = api.get("/api/v1/" + "b".repeat(10_000));
        assertProblem(unknownPath, 404);
        assertThat(unknownPath.body().length()).isLessThan(1_500);
    }

    @Test
    void anErrorBodyDoesNotEchoAHugeUnknownFieldName() {
        Response r = api.post("/api/v1/tenants", "{\"name\":\"x\",\"" + "k".repeat(10_000) + "\":1}");
        assertProblem(r, 400);
        assertThat(r.body().length()).isLessThan(1_500);
    }

    @Test
    void anErrorBodyDoesNotEchoAHugeIfMatch() {
        Response r = api.patch("/api/v1/tenants/" + tenant, "{\"weight\":7}", "\"" + "9".repeat(10_000) + "\"");
        assertProblem(r, 412);
        assertThat(r.body().length()).isLessThan(1_500);
    }

    @ParameterizedTest(name = "If-Match [{0}]")
    @ValueSource(strings = {"", " ", "\t", " , "})
    void anEmptyIfMatchIsA400NotAnAbsentPrecondition(String ifMatch) {
        String path = "/api/v1/tenants/" + tenant;
        Response put = api.send("PUT", path, "application/json", "{\"name\":\"renamed-" + tenant.substring(0, 8) + "\"}",
                java.util.Map.of("If-Match", ifMatch));
        Response patch = api.send("PATCH", path, "application/merge-patch+json", "{\"weight\":7}",
                java.util.Map.of("If-Match", ifMatch));
        Response delete = api.send("DELETE", path, null, null, java.util.Map.of("If-Match", ifMatch));
        for (Response r : List.of(put, patch, delete)) {
            assertProblem(r, 400);
            assertThat(r.json().get("errors").get(0).get("field").asString()).isEqualTo("If-Match");
        }
        Response after = api.get(path);
        assertThat(after.status()).isEqualTo(200);
        assertThat(after.json().get("version").asLong()).as("unchanged").isZero();
    }
}
