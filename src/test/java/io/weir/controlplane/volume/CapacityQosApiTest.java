package io.weir.controlplane.volume;

import static io.weir.support.Bytes.GiB;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.usage.UsedSpaceHistory;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.JsonNode;

/**
 * Capacity-based QoS through the REST API: per-GiB terms in policies and overrides, the numbers
 * in force and their sources in {@code effectivePolicy}, resizes and used space, and the strict
 * validation of the terms. (With fio on a real data node: {@code CapacityQosE2ETest}.)
 */
class CapacityQosApiTest extends IntegrationTest {

    @Autowired
    JdbcClient jdbc;

    @Autowired
    ConfigRevisions revisions;

    @Autowired
    UsedSpaceHistory usedSpace;

    @Autowired
    TransactionTemplate tx;

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

    /** A new tenant whose limit scales: 10 IOPS per GiB of its volumes, at least 100, at most 10,000. */
    private String scaledTenant() {
        return id(api.post("/api/v1/tenants", "{\"name\":\"" + unique("t") + "\",\"maxIopsPerGiB\":10,"
                + "\"maxIopsFloor\":100,\"maxIops\":10000}"));
    }

    private Response volume(String policy, long size, String extra) {
        return api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"" + unique("v") + "\",\"sizeBytes\":" + size
                + ",\"policyId\":\"" + policy + "\"" + extra + "}");
    }

    @Test
    void fiftyIopsPerGiBGiveATenGiBVolume500AndAResizeTo20GiB1000() {
        String policy = fx.policy(unique("p"), ",\"maxIopsPerGiB\":50");
        Response created = volume(policy, 10 * GiB, ",\"nodeIds\":[\"" + newNode() + "\"]");
        assertThat(created.status()).as(created.toString()).isEqualTo(201);
        JsonNode effective = created.json().get("effectivePolicy");
        assertThat(effective.get("maxIops").asLong()).isEqualTo(500);
        assertThat(effective.get("sources").get("maxIops").asString()).isEqualTo("perGiB");
        assertThat(effective.get("capacityBasis").asString()).isEqualTo("allocated");
        assertThat(effective.get("capacityBytes").asLong()).isEqualTo(10 * GiB);
        String id = created.json().get("id").asString();

        long before = revisions.current();
        Response grown = api.patch("/api/v1/volumes/" + id, "{\"sizeBytes\":" + 20 * GiB + "}", null);
        assertThat(grown.status()).as(grown.toString()).isEqualTo(200);
        assertThat(grown.json().get("effectivePolicy").get("maxIops").asLong()).isEqualTo(1000);
        assertThat(revisions.current()).as("a resize of a placed volume reaches its node").isGreaterThan(before);
    }

    @Test
    void eachNumberSaysWhetherItsRateItsFloorOrItsCapProducedIt() {
        String policy = fx.policy(unique("gp2"), ",\"maxIopsPerGiB\":3,\"maxIopsFloor\":100,\"maxIops\":16000,"
                + "\"minIopsPerGiB\":1,\"minIopsFloor\":10,\"minIops\":5000,\"maxBytesPerSec\":1000000");
        JsonNode small = volume(policy, 10 * GiB, "").json().get("effectivePolicy");
        assertThat(small.get("maxIops").asLong()).isEqualTo(100);
        assertThat(small.get("sources").get("maxIops").asString()).isEqualTo("floor");
        assertThat(small.get("minIops").asLong()).isEqualTo(10);
        assertThat(small.get("sources").get("maxBytesPerSec").asString()).isEqualTo("absolute");
        assertThat(small.get("sources").get("burstIops").isNull()).isTrue();
        JsonNode mid = volume(policy, 1000 * GiB, "").json().get("effectivePolicy");
        assertThat(mid.get("maxIops").asLong()).isEqualTo(3000);
        assertThat(mid.get("sources").get("maxIops").asString()).isEqualTo("perGiB");
        assertThat(mid.get("minIops").asLong()).isEqualTo(1000);
        JsonNode large = volume(policy, 8000 * GiB, "").json().get("effectivePolicy");
        assertThat(large.get("maxIops").asLong()).isEqualTo(16000);
        assertThat(large.get("sources").get("maxIops").asString()).isEqualTo("cap");
    }

    @Test
    void volumeOverridesUseTheSameTermsMemberByMember() {
        String policy = fx.policy(unique("p"), ",\"maxIopsPerGiB\":50,\"maxIopsFloor\":100");
        Response r = volume(policy, 10 * GiB, ",\"overrides\":{\"maxIopsPerGiB\":20,\"maxIops\":150}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        assertThat(r.json().get("overrides").get("maxIopsPerGiB").asDouble()).isEqualTo(20.0);
        JsonNode effective = r.json().get("effectivePolicy");
        assertThat(effective.get("maxIops").asLong()).isEqualTo(150);
        assertThat(effective.get("sources").get("maxIops").asString()).isEqualTo("cap");
    }

    @Test
    void aMisspelledKeyIsA400NamingIt() {
        Response r = api.post("/api/v1/policies", "{\"name\":\"" + unique("p") + "\",\"maxIopsPerGB\":50}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.body()).contains("maxIopsPerGB");
        Response v = volume(fx.policy(unique("p"), ""), GiB, ",\"overrides\":{\"maxIopsPerGb\":50}");
        assertThat(v.status()).isEqualTo(400);
        assertThat(v.body()).contains("maxIopsPerGb");
        Response basis = api.post("/api/v1/policies", "{\"name\":\"" + unique("p") + "\",\"maxIopsPerGiB\":5,"
                + "\"capacityBasis\":\"written\"}");
        assertThat(basis.status()).isEqualTo(400);
        assertThat(basis.body()).contains("capacityBasis");
    }

    @Test
    void aFloorAboveItsCapIsA400() {
        Response r = api.post("/api/v1/policies", "{\"name\":\"" + unique("p") + "\",\"maxIopsPerGiB\":50,"
                + "\"maxIopsFloor\":2000,\"maxIops\":1000}");
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(errorFields(r)).containsExactly("maxIopsFloor");
        Response alone = api.post("/api/v1/policies", "{\"name\":\"" + unique("p") + "\",\"maxIopsFloor\":100}");
        assertThat(alone.status()).isEqualTo(400);
        assertThat(errorFields(alone)).containsExactly("maxIopsFloor");
    }

    @Test
    void aReservationPerGiBAboveTheLimitPerGiBIsA400() {
        Response r = api.post("/api/v1/policies", "{\"name\":\"" + unique("p") + "\",\"maxIopsPerGiB\":10,"
                + "\"minIopsPerGiB\":20}");
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(errorFields(r)).contains("minIopsPerGiB");
        String policy = fx.policy(unique("p"), ",\"maxIopsPerGiB\":10");
        Response v = volume(policy, GiB, ",\"overrides\":{\"minIopsPerGiB\":20}");
        assertThat(v.status()).as(v.toString()).isEqualTo(400);
        assertThat(errorFields(v)).contains("overrides.minIopsPerGiB");
    }

    @Test
    void aCombinationTheNodeWouldRefuseAtSomeCapacityIsA400() {
        // an absolute reservation of 300 under a limit of 50/GiB with a floor of 100: below 6 GiB the node would refuse it
        Response r = api.post("/api/v1/policies", "{\"name\":\"" + unique("p") + "\",\"minIops\":300,"
                + "\"maxIopsPerGiB\":50,\"maxIopsFloor\":100}");
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(errorFields(r)).containsExactly("minIops");
        // a burst that is not above the limit at capacity 0 (both floors 1)
        Response burst = api.post("/api/v1/policies", "{\"name\":\"" + unique("p") + "\",\"maxIopsPerGiB\":10,"
                + "\"burstIopsPerGiB\":30}");
        assertThat(burst.status()).as(burst.toString()).isEqualTo(400);
        assertThat(errorFields(burst)).containsExactly("burstIopsPerGiB");
        assertThat(api.post("/api/v1/policies", "{\"name\":\"" + unique("p") + "\",\"maxIopsPerGiB\":10,"
                + "\"maxIopsFloor\":100,\"burstIopsPerGiB\":30,\"burstIopsFloor\":300}").status()).isEqualTo(201);
        // the same through a merge patch of a policy in use
        String policy = fx.policy(unique("p"), ",\"maxIopsPerGiB\":50,\"maxIopsFloor\":100");
        assertThat(volume(policy, GiB, "").status()).isEqualTo(201);
        Response patched = api.patch("/api/v1/policies/" + policy, "{\"minIops\":300}", null);
        assertThat(patched.status()).as(patched.toString()).isEqualTo(400);
    }

    @Test
    void reservationsThatScaleCountAgainstTheTenantsLimitAtTheVolumesSize() {
        String limited = id(api.post("/api/v1/tenants", "{\"name\":\"" + unique("t") + "\",\"maxIops\":1000}"));
        String policy = fx.policy(unique("p"), ",\"minIopsPerGiB\":10,\"maxIopsPerGiB\":50,\"maxIopsFloor\":100");
        String node = newNode();
        Response fits = api.post("/api/v1/tenants/" + limited + "/volumes", "{\"name\":\"a\",\"sizeBytes\":" + 60 * GiB
                + ",\"policyId\":\"" + policy + "\",\"nodeIds\":[\"" + node + "\"]}");
        assertThat(fits.status()).as(fits.toString()).isEqualTo(201);
        Response over = api.post("/api/v1/tenants/" + limited + "/volumes", "{\"name\":\"b\",\"sizeBytes\":" + 50 * GiB
                + ",\"policyId\":\"" + policy + "\",\"nodeIds\":[\"" + node + "\"]}");
        assertThat(over.status()).as("600 + 500 reserved IOPS under a limit of 1000: %s", over).isEqualTo(409);
        Response grown = api.patch("/api/v1/volumes/" + id(fits), "{\"sizeBytes\":" + 120 * GiB + "}", null);
        assertThat(grown.status()).as("a resize to 1200 reserved IOPS: %s", grown).isEqualTo(409);
        Response raised = api.patch("/api/v1/policies/" + policy, "{\"minIopsPerGiB\":20}", null);
        assertThat(raised.status()).as("a policy change to 1200 reserved IOPS: %s", raised).isEqualTo(409);
    }

    @Test
    void usedSpaceBeyondTheHysteresisRescalesAVolumeOfBasisUsedAndIsKeptAsHistory() {
        String policy = fx.policy(unique("p"), ",\"maxIopsPerGiB\":100,\"maxIopsFloor\":50,\"capacityBasis\":\"used\"");
        String node = newNode();
        Response created = volume(policy, 10 * GiB, ",\"nodeIds\":[\"" + node + "\"]");
        String id = id(created);
        JsonNode empty = created.json().get("effectivePolicy");
        assertThat(empty.get("maxIops").asLong()).isEqualTo(50);
        assertThat(empty.get("sources").get("maxIops").asString()).isEqualTo("floor");
        assertThat(empty.get("capacityBasis").asString()).isEqualTo("used");

        long before = revisions.current();
        report(node, id, 300L << 20); // below the hysteresis of 5% of 10 GiB (512 MiB)
        JsonNode small = api.get("/api/v1/volumes/" + id).json();
        assertThat(small.get("usedBytes").asLong()).isEqualTo(300L << 20);
        assertThat(small.get("effectivePolicy").get("maxIops").asLong()).isEqualTo(50);
        assertThat(revisions.current()).isEqualTo(before);

        report(node, id, 2 * GiB);
        JsonNode written = api.get("/api/v1/volumes/" + id).json();
        assertThat(written.get("effectivePolicy").get("maxIops").asLong()).isEqualTo(200);
        assertThat(written.get("effectivePolicy").get("sources").get("maxIops").asString()).isEqualTo("perGiB");
        assertThat(written.get("effectivePolicy").get("capacityBytes").asLong()).isEqualTo(2 * GiB);
        assertThat(revisions.current()).as("the node gets the new numbers").isGreaterThan(before);

        report(UUID.randomUUID().toString(), id, 9 * GiB); // a node the volume is not placed on
        assertThat(api.get("/api/v1/volumes/" + id).json().get("usedBytes").asLong()).isEqualTo(2 * GiB);

        Response history = api.get("/api/v1/usage/volumes/" + id + "/used");
        assertThat(history.status()).as(history.toString()).isEqualTo(200);
        assertThat(history.json().get("points").findValuesAsString("usedBytes")).isNotNull();
        assertThat(history.json().get("points").findValues("usedBytes")).extracting(JsonNode::asLong)
                .containsExactly(300L << 20, 2 * GiB);
    }

    /**
     * Volume sizes whose sum passes a bigint (each valid alone) must not break the tenant's reads,
     * the node's desired config or any other tenant's: the sum is the capacity a per-GiB limit
     * scales with, and saturates. It failed every read that summed it with 400 "outside what the
     * service can store", and every config push that included the tenant.
     */
    @Test
    void volumesWhoseSizesSumPastABigintLeaveTheTenantAndItsNodesReadable() {
        String scaled = scaledTenant();
        String policy = fx.policy(unique("p"), "");
        String node = newNode();
        id(api.post("/api/v1/tenants/" + scaled + "/volumes", "{\"name\":\"small\",\"sizeBytes\":" + GiB
                + ",\"policyId\":\"" + policy + "\",\"nodeIds\":[\"" + node + "\"]}"));
        for (String name : List.of("a", "b")) {
            Response huge = api.post("/api/v1/tenants/" + scaled + "/volumes", "{\"name\":\"" + name + "\",\"sizeBytes\":"
                    + (1L << 62) + ",\"policyId\":\"" + policy + "\"}");
            assertThat(huge.status()).as(huge.toString()).isEqualTo(201);
        }
        Response tenantRead = api.get("/api/v1/tenants/" + scaled);
        assertThat(tenantRead.status()).as(tenantRead.toString()).isEqualTo(200);
        assertThat(tenantRead.json().get("effectiveLimits").get("maxIops").asLong()).as("the cap").isEqualTo(10000);
        Response desired = api.get("/api/v1/nodes/" + node + "/desired-config");
        assertThat(desired.status()).as(desired.toString()).isEqualTo(200);
        assertThat(desired.json().get("tenants").get(0).get("maxIops").asLong()).isEqualTo(10000);
        Response all = api.get("/api/v1/tenants");
        assertThat(all.status()).as(all.toString()).isEqualTo(200);
    }

    /**
     * A reservation so large that adding it to the others on the node passes a bigint must be
     * refused as over the tenant's limit, not wrap to a negative sum that fits.
     */
    @Test
    void aReservationThatWouldOverflowTheSumOnItsNodeIsRefusedAsOverTheLimit() {
        String limited = id(api.post("/api/v1/tenants", "{\"name\":\"" + unique("t") + "\",\"maxIops\":10000}"));
        String node = newNode();
        String reserving = fx.policy(unique("p"), ",\"minIops\":1000");
        Response first = api.post("/api/v1/tenants/" + limited + "/volumes", "{\"name\":\"a\",\"sizeBytes\":" + GiB
                + ",\"policyId\":\"" + reserving + "\",\"nodeIds\":[\"" + node + "\"]}");
        assertThat(first.status()).as(first.toString()).isEqualTo(201);
        long huge = Long.MAX_VALUE - 500;
        Response over = api.post("/api/v1/tenants/" + limited + "/volumes", "{\"name\":\"b\",\"sizeBytes\":" + GiB
                + ",\"policyId\":\"" + fx.policy(unique("p"), "") + "\",\"nodeIds\":[\"" + node + "\"],"
                + "\"overrides\":{\"minIops\":" + huge + ",\"maxIops\":" + huge + "}}");
        assertThat(over.status()).as(over.toString()).isEqualTo(409);
    }

    @Test
    void aTenantsPerGiBLimitScalesWithTheSumOfItsVolumesAndReachesItsNodes() {
        String scaled = scaledTenant();
        String policy = fx.policy(unique("p"), "");
        String node = newNode();
        id(api.post("/api/v1/tenants/" + scaled + "/volumes", "{\"name\":\"a\",\"sizeBytes\":" + 20 * GiB
                + ",\"policyId\":\"" + policy + "\",\"nodeIds\":[\"" + node + "\"]}"));
        JsonNode limits = api.get("/api/v1/tenants/" + scaled).json().get("effectiveLimits");
        assertThat(limits.get("maxIops").asLong()).isEqualTo(200);
        assertThat(limits.get("maxIopsSource").asString()).isEqualTo("perGiB");
        // a second volume, on no node, still raises the tenant's limit on the node of the first
        id(api.post("/api/v1/tenants/" + scaled + "/volumes", "{\"name\":\"b\",\"sizeBytes\":" + 30 * GiB
                + ",\"policyId\":\"" + policy + "\"}"));
        assertThat(api.get("/api/v1/tenants/" + scaled).json().get("effectiveLimits").get("capacityBytes").asLong())
                .isEqualTo(50 * GiB);
        JsonNode desired = api.get("/api/v1/nodes/" + node + "/desired-config").json();
        assertThat(desired.get("tenants").get(0).get("maxIops").asLong()).isEqualTo(500);

        Response floorOverCap = api.patch("/api/v1/tenants/" + scaled, "{\"maxIopsFloor\":20000}", null);
        assertThat(floorOverCap.status()).as(floorOverCap.toString()).isEqualTo(400);
        assertThat(errorFields(floorOverCap)).containsExactly("maxIopsFloor");
        Response misspelled = api.patch("/api/v1/tenants/" + scaled, "{\"maxIopsPerGb\":20}", null);
        assertThat(misspelled.status()).isEqualTo(400);
        assertThat(misspelled.body()).contains("maxIopsPerGb");
        // reservations fit under the floor, the least the scaled limit can be
        String reserving = fx.policy(unique("p"), ",\"minIops\":150");
        Response over = api.post("/api/v1/tenants/" + scaled + "/volumes", "{\"name\":\"c\",\"sizeBytes\":" + GiB
                + ",\"policyId\":\"" + reserving + "\",\"nodeIds\":[\"" + node + "\"]}");
        assertThat(over.status()).as(over.toString()).isEqualTo(409);
    }

    private void report(String node, String volume, long used) {
        tx.executeWithoutResult(s -> usedSpace.record(UUID.fromString(node), Map.of(UUID.fromString(volume), used)));
    }

    private static String id(Response r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }
}
