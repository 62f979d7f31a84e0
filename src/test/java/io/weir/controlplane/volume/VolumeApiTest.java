package io.weir.controlplane.volume;

import static io.weir.controlplane.volume.VolumeFixtures.BLOCK;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.policy.PolicyService;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import tools.jackson.databind.JsonNode;

class VolumeApiTest extends IntegrationTest {

    private static final String PREMIUM = "00000000-0000-4000-8000-000000000003";
    private static final String BEST_EFFORT = "00000000-0000-4000-8000-000000000001";

    @Autowired
    ConfigRevisions revisions;

    @Autowired
    JdbcClient jdbc;

    private VolumeFixtures fx;
    private String tenant;

    @BeforeEach
    void setUp() {
        fx = new VolumeFixtures(api, jdbc);
        tenant = fx.tenant(unique("t"));
    }

    private static List<String> errorFields(Response r) {
        return r.json().get("errors").findValuesAsString("field");
    }

    @Test
    void createAnswers201WithLocationETagAndTheStandardPolicy() {
        String name = unique("vol");
        Response r = fx.createVolume(tenant, name, "");
        assertThat(r.status()).isEqualTo(201);
        JsonNode body = r.json();
        assertThat(r.header("Location")).endsWith("/api/v1/volumes/" + body.get("id").asString());
        assertThat(r.versionTag()).isEqualTo("\"0\"");
        assertThat(body.get("tenantId").asString()).isEqualTo(tenant);
        assertThat(body.get("name").asString()).isEqualTo(name);
        assertThat(body.get("sizeBytes").asLong()).isEqualTo(256 * BLOCK);
        assertThat(body.get("policyId").asString()).isEqualTo(PolicyService.STANDARD_POLICY_ID.toString());
        assertThat(body.get("nodeIds").isEmpty()).isTrue();
        assertThat(body.get("overrides").properties()).allMatch(e -> e.getValue().isNull());
        JsonNode effective = body.get("effectivePolicy");
        assertThat(effective.get("weight").asInt()).isEqualTo(100);
        assertThat(effective.get("minIops").isNull()).isTrue();
        assertThat(effective.get("maxIops").asLong()).isEqualTo(5000);
        assertThat(effective.get("burstIops").asLong()).isEqualTo(10000);
        assertThat(effective.get("maxBytesPerSec").asLong()).isEqualTo(209715200);
        assertThat(effective.get("burstBytesPerSec").asLong()).isEqualTo(419430400);
        assertThat(effective.get("costModel").get("minChargeBytes").asInt()).isEqualTo(4096);

        Response read = api.get("/api/v1/volumes/" + body.get("id").asString());
        assertThat(read.status()).isEqualTo(200);
        assertThat(read.versionTag()).isEqualTo("\"0\"");
        assertThat(read.json()).isEqualTo(body);
    }

