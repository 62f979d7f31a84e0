package io.weir.controlplane.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;

class PolicyApiTest extends IntegrationTest {

    private static final String POLICIES = "/api/v1/policies";

    @Autowired
    ConfigRevisions revisions;

    private Response create(String name, String extra) {
        return api.post(POLICIES, "{\"name\":\"" + name + "\"" + extra + "}");
    }

    private static String path(Response created) {
        return POLICIES + "/" + created.json().get("id").asString();
    }

    private static java.util.List<String> errorFields(Response r) {
        return r.json().get("errors").findValuesAsString("field");
    }

    @Test
    void createAnswers201WithLocationETagAndDefaults() {
        String name = unique("gold");
        Response r = create(name, ",\"description\":\"for databases\"");
        assertThat(r.status()).isEqualTo(201);
        JsonNode body = r.json();
        assertThat(r.header("Location")).endsWith(POLICIES + "/" + body.get("id").asString());
        assertThat(r.etag()).isEqualTo("\"0\"");
        assertThat(body.get("builtIn").asBoolean()).isFalse();
        assertThat(body.get("weight").asInt()).isEqualTo(100);
        assertThat(body.get("minIops").isNull()).isTrue();
        assertThat(body.get("maxIops").isNull()).isTrue();
        assertThat(body.get("burstBytesPerSec").isNull()).isTrue();
        assertThat(body.get("costModel").get("minChargeBytes").asInt()).isEqualTo(4096);
        assertThat(body.get("createdAt").asString()).endsWith("Z");

        Response read = api.get(path(r));
        assertThat(read.status()).isEqualTo(200);
        assertThat(read.etag()).isEqualTo("\"0\"");
        assertThat(read.json()).isEqualTo(body);
    }

    @Test
    void createWithEveryLimitRoundTrips() {
        Response r = create(unique("full"), ",\"weight\":400,\"minIops\":100,\"maxIops\":1000,\"burstIops\":2000,"
                + "\"maxBytesPerSec\":1048576,\"burstBytesPerSec\":2097152,\"costModel\":{\"minChargeBytes\":0}");
        assertThat(r.status()).isEqualTo(201);
        JsonNode b = r.json();
        assertThat(b.get("weight").asInt()).isEqualTo(400);
        assertThat(b.get("minIops").asLong()).isEqualTo(100);
        assertThat(b.get("maxIops").asLong()).isEqualTo(1000);
        assertThat(b.get("burstIops").asLong()).isEqualTo(2000);
        assertThat(b.get("maxBytesPerSec").asLong()).isEqualTo(1048576);
        assertThat(b.get("burstBytesPerSec").asLong()).isEqualTo(2097152);
        assertThat(b.get("costModel").get("minChargeBytes").asInt()).isEqualTo(0);
    }

