package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * The smaller findings of issue 23 (item 11) on the REST side: browser security headers on the
 * dashboard and the API, a capped error list, an absurd usage step answered 400, and malformed
 * JSON described in Weir's words. Real HTTP against the application.
 */
class HostileClientErrorsTest extends IntegrationTest {

    @Test
    void theDashboardAndTheApiCarryTheSecurityHeaders() {
        List<Response> responses = List.of(anonymousApi().get("/"), anonymousApi().get("/dashboard/dashboard.js"),
                api.get("/api/v1/tenants"), anonymousApi().get("/api/v1/tenants"), api.get("/api/v1/no-such-thing"));
        for (Response r : responses) {
            assertThat(r.header("Content-Security-Policy")).as(r.toString()).contains("script-src 'self'")
                    .doesNotContain("unsafe-inline").contains("frame-ancestors 'none'");
            assertThat(r.header("Referrer-Policy")).as(r.toString()).isEqualTo("no-referrer");
            assertThat(r.header("Permissions-Policy")).as(r.toString()).contains("camera=()");
        }
    }

    @Test
    void aBodyOfTenThousandAndOneBadItemsGetsACappedErrorList() {
        StringBuilder body = new StringBuilder("{\"tasks\":[");
        for (int i = 0; i < 10_001; i++) {
            body.append(i == 0 ? "" : ",").append("{\"name\":\"\",\"share\":0}");
        }
        body.append("]}");
        Response r = api.put("/api/v1/task-shares", body.toString(), null);

        assertThat(r.status()).isEqualTo(400);
        JsonNode errors = r.json().get("errors");
        assertThat(errors.size()).isLessThanOrEqualTo(Problems.MAX_ERRORS);
        assertThat(r.body().length()).as("the answer stays small").isLessThan(64 * 1024);
    }

    @Test
    void aUsageStepTooLargeForMillisecondsIsRefusedNamingTheStep() {
        Response r = api.get("/api/v1/usage/top?step=PT2562047788015215H");

        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.json().get("errors").get(0).get("field").asString()).isEqualTo("step");
    }

    @Test
    void malformedJsonIsDescribedInWeirsWordsNotTheParsers() {
        Response r = api.post("/api/v1/tenants", "{\"name\": \"a\" \"weight\": 1}");

        assertThat(r.status()).isEqualTo(400);
        String message = r.json().get("errors").get(0).get("message").asString();
        assertThat(message).startsWith("malformed JSON at line 1, column");
        assertThat(r.body()).doesNotContain("Unexpected character").doesNotContain("expecting").doesNotContain("(CTRL-CHAR");
    }
}