    @Test
    void effectivePolicyTakesEachOverrideElseThePolicyValue() {
        String policy = fx.policy(unique("p"), ",\"weight\":300,\"maxIops\":1000,\"burstIops\":3000,"
                + "\"maxBytesPerSec\":1000000,\"costModel\":{\"minChargeBytes\":8192}");
        Response r = fx.createVolume(tenant, unique("v"), ",\"policyId\":\"" + policy + "\","
                + "\"overrides\":{\"weight\":50,\"minIops\":200,\"burstIops\":5000,\"burstBytesPerSec\":2000000}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        JsonNode effective = r.json().get("effectivePolicy");
        assertThat(effective.get("weight").asInt()).isEqualTo(50);
        assertThat(effective.get("minIops").asLong()).isEqualTo(200);
        assertThat(effective.get("maxIops").asLong()).as("inherited").isEqualTo(1000);
        assertThat(effective.get("burstIops").asLong()).isEqualTo(5000);
        assertThat(effective.get("maxBytesPerSec").asLong()).as("inherited").isEqualTo(1000000);
        assertThat(effective.get("burstBytesPerSec").asLong()).isEqualTo(2000000);
        assertThat(effective.get("costModel").get("minChargeBytes").asInt()).isEqualTo(8192);
        assertThat(r.json().get("overrides").get("maxIops").isNull()).isTrue();
    }

    @Test
    void policyEditsShowInTheEffectivePolicyOfItsVolumes() {
        String policy = fx.policy(unique("p"), ",\"maxIops\":1000");
        String volume = fx.volume(tenant, unique("v"), ",\"policyId\":\"" + policy + "\",\"overrides\":{\"weight\":7}");
        assertThat(api.patch("/api/v1/policies/" + policy, "{\"maxIops\":1500,\"weight\":900}", null).status())
                .isEqualTo(200);
        JsonNode effective = api.get(volume).json().get("effectivePolicy");
        assertThat(effective.get("maxIops").asLong()).isEqualTo(1500);
        assertThat(effective.get("weight").asInt()).as("still overridden").isEqualTo(7);
    }

    @Test
    void inconsistentEffectivePolicyIsRejectedAgainstTheOverride() {
        // premium reserves 1000 IOPS: an overridden maximum below that can never be met.
        Response belowReservation = fx.createVolume(tenant, unique("v"),
                ",\"policyId\":\"" + PREMIUM + "\",\"overrides\":{\"maxIops\":500}");
        assertThat(belowReservation.status()).isEqualTo(400);
        assertThat(errorFields(belowReservation)).containsExactly("overrides.maxIops");
        assertThat(belowReservation.json().toString()).contains("minIops (1000) must not exceed maxIops (500)");

        // standard allows 5000 IOPS: a burst ceiling below that is inconsistent.
        Response burstBelowMax = fx.createVolume(tenant, unique("v"), ",\"overrides\":{\"burstIops\":4000}");
        assertThat(burstBelowMax.status()).isEqualTo(400);
        assertThat(errorFields(burstBelowMax)).containsExactly("overrides.burstIops");

        // best-effort is unlimited: bursting needs a maximum to burst above.
        Response burstWithoutMax = fx.createVolume(tenant, unique("v"),
                ",\"policyId\":\"" + BEST_EFFORT + "\",\"overrides\":{\"burstIops\":4000,\"burstBytesPerSec\":4096}");
        assertThat(burstWithoutMax.status()).isEqualTo(400);
        assertThat(errorFields(burstWithoutMax)).containsExactly("overrides.burstBytesPerSec", "overrides.burstIops");

        // Overriding both members consistently is fine.
        assertThat(fx.createVolume(tenant, unique("v"), ",\"policyId\":\"" + PREMIUM + "\","
                + "\"overrides\":{\"minIops\":100,\"maxIops\":500}").status()).isEqualTo(201);
    }

    @Test
    void fieldConstraintsAreEachListed() {
        String node = fx.node(unique("n"));
        Response r = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"Bad_Name\",\"sizeBytes\":1000,"
                + "\"overrides\":{\"weight\":0,\"minIops\":-1,\"maxBytesPerSec\":0},"
                + "\"nodeIds\":[\"" + node + "\",\"" + node + "\"]}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(errorFields(r)).containsExactly("name", "nodeIds", "overrides.maxBytesPerSec", "overrides.minIops",
                "overrides.weight", "sizeBytes");
        assertThat(r.json().toString()).contains("multiple of 4096");

        Response missingSize = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"" + unique("v") + "\"}");
        assertThat(missingSize.status()).isEqualTo(400);
        assertThat(errorFields(missingSize)).containsExactly("sizeBytes");

