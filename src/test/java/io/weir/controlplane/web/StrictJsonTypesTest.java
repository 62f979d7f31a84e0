package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A value of the wrong JSON type is refused with 400 naming the field, never converted quietly:
 * not 1.9 into 1, "100" into 100, or 123 into "123". POST bodies and merged PATCH documents alike.
 */
class StrictJsonTypesTest extends IntegrationTest {

    private static final String TENANTS = "/api/v1/tenants";

    private static void assertNamesField(Response r, String field, String expected) {
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(r.json().get("errors")).hasSize(1);
        assertThat(r.json().get("errors").get(0).get("field").asString()).isEqualTo(field);
        assertThat(r.json().get("errors").get(0).get("message").asString()).contains(expected);
    }

    @ParameterizedTest(name = "POST {0}")
    @CsvSource(delimiter = '|', value = {
            "\"weight\":1.9     | weight | an integer",
            "\"weight\":\"100\" | weight | an integer",
            "\"maxIops\":true   | maxIops | an integer"})
    void wrongTypesInAPostBodyAnswer400NamingTheField(String member, String field, String expected) {
        Response r = api.post(TENANTS, "{\"name\":\"" + unique("strict") + "\"," + member + "}");
        assertNamesField(r, field, expected);
    }

    @org.junit.jupiter.api.Test
    void aNumberForAStringInAPostBodyAnswers400NamingTheField() {
        assertNamesField(api.post(TENANTS, "{\"name\":123}"), "name", "a string");
    }

    @ParameterizedTest(name = "PATCH {0}")
    @CsvSource(delimiter = '|', value = {
            "\"weight\":1.9     | weight | an integer",
            "\"weight\":\"100\" | weight | an integer",
            "\"name\":123       | name   | a string",
            "\"maxIops\":true   | maxIops | an integer"})
    void wrongTypesInAMergePatchAnswer400NamingTheField(String member, String field, String expected) {
        Response created = api.post(TENANTS, "{\"name\":\"" + unique("strict") + "\"}");
        assertThat(created.status()).isEqualTo(201);
        String path = TENANTS + "/" + created.json().get("id").asString();
        Response r = api.patch(path, "{" + member + "}", null);
        assertNamesField(r, field, expected);
        assertThat(api.get(path).json().get("version").asLong()).as("unchanged").isEqualTo(0);
    }

    @org.junit.jupiter.api.Test
    void anIntegerWhereADecimalIsExpectedIsTheSameNumberAndAccepted() {
        Response r = api.put("/api/v1/task-shares", """
                {"tasks":[{"name":"foreground","share":900},
                 {"name":"flush","share":100,"dynamic":{"t1":0,"t2":1,"low":10,"high":1000,"curve":"linear"}}]}""",
                "\"-1\"");
        // A stale If-Match: the body was read (no 400), the write itself refused.
        assertThat(r.status()).as(r.toString()).isEqualTo(412);
    }
}