    @Test
    void builtInPoliciesAreSeededAndListedFirst() {
        Response r = api.get(POLICIES + "?size=3");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.json().get("items").findValuesAsString("name"))
                .containsExactly("best-effort", "standard", "premium");
        assertThat(r.json().get("items").findValues("builtIn")).allMatch(JsonNode::asBoolean);
        Response standard = api.get(POLICIES + "/" + PolicyService.STANDARD_POLICY_ID);
        assertThat(standard.json().get("maxIops").asLong()).isEqualTo(5000);
        assertThat(standard.json().get("burstIops").asLong()).isEqualTo(10000);
    }

    @Test
    void builtInPolicyIsEditableAndStaysBuiltIn() {
        String premium = POLICIES + "/00000000-0000-4000-8000-000000000003";
        Response before = api.get(premium);
        String description = before.json().get("description").asString();
        long revision = revisions.current();

        Response edited = api.patch(premium, "{\"description\":\"edited by a test\"}", before.etag());
        assertThat(edited.status()).isEqualTo(200);
        assertThat(edited.json().get("builtIn").asBoolean()).isTrue();
        assertThat(edited.json().get("description").asString()).isEqualTo("edited by a test");
        assertThat(revisions.current()).as("a description is cosmetic").isEqualTo(revision);

        // Put it back so that other tests see the seeded text.
        assertThat(api.patch(premium, "{\"description\":\"" + description + "\"}", edited.etag()).status()).isEqualTo(200);
    }

    @Test
    void builtInFlagIsReadOnly() {
        Response created = create(unique("ro"), "");
        Response patched = api.patch(path(created), "{\"builtIn\":true}", null);
        assertThat(patched.status()).isEqualTo(400);
        assertThat(patched.json().get("detail").asString()).contains("builtIn");
        assertThat(create(unique("ro"), ",\"builtIn\":true").status()).isEqualTo(400);
        assertThat(api.get(path(created)).json().get("builtIn").asBoolean()).isFalse();
    }

    @Test
    void duplicateNameAnswers409OnCreateAndRename() {
        String name = unique("dup");
        assertThat(create(name, "").status()).isEqualTo(201);
        Response again = create(name, "");
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.contentType()).startsWith("application/problem+json");

        Response other = create(unique("dup"), "");
        assertThat(api.patch(path(other), "{\"name\":\"" + name + "\"}", null).status()).isEqualTo(409);
        assertThat(api.patch(path(other), "{\"name\":\"standard\"}", null).status()).isEqualTo(409);
    }

    @Test
    void fieldConstraintsAreEachListed() {
        Response r = api.post(POLICIES, "{\"name\":\"Bad Name\",\"weight\":10001,\"minIops\":0,\"maxIops\":-5,"
                + "\"maxBytesPerSec\":0,\"costModel\":{\"minChargeBytes\":16777217}}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(errorFields(r))
                .containsExactly("costModel.minChargeBytes", "maxBytesPerSec", "maxIops", "minIops", "name", "weight");
        assertThat(api.post(POLICIES, "{\"name\":\"x\",\"costModel\":{\"minChargeBytes\":-1}}").status()).isEqualTo(400);
        assertThat(api.post(POLICIES, "{\"weight\":5}").status()).isEqualTo(400);
    }

    @Test
    void inconsistentLimitsAreEachListed() {
        Response r = create(unique("bad"), ",\"minIops\":2000,\"maxIops\":1000,\"burstIops\":500,"
                + "\"burstBytesPerSec\":1000");
        assertThat(r.status()).isEqualTo(400);
        assertThat(errorFields(r)).containsExactly("burstBytesPerSec", "burstIops", "minIops");
        assertThat(r.json().toString()).contains("minIops (2000) must not exceed maxIops (1000)");

        Response bytes = create(unique("bad"), ",\"maxBytesPerSec\":2000,\"burstBytesPerSec\":1000");
        assertThat(bytes.status()).isEqualTo(400);
        assertThat(errorFields(bytes)).containsExactly("burstBytesPerSec");

        Response burstWithoutMax = create(unique("bad"), ",\"burstIops\":1000");
        assertThat(burstWithoutMax.status()).isEqualTo(400);
        assertThat(errorFields(burstWithoutMax)).containsExactly("burstIops");

        // A reservation equal to the limit is consistent (a burst must be above it); a reservation without a limit is too.
        assertThat(create(unique("ok"), ",\"minIops\":1000,\"maxIops\":1000,\"burstIops\":1001").status()).isEqualTo(201);
        assertThat(create(unique("ok"), ",\"minIops\":1000").status()).isEqualTo(201);
    }

    @Test
    void inconsistentLimitsAreRejectedOnPatchToo() {
        Response created = create(unique("p"), ",\"maxIops\":1000,\"burstIops\":2000");
        Response r = api.patch(path(created), "{\"maxIops\":null}", null);
        assertThat(r.status()).isEqualTo(400);
        assertThat(errorFields(r)).containsExactly("burstIops");
        assertThat(api.get(path(created)).json().get("maxIops").asLong()).isEqualTo(1000);
    }

    @Test
    void unknownFieldAndWrongTypeAreRejectedByName() {
        Response unknown = create(unique("u"), ",\"maxIop\":5");
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.json().get("detail").asString()).contains("maxIop");

        Response nested = create(unique("u"), ",\"costModel\":{\"minCharge\":5}");
        assertThat(nested.status()).isEqualTo(400);
        assertThat(nested.json().get("detail").asString()).contains("minCharge");

        Response wrongType = create(unique("u"), ",\"maxIops\":\"many\"");
        assertThat(wrongType.status()).isEqualTo(400);
        assertThat(errorFields(wrongType)).containsExactly("maxIops");
    }

    /**
     * A number past what a double holds ({@code 1e309}) is no number Weir can use: Jackson read it
     * as Infinity, which passed {@code @Positive}; the policy was stored, and every volume given
     * it answered 500. Refused at the boundary, naming the field, in every body.
     */
    @Test
    void aNumberPastWhatADoubleHoldsIsRefusedByName() {
        Response r = create(unique("inf"), ",\"maxIopsPerGiB\":1e309");
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(errorFields(r)).containsExactly("maxIopsPerGiB");
        Response negative = create(unique("inf"), ",\"burstIopsPerGiB\":-1e309");
        assertThat(negative.status()).as(negative.toString()).isEqualTo(400);
        assertThat(errorFields(negative)).containsExactly("burstIopsPerGiB");
        Response tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("t") + "\",\"maxIopsPerGiB\":1e309}");
        assertThat(tenant.status()).as(tenant.toString()).isEqualTo(400);
        assertThat(errorFields(tenant)).containsExactly("maxIopsPerGiB");
    }

    @Test
    void unknownPolicyAnswers404() {
        String missing = POLICIES + "/" + java.util.UUID.randomUUID();
        assertThat(api.get(missing).status()).isEqualTo(404);
        assertThat(api.put(missing, "{\"name\":\"x\"}", null).status()).isEqualTo(404);
        assertThat(api.patch(missing, "{}", null).status()).isEqualTo(404);
        assertThat(api.delete(missing, null).status()).isEqualTo(404);
        assertThat(api.get(POLICIES + "/not-a-uuid").status()).isEqualTo(400);
    }

    @Test
    void putReplacesEveryFieldAndLeftOutFieldsTakeDefaults() {
        Response created = create(unique("put"), ",\"weight\":300,\"maxIops\":1000,\"description\":\"d\","
                + "\"costModel\":{\"minChargeBytes\":512}");
        String name = unique("put");
        Response replaced = api.put(path(created), "{\"name\":\"" + name + "\",\"maxBytesPerSec\":4096}", created.etag());
        assertThat(replaced.status()).isEqualTo(200);
        JsonNode b = replaced.json();
        assertThat(b.get("name").asString()).isEqualTo(name);
        assertThat(b.get("weight").asInt()).isEqualTo(100);
        assertThat(b.get("maxIops").isNull()).isTrue();
        assertThat(b.get("description").isNull()).isTrue();
        assertThat(b.get("maxBytesPerSec").asLong()).isEqualTo(4096);
        assertThat(b.get("costModel").get("minChargeBytes").asInt()).isEqualTo(4096);
        assertThat(replaced.etag()).isEqualTo("\"1\"");
    }

    @Test
    void staleIfMatchAnswers412AndCurrentOneSucceeds() {
        Response created = create(unique("etag"), "");
        Response updated = api.patch(path(created), "{\"weight\":300}", created.etag());
        assertThat(updated.status()).isEqualTo(200);
        assertThat(updated.etag()).isEqualTo("\"1\"");

        assertThat(api.patch(path(created), "{\"weight\":400}", created.etag()).status()).isEqualTo(412);
        assertThat(api.put(path(created), "{\"name\":\"x\"}", created.etag()).status()).isEqualTo(412);
        assertThat(api.delete(path(created), created.etag()).status()).isEqualTo(412);
        assertThat(api.get(path(created)).json().get("weight").asInt()).isEqualTo(300);
        assertThat(api.delete(path(created), updated.etag()).status()).isEqualTo(204);
    }

    @Test
    void mergePatchNullRemovesALimitAndResetsTheCostModel() {
        Response created = create(unique("null"), ",\"maxIops\":1000,\"description\":\"kept\","
                + "\"costModel\":{\"minChargeBytes\":512}");
        Response patched = api.patch(path(created), "{\"maxIops\":null,\"costModel\":{\"minChargeBytes\":null}}", null);
        assertThat(patched.status()).isEqualTo(200);
        assertThat(patched.json().get("maxIops").isNull()).isTrue();
        assertThat(patched.json().get("costModel").get("minChargeBytes").asInt()).isEqualTo(4096);
        assertThat(patched.json().get("description").asString()).isEqualTo("kept");
        assertThat(api.patch(path(created), "[1]", null).status()).isEqualTo(400);
    }

    @Test
    void enforcementChangesBumpTheRevisionButNameAndDescriptionDoNot() {
        long start = revisions.current();
        Response created = create(unique("rev"), "");
        assertThat(revisions.current()).as("a new policy is used by nothing yet").isEqualTo(start);
        // A placed volume uses it from here on, so its enforced values reach a node.
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("pt") + "\"}").json().get("id").asString();
        createPlacedVolume(tenant, ",\"policyId\":\"" + created.json().get("id").asString() + "\"");
        start = revisions.current();

        assertThat(api.patch(path(created), "{\"name\":\"" + unique("renamed") + "\",\"description\":\"x\"}", null)
                .status()).isEqualTo(200);
        assertThat(revisions.current()).isEqualTo(start);

        assertThat(api.patch(path(created), "{\"weight\":100}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).as("same value, no change").isEqualTo(start);

        assertThat(api.patch(path(created), "{\"maxIops\":700}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).isEqualTo(start + 1);

        assertThat(api.patch(path(created), "{\"costModel\":{\"minChargeBytes\":8192}}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).isEqualTo(start + 2);
    }

    @Test
    void changesOfAPolicyNoPlacedVolumeUsesBumpNothing() {
        Response created = create(unique("unused"), "");
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("pt") + "\"}").json().get("id").asString();
        assertThat(api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"" + unique("v")
                + "\",\"sizeBytes\":4096,\"policyId\":\"" + created.json().get("id").asString() + "\"}").status())
                .as("an unplaced volume").isEqualTo(201);
        long start = revisions.current();
        assertThat(api.patch(path(created), "{\"maxIops\":700,\"weight\":5}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).isEqualTo(start);

        createPlacedVolume(tenant, ",\"policyId\":\"" + created.json().get("id").asString() + "\"");
        start = revisions.current();
        assertThat(api.patch(path(created), "{\"maxIops\":800}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).isEqualTo(start + 1);
    }

    @Test
    void listsArePagedInCreationOrderAndFilterByName() {
        String marker = unique("page");
        for (int i = 0; i < 5; i++) {
            assertThat(create(marker + "-" + i, "").status()).isEqualTo(201);
        }
        Response first = api.get(POLICIES + "?name=" + marker + "&size=2&page=0");
        Response third = api.get(POLICIES + "?name=" + marker + "&size=2&page=2");
        assertThat(first.json().get("totalItems").asLong()).isEqualTo(5);
        assertThat(first.json().get("totalPages").asInt()).isEqualTo(3);
        assertThat(first.json().get("items").findValuesAsString("name")).containsExactly(marker + "-0", marker + "-1");
        assertThat(third.json().get("items").findValuesAsString("name")).containsExactly(marker + "-4");
        assertThat(api.get(POLICIES + "?size=0").status()).isEqualTo(400);
        assertThat(api.get(POLICIES + "?page=-1").status()).isEqualTo(400);
    }

    @Test
    void unusedPolicyIsDeletedAndLaterReadsAnswer404() {
        Response created = create(unique("gone"), "");
        assertThat(api.delete(path(created), created.etag()).status()).isEqualTo(204);
        Response missing = api.get(path(created));
        assertThat(missing.status()).isEqualTo(404);
        assertThat(missing.contentType()).startsWith("application/problem+json");
    }

    @Test
    void openApiNamesEveryPolicyOperation() {
        Response docs = api.get("/v3/api-docs");
        assertThat(docs.status()).isEqualTo(200);
        assertThat(docs.json().findValuesAsString("operationId")).contains(
                "createPolicy", "listPolicies", "getPolicy", "replacePolicy", "patchPolicy", "deletePolicy");
    }
}