        Response zero = api.post("/api/v1/tenants/" + tenant + "/volumes",
                "{\"name\":\"" + unique("v") + "\",\"sizeBytes\":0}");
        assertThat(zero.status()).isEqualTo(400);
        assertThat(errorFields(zero)).containsExactly("sizeBytes");
        Response negative = api.post("/api/v1/tenants/" + tenant + "/volumes",
                "{\"name\":\"" + unique("v") + "\",\"sizeBytes\":-4096}");
        assertThat(negative.status()).isEqualTo(400);
        assertThat(errorFields(negative)).containsExactly("sizeBytes");
    }

    @Test
    void unknownPolicyAndUnknownNodesAreFieldErrors() {
        String node = fx.node(unique("n"));
        UUID ghost = UUID.randomUUID();
        Response r = fx.createVolume(tenant, unique("v"), ",\"policyId\":\"" + UUID.randomUUID() + "\","
                + "\"nodeIds\":[\"" + node + "\",\"" + ghost + "\"]");
        assertThat(r.status()).isEqualTo(400);
        assertThat(errorFields(r)).containsExactly("nodeIds", "policyId");
        assertThat(r.json().toString()).contains("no such policy").contains("no such node: " + ghost);
        assertThat(api.get("/api/v1/volumes?tenantId=" + tenant).json().get("totalItems").asLong()).isZero();
    }

    @Test
    void unknownTenantAnswers404() {
        String missing = "/api/v1/tenants/" + UUID.randomUUID() + "/volumes";
        Response create = api.post(missing, "{\"name\":\"v\",\"sizeBytes\":4096}");
        assertThat(create.status()).isEqualTo(404);
        assertThat(create.contentType()).startsWith("application/problem+json");
        assertThat(api.get(missing).status()).isEqualTo(404);
    }

    @Test
    void unknownVolumeAnswers404() {
        String missing = "/api/v1/volumes/" + UUID.randomUUID();
        assertThat(api.get(missing).status()).isEqualTo(404);
        assertThat(api.put(missing, "{\"name\":\"v\",\"sizeBytes\":4096}", null).status()).isEqualTo(404);
        assertThat(api.patch(missing, "{}", null).status()).isEqualTo(404);
        assertThat(api.delete(missing, null).status()).isEqualTo(404);
        assertThat(api.get("/api/v1/volumes/42").status()).isEqualTo(400);
    }

    @Test
    void duplicateNameWithinATenantAnswers409ButOtherTenantsMayReuseIt() {
        String name = unique("dup");
        fx.volume(tenant, name, "");
        Response again = fx.createVolume(tenant, name, "");
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.contentType()).startsWith("application/problem+json");
        assertThat(fx.createVolume(fx.tenant(unique("t")), name, "").status()).isEqualTo(201);

        String other = fx.volume(tenant, unique("other"), "");
        assertThat(api.patch(other, "{\"name\":\"" + name + "\"}", null).status()).isEqualTo(409);
    }

    @Test
    void unknownFieldAndWrongTypeAreRejectedByName() {
        Response unknown = fx.createVolume(tenant, unique("v"), ",\"sizeByte\":4096");
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.json().get("detail").asString()).contains("sizeByte");

        Response nested = fx.createVolume(tenant, unique("v"), ",\"overrides\":{\"maxIop\":5}");
        assertThat(nested.status()).isEqualTo(400);
        assertThat(nested.json().get("detail").asString()).contains("maxIop");

        Response readOnly = fx.createVolume(tenant, unique("v"), ",\"effectivePolicy\":{}");
        assertThat(readOnly.status()).isEqualTo(400);

        Response wrongType = api.post("/api/v1/tenants/" + tenant + "/volumes",
                "{\"name\":\"" + unique("v") + "\",\"sizeBytes\":\"big\"}");
        assertThat(wrongType.status()).isEqualTo(400);
        assertThat(errorFields(wrongType)).containsExactly("sizeBytes");

        Response badNode = fx.createVolume(tenant, unique("v"), ",\"nodeIds\":[\"node-1\"]");
        assertThat(badNode.status()).isEqualTo(400);
        assertThat(errorFields(badNode).get(0)).startsWith("nodeIds");

        String path = fx.volume(tenant, unique("v"), "");
        Response patchUnknown = api.patch(path, "{\"overrides\":{\"iops\":1}}", null);
        assertThat(patchUnknown.status()).isEqualTo(400);
        assertThat(patchUnknown.json().get("detail").asString()).contains("iops");
    }

    @Test
    void staleIfMatchAnswers412AndCurrentOneSucceeds() {
        Response created = fx.createVolume(tenant, unique("etag"), "");
        String path = "/api/v1/volumes/" + created.json().get("id").asString();
        Response updated = api.patch(path, "{\"overrides\":{\"weight\":300}}", created.etag());
        assertThat(updated.status()).isEqualTo(200);
        assertThat(updated.versionTag()).isEqualTo("\"1\"");

        assertThat(api.patch(path, "{\"overrides\":{\"weight\":400}}", created.etag()).status()).isEqualTo(412);
        assertThat(api.put(path, "{\"name\":\"x\",\"sizeBytes\":4096000}", created.etag()).status()).isEqualTo(412);
        assertThat(api.delete(path, created.etag()).status()).isEqualTo(412);
        assertThat(api.get(path).json().get("overrides").get("weight").asInt()).isEqualTo(300);
        assertThat(api.delete(path, updated.etag()).status()).isEqualTo(204);
        assertThat(api.get(path).status()).isEqualTo(404);
    }

    /**
     * If-Match uses the strong comparison (RFC 9110, 13.1.1): a weak tag never matches, even one
     * naming the current version, so a write guarded by one answers 412 and changes nothing.
     */
    @Test
    void aWeakIfMatchNeverMatches() {
        Response created = fx.createVolume(tenant, unique("weak"), "");
        String path = "/api/v1/volumes/" + created.json().get("id").asString();
        assertThat(created.versionTag()).isEqualTo("\"0\"");

        assertThat(api.patch(path, "{\"overrides\":{\"weight\":300}}", "W/\"0\"").status()).isEqualTo(412);
        assertThat(api.delete(path, "W/\"0\"").status()).isEqualTo(412);
        assertThat(api.delete(path, "W/\"0\", W/\"1\"").status()).isEqualTo(412);
        Response now = api.get(path);
        assertThat(now.status()).isEqualTo(200);
        assertThat(now.versionTag()).isEqualTo("\"0\"");
        // A strong tag in the same list still matches.
        assertThat(api.delete(path, "W/\"0\", \"0\"").status()).isEqualTo(204);
    }

    @Test
    void mergePatchNullResetsAnOverrideToThePolicyValue() {
        String path = fx.volume(tenant, unique("v"), ",\"overrides\":{\"weight\":7,\"maxIops\":100}");
        Response reset = api.patch(path, "{\"overrides\":{\"maxIops\":null}}", null);
        assertThat(reset.status()).isEqualTo(200);
        assertThat(reset.json().get("overrides").get("maxIops").isNull()).isTrue();
        assertThat(reset.json().get("overrides").get("weight").asInt()).as("untouched member kept").isEqualTo(7);
        assertThat(reset.json().get("effectivePolicy").get("maxIops").asLong()).as("standard's").isEqualTo(5000);
        assertThat(reset.json().get("sizeBytes").asLong()).isEqualTo(256 * BLOCK);

        Response all = api.patch(path, "{\"overrides\":null}", null);
        assertThat(all.status()).isEqualTo(200);
        assertThat(all.json().get("overrides").properties()).allMatch(e -> e.getValue().isNull());
        assertThat(all.json().get("effectivePolicy").get("weight").asInt()).isEqualTo(100);
        assertThat(api.patch(path, "\"text\"", null).status()).isEqualTo(400);
    }

    @Test
    void putReplacesEveryFieldAndLeftOutFieldsTakeDefaults() {
        String node = fx.node(unique("n"));
        Response created = fx.createVolume(tenant, unique("v"), ",\"policyId\":\"" + PREMIUM + "\","
                + "\"overrides\":{\"weight\":9},\"nodeIds\":[\"" + node + "\"]");
        String path = "/api/v1/volumes/" + created.json().get("id").asString();
        String name = unique("renamed");
        Response put = api.put(path, "{\"name\":\"" + name + "\",\"sizeBytes\":" + (512 * BLOCK) + "}", created.etag());
        assertThat(put.status()).as(put.toString()).isEqualTo(200);
        JsonNode b = put.json();
        assertThat(b.get("name").asString()).isEqualTo(name);
        assertThat(b.get("sizeBytes").asLong()).isEqualTo(512 * BLOCK);
        assertThat(b.get("policyId").asString()).isEqualTo(PolicyService.STANDARD_POLICY_ID.toString());
        assertThat(b.get("overrides").get("weight").isNull()).isTrue();
        assertThat(b.get("nodeIds").isEmpty()).isTrue();
        assertThat(b.get("tenantId").asString()).isEqualTo(tenant);
        assertThat(put.versionTag()).isEqualTo("\"1\"");
    }

    @Test
    void volumesGrowButCannotShrink() {
        String path = fx.volume(tenant, unique("v"), "");
        Response grown = api.patch(path, "{\"sizeBytes\":" + (1024 * BLOCK) + "}", null);
        assertThat(grown.status()).isEqualTo(200);
        assertThat(grown.json().get("sizeBytes").asLong()).isEqualTo(1024 * BLOCK);

        Response shrunk = api.patch(path, "{\"sizeBytes\":" + (512 * BLOCK) + "}", null);
        assertThat(shrunk.status()).as(shrunk.toString()).isEqualTo(409);
        assertThat(shrunk.json().get("detail").asString()).startsWith("volumes cannot shrink: the current size is "
                + 1024 * BLOCK + " bytes");
        assertThat(shrunk.json().get("currentSizeBytes").asLong()).isEqualTo(1024 * BLOCK);
        assertThat(shrunk.json().get("requestedSizeBytes").asLong()).isEqualTo(512 * BLOCK);
        assertThat(api.patch(path, "{\"sizeBytes\":" + (1024 * BLOCK + 1) + "}", null).status()).isEqualTo(400);
        assertThat(api.get(path).json().get("sizeBytes").asLong()).isEqualTo(1024 * BLOCK);
    }

    /**
     * No volume is larger than a data node can export (2^62 bytes): a node given one nacked its
     * whole config, or, on a file system that took it, could report none of its exports again.
     */
    @Test
    void aVolumeLargerThanTheLargestExportIsRefused() {
        long tooBig = (1L << 62) + BLOCK;
        Response created = api.post("/api/v1/tenants/" + tenant + "/volumes",
                "{\"name\":\"" + unique("v") + "\",\"sizeBytes\":" + tooBig + "}");
        assertThat(created.status()).as(created.toString()).isEqualTo(400);
        assertThat(errorFields(created)).containsExactly("sizeBytes");
        String path = fx.volume(tenant, unique("v"), "");
        Response grown = api.patch(path, "{\"sizeBytes\":" + tooBig + "}", null);
        assertThat(grown.status()).as(grown.toString()).isEqualTo(400);
        assertThat(api.patch(path, "{\"sizeBytes\":" + (1L << 62) + "}", null).status()).as("the largest").isEqualTo(200);
    }

    @Test
    void placementChangesAreVersionedAndFilterable() {
        String a = fx.node(unique("a"));
        String b = fx.node(unique("b"));
        Response created = fx.createVolume(tenant, unique("v"), ",\"nodeIds\":[\"" + a + "\"]");
        String path = "/api/v1/volumes/" + created.json().get("id").asString();
        assertThat(created.json().get("nodeIds").valueStream().map(JsonNode::asString)).containsExactly(a);
        assertThat(created.versionTag()).isEqualTo("\"0\"");
        assertThat(api.get(path).versionTag()).isEqualTo("\"0\"");

        Response moved = api.patch(path, "{\"nodeIds\":[\"" + b + "\"]}", created.etag());
        assertThat(moved.status()).isEqualTo(200);
        assertThat(moved.versionTag()).as("placement is part of the volume").isEqualTo("\"1\"");
        assertThat(moved.json().get("nodeIds").valueStream().map(JsonNode::asString)).containsExactly(b);
        assertThat(api.get("/api/v1/volumes?nodeId=" + b).json().get("items").findValuesAsString("id"))
                .containsExactly(created.json().get("id").asString());
        assertThat(api.get("/api/v1/volumes?nodeId=" + a).json().get("totalItems").asLong()).isZero();

        Response none = api.patch(path, "{\"nodeIds\":null}", moved.etag());
        assertThat(none.status()).isEqualTo(200);
        assertThat(none.json().get("nodeIds").isEmpty()).isTrue();
        assertThat(api.get("/api/v1/volumes?nodeId=" + a).json().get("totalItems").asLong()).isZero();
    }

    @Test
    void aVolumePlacedOnSeveralNodesBeforeTheRefusalIsReportedAndNeverChangedSilently() {
        String a = fx.node(unique("a"));
        String b = fx.node(unique("b"));
        Response created = fx.createVolume(tenant, unique("v"), ",\"nodeIds\":[\"" + a + "\"]");
        String id = created.json().get("id").asString();
        String path = "/api/v1/volumes/" + id;
        // As an earlier release allowed: the same volume placed on a second node.
        jdbc.sql("insert into volume_placement (volume_id, node_id) values (?, ?)")
                .params(UUID.fromString(id), UUID.fromString(b)).update();

        Response read = api.get(path);
        assertThat(read.json().get("nodeIds").valueStream().map(JsonNode::asString))
                .containsExactlyElementsOf(java.util.stream.Stream.of(a, b).sorted().toList());
        assertThat(read.json().get("placementWarning").asString())
                .isEqualTo("placed on 2 data nodes by an earlier release, which did not replicate: each serves its own, "
                        + "unrelated copy of the volume; keep the copy you need and set nodeIds to its node alone (replicas "
                        + "can then be added)");
        assertThat(read.json().get("replicas").asInt()).isEqualTo(1);
        assertThat(read.json().get("primaryNodeId").isNull()).as("no copy is the primary").isTrue();
        assertThat(read.json().get("degraded").asBoolean()).isFalse();
        assertThat(api.get("/api/v1/tenants/" + tenant + "/volumes").json().get("items").get(0)
                .get("placementWarning").asString()).startsWith("placed on 2 data nodes");

        Response grown = api.patch(path, "{\"sizeBytes\":" + (512 * BLOCK) + "}", read.etag());
        assertThat(grown.status()).as("a write that keeps the placement is not refused: " + grown).isEqualTo(200);
        assertThat(grown.json().get("nodeIds")).as("kept as it was").isEqualTo(read.json().get("nodeIds"));
        assertThat(grown.json().get("replicas").asInt()).as("still one copy: never converted").isEqualTo(1);

        String c = fx.node(unique("c"));
        Response added = api.patch(path, "{\"nodeIds\":[\"" + a + "\",\"" + b + "\",\"" + c + "\"]}", grown.etag());
        assertThat(added.status()).as(added.toString()).isEqualTo(409);
        assertThat(added.json().get("detail").asString()).startsWith("this volume was placed on 2 data nodes by an earlier "
                + "release, which did not replicate: each node holds its own, unrelated copy, so the placement cannot take "
                + "another node");
        Response converted = api.patch(path, "{\"replicas\":2}", grown.etag());
        assertThat(converted.status()).as(converted.toString()).isEqualTo(409);
        assertThat(converted.json().get("detail").asString()).contains("cannot become replicated");
        Response convertedByPut = api.put(path, "{\"name\":\"" + grown.json().get("name").asString() + "\",\"sizeBytes\":"
                + (512 * BLOCK) + ",\"nodeIds\":" + grown.json().get("nodeIds") + ",\"replicas\":2}", grown.etag());
        assertThat(convertedByPut.status()).as(convertedByPut.toString()).isEqualTo(409);
        assertThat(api.get(path).versionTag()).as("unchanged").isEqualTo(grown.versionTag());
        Response asItIs = api.put(path, "{\"name\":\"" + grown.json().get("name").asString() + "\",\"sizeBytes\":"
                + (512 * BLOCK) + ",\"nodeIds\":" + grown.json().get("nodeIds") + ",\"replicas\":1}", grown.etag());
        assertThat(asItIs.status()).as("replicas 1 over the same nodes says what it is: " + asItIs).isEqualTo(200);
        assertThat(asItIs.json().get("placementWarning").isNull()).isFalse();

        Response kept = api.patch(path, "{\"nodeIds\":[\"" + a + "\"]}", asItIs.etag());
        assertThat(kept.status()).isEqualTo(200);
        assertThat(kept.json().get("placementWarning").isNull()).isTrue();
    }

    @Test
    void enforcedChangesBumpTheRevisionOnceAndNoOpsDoNot() {
        String first = fx.node(unique("n"));
        String node = fx.node(unique("n"));
        String lookalike = fx.policy(unique("same"), ",\"maxIops\":5000,\"burstIops\":10000,"
                + "\"maxBytesPerSec\":209715200,\"burstBytesPerSec\":419430400");
        long start = revisions.current();
        // Placed from the start: only a volume that some node serves is in a snapshot.
        Response created = fx.createVolume(tenant, unique("v"), ",\"nodeIds\":[\"" + first + "\"]");
        String path = "/api/v1/volumes/" + created.json().get("id").asString();
        assertThat(revisions.current()).as("create").isEqualTo(start + 1);

        assertThat(api.patch(path, "{}", null).status()).isEqualTo(200);
        assertThat(api.patch(path, "{\"sizeBytes\":" + (256 * BLOCK) + "}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).as("no change").isEqualTo(start + 1);

        assertThat(api.patch(path, "{\"policyId\":\"" + lookalike + "\"}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).as("same effective values").isEqualTo(start + 1);

        assertThat(api.patch(path, "{\"sizeBytes\":" + (512 * BLOCK) + ",\"overrides\":{\"maxIops\":6000}}", null)
                .status()).isEqualTo(200);
        assertThat(revisions.current()).as("one bump per request").isEqualTo(start + 2);

        assertThat(api.patch(path, "{\"nodeIds\":[\"" + node + "\"]}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).as("placement").isEqualTo(start + 3);

        assertThat(api.patch(path, "{\"name\":\"" + unique("export") + "\"}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).as("the export name").isEqualTo(start + 4);

        assertThat(api.patch(path, "{\"overrides\":{\"burstIops\":10}}", null).status()).isEqualTo(400);
        assertThat(revisions.current()).as("a rejected change").isEqualTo(start + 4);

        assertThat(api.delete(path, null).status()).isEqualTo(204);
        assertThat(revisions.current()).as("delete").isEqualTo(start + 5);
    }

    @Test
    void tenantVolumesArePagedInCreationOrderAndFilterByName() {
        String marker = unique("page");
        for (int i = 0; i < 5; i++) {
            fx.volume(tenant, marker + "-" + i, "");
        }
        fx.volume(tenant, unique("else"), "");
        String base = "/api/v1/tenants/" + tenant + "/volumes";
        Response first = api.get(base + "?name=" + marker + "&size=2&page=0");
        Response second = api.get(base + "?name=" + marker + "&size=2&page=1");
        Response third = api.get(base + "?name=" + marker + "&size=2&page=2");
        assertThat(first.status()).isEqualTo(200);
        assertThat(first.json().get("totalItems").asLong()).isEqualTo(5);
        assertThat(first.json().get("totalPages").asInt()).isEqualTo(3);
        assertThat(first.json().get("items").findValuesAsString("name")).containsExactly(marker + "-0", marker + "-1");
        assertThat(second.json().get("items").findValuesAsString("name")).containsExactly(marker + "-2", marker + "-3");
        assertThat(third.json().get("items").findValuesAsString("name")).containsExactly(marker + "-4");
        assertThat(api.get(base).json().get("totalItems").asLong()).isEqualTo(6);
        assertThat(api.get(base + "?size=501").status()).isEqualTo(400);
    }

    @Test
    void volumeListFiltersByTenantAndNodeInCombination() {
        String other = fx.tenant(unique("t"));
        String node = fx.node(unique("n"));
        String placed = fx.volume(tenant, unique("placed"), ",\"nodeIds\":[\"" + node + "\"]");
        String unplaced = fx.volume(tenant, unique("unplaced"), "");
        String elsewhere = fx.volume(other, unique("elsewhere"), ",\"nodeIds\":[\"" + node + "\"]");

        assertThat(ids(api.get("/api/v1/volumes?tenantId=" + tenant))).containsExactly(id(placed), id(unplaced));
        assertThat(ids(api.get("/api/v1/volumes?nodeId=" + node))).containsExactly(id(placed), id(elsewhere));
        assertThat(ids(api.get("/api/v1/volumes?tenantId=" + tenant + "&nodeId=" + node))).containsExactly(id(placed));
        assertThat(ids(api.get("/api/v1/volumes?tenantId=" + UUID.randomUUID()))).isEmpty();
        Response all = api.get("/api/v1/volumes?size=500");
        assertThat(all.status()).isEqualTo(200);
        assertThat(all.json().get("totalItems").asLong()).isGreaterThanOrEqualTo(3);
        assertThat(api.get("/api/v1/volumes?nodeId=nope").status()).isEqualTo(400);
    }

    @Test
    void tenantWithVolumesCannotBeDeletedAndTheProblemNamesThem() {
        String first = unique("a");
        String second = unique("b");
        String a = fx.volume(tenant, first, "");
        String b = fx.volume(tenant, second, "");
        Response refused = api.delete("/api/v1/tenants/" + tenant, null);
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.contentType()).startsWith("application/problem+json");
        assertThat(refused.json().get("volumes").valueStream().map(JsonNode::asString)).containsExactly(first, second);
        assertThat(api.get("/api/v1/tenants/" + tenant).status()).isEqualTo(200);

        assertThat(api.delete(a, null).status()).isEqualTo(204);
        assertThat(api.delete(b, null).status()).isEqualTo(204);
        assertThat(api.delete("/api/v1/tenants/" + tenant, null).status()).isEqualTo(204);
    }

    @Test
    void policyInUseCannotBeDeletedAndTheProblemNamesTheVolumes() {
        String policy = fx.policy(unique("used"), "");
        String name = unique("user");
        String volume = fx.volume(tenant, name, ",\"policyId\":\"" + policy + "\"");
        Response refused = api.delete("/api/v1/policies/" + policy, null);
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.json().get("volumes").valueStream().map(JsonNode::asString)).containsExactly(name);
        assertThat(refused.json().get("volumeIds").valueStream().map(JsonNode::asString)).containsExactly(id(volume));

        assertThat(api.patch(volume, "{\"policyId\":null}", null).json().get("policyId").asString())
                .isEqualTo(PolicyService.STANDARD_POLICY_ID.toString());
        assertThat(api.delete("/api/v1/policies/" + policy, null).status()).isEqualTo(204);
    }

    @Test
    void policyChangeThatContradictsAVolumesOverridesAnswers409() {
        String policy = fx.policy(unique("p"), ",\"maxIops\":5000");
        String name = unique("capped");
        fx.volume(tenant, name, ",\"policyId\":\"" + policy + "\",\"overrides\":{\"maxIops\":800},"
                + "\"nodeIds\":[\"" + fx.node(unique("n")) + "\"]");
        long start = revisions.current();
        Response refused = api.patch("/api/v1/policies/" + policy, "{\"minIops\":1000}", null);
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.json().get("volumes").valueStream().map(JsonNode::asString)).containsExactly(name);
        assertThat(revisions.current()).as("rolled back").isEqualTo(start);
        assertThat(api.get("/api/v1/policies/" + policy).json().get("minIops").isNull()).isTrue();

        assertThat(api.patch("/api/v1/policies/" + policy, "{\"minIops\":500}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).isEqualTo(start + 1);
    }

    @Test
    void openApiNamesEveryVolumeOperation() {
        Response docs = api.get("/v3/api-docs");
        assertThat(docs.status()).isEqualTo(200);
        assertThat(docs.json().findValuesAsString("operationId")).contains("createVolume", "listTenantVolumes",
                "listVolumes", "getVolume", "replaceVolume", "patchVolume", "deleteVolume");
        assertThat(docs.json().get("components").get("schemas").get("VolumeOverrides").toString()).contains("INHERITS");
    }

    private static List<String> ids(Response r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json().get("items").findValuesAsString("id");
    }

    @Test
    void allUnknownNodesAreListedInOneFieldError() {
        String ghost1 = UUID.randomUUID().toString();
        String ghost2 = UUID.randomUUID().toString();
        Response r = fx.createVolume(tenant, unique("v"), ",\"nodeIds\":[\"" + fx.node(unique("n")) + "\",\""
                + ghost1 + "\",\"" + ghost2 + "\"]");
        assertThat(r.status()).isEqualTo(400);
        assertThat(errorFields(r)).containsExactly("nodeIds");
        assertThat(r.json().get("errors").get(0).get("message").asString()).contains(ghost1, ghost2);
    }

    @Test
    void anUnplacedVolumeBumpsNothingUntilItIsPlacedOrUnplaced() {
        long start = revisions.current();
        Response created = fx.createVolume(tenant, unique("v"), "");
        assertThat(created.status()).isEqualTo(201);
        String path = "/api/v1/volumes/" + created.json().get("id").asString();
        assertThat(revisions.current()).as("create, unplaced").isEqualTo(start);
        assertThat(api.patch(path, "{\"name\":\"" + unique("renamed") + "\",\"overrides\":{\"weight\":7}}", null)
                .status()).isEqualTo(200);
        assertThat(revisions.current()).as("rename, unplaced").isEqualTo(start);

        assertThat(api.patch(path, "{\"nodeIds\":[\"" + fx.node(unique("n")) + "\"]}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).as("placed").isEqualTo(start + 1);
        assertThat(api.patch(path, "{\"nodeIds\":[]}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).as("unplaced: the node drops it").isEqualTo(start + 2);

        assertThat(api.delete(path, null).status()).isEqualTo(204);
        assertThat(revisions.current()).as("delete, unplaced").isEqualTo(start + 2);
    }

    @Test
    void putAndPatchNameTheSameFieldPathsForTheSameBadInput() {
        String path = fx.volume(tenant, unique("v"), "");
        String name = api.get(path).json().get("name").asString();
        String bad = "\"nodeIds\":[\"" + fx.node(unique("n")) + "\",null],\"overrides\":{\"maxIops\":0}";

        Response put = api.put(path, "{\"name\":\"" + name + "\",\"sizeBytes\":" + (256 * BLOCK) + "," + bad + "}", null);
        Response patch = api.patch(path, "{" + bad + "}", null);

        assertThat(put.status()).as(put.toString()).isEqualTo(400);
        assertThat(patch.status()).as(patch.toString()).isEqualTo(400);
        assertThat(errorFields(put)).containsExactly("nodeIds[1]", "overrides.maxIops");
        assertThat(errorFields(patch)).isEqualTo(errorFields(put));
    }

    private static String id(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
