package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The conventions every endpoint shares, checked on one of them: every error is a problem. */
class HttpConventionsTest extends IntegrationTest {

    private static final String TENANTS = "/api/v1/tenants";

    private static void assertProblem(Response r, int status) {
        assertThat(r.status()).as(r.toString()).isEqualTo(status);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(r.json().get("status").asInt()).isEqualTo(status);
        assertThat(r.json().get("title").asString()).isNotBlank();
        assertThat(r.body()).doesNotContain("Exception").doesNotContain("\tat ");
    }

    @Test
    void malformedJsonAnswers400Problem() {
        assertProblem(api.post(TENANTS, "{\"name\": \"x\","), 400);
        assertProblem(api.post(TENANTS, "not json at all"), 400);
    }

    @Test
    void emptyBodyAnswers400Problem() {
        assertProblem(api.send("POST", TENANTS, HttpApi.JSON, "", Map.of()), 400);
    }

    @Test
    void trailingGarbageAfterTheDocumentAnswers400() {
        assertProblem(api.post(TENANTS, "{\"name\":\"" + unique("t") + "\"} {}"), 400);
    }

    @Test
    void wrongTypeNamesTheFieldAndTheExpectedType() {
        Response r = api.post(TENANTS, "{\"name\":\"" + unique("t") + "\",\"maxIops\":\"lots\"}");
        assertProblem(r, 400);
        assertThat(r.json().get("errors").get(0).get("field").asString()).isEqualTo("maxIops");
        assertThat(r.json().get("errors").get(0).get("message").asString()).contains("integer");
    }

    @Test
    void unknownFieldAnswers400NamingIt() {
        Response r = api.post(TENANTS, "{\"name\":\"" + unique("t") + "\",\"colour\":\"red\"}");
        assertProblem(r, 400);
        assertThat(r.json().get("errors").get(0).get("message").asString()).contains("colour");
    }

    @Test
    void unknownPathAnswers404Problem() {
        assertProblem(api.get("/api/v1/no-such-thing"), 404);
    }

    @Test
    void unknownIdAnswers404Problem() {
        assertProblem(api.get(TENANTS + "/00000000-0000-4000-8000-00000000dead"), 404);
    }

    @Test
    void malformedIdAnswers400Problem() {
        assertProblem(api.get(TENANTS + "/not-a-uuid"), 400);
    }

    @Test
    void unsupportedMethodAnswers405Problem() {
        assertProblem(api.delete(TENANTS, null), 405);
    }

    @Test
    void unsupportedContentTypeAnswers415Problem() {
        assertProblem(api.send("POST", TENANTS, "text/plain", "name=x", Map.of()), 415);
    }

    @Test
    void patchRequiresMergePatchMediaType() {
        Response created = api.post(TENANTS, "{\"name\":\"" + unique("t") + "\"}");
        String path = TENANTS + "/" + created.json().get("id").asString();
        assertProblem(api.send("PATCH", path, HttpApi.JSON, "{\"weight\":5}", Map.of()), 415);
    }

    @Test
    void oversizedBodyWithContentLengthAnswers413Problem() {
        String big = "{\"name\":\"" + "x".repeat(2 * 1024 * 1024) + "\"}";
        assertProblem(api.post(TENANTS, big), 413);
    }

    @Test
    void oversizedChunkedBodyAnswers413Problem() {
        String big = "{\"displayName\":\"" + "x".repeat(2 * 1024 * 1024) + "\"}";
        Response r = api.sendStreaming("POST", TENANTS, HttpApi.JSON, big);
        assertProblem(r, 413);
    }

    @Test
    void negativePageAnswers400Problem() {
        assertProblem(api.get(TENANTS + "?page=-1"), 400);
        assertProblem(api.get(TENANTS + "?size=abc"), 400);
    }

    @Test
    void badPagingParametersAreListedAsFieldErrors() {
        Response page = api.get(TENANTS + "?page=-1");
        assertProblem(page, 400);
        assertThat(page.json().get("errors").findValuesAsString("field")).containsExactly("page");
        Response size = api.get(TENANTS + "?size=501");
        assertProblem(size, 400);
        assertThat(size.json().get("errors").findValuesAsString("field")).containsExactly("size");
    }

    @Test
    void malformedParametersNameTheExpectedTypeInPlainWords() {
        Response id = api.get(TENANTS + "/not-a-uuid");
        assertThat(id.json().get("errors").get(0).get("field").asString()).isEqualTo("tenantId");
        assertThat(id.json().get("errors").get(0).get("message").asString()).startsWith("wrong type: expected a UUID string (8-4-4-4-12 hex digits");
        Response size = api.get(TENANTS + "?size=abc");
        assertThat(size.json().get("errors").get(0).get("message").asString()).isEqualTo("wrong type: expected an integer");
    }
}
