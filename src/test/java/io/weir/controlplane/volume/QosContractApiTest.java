package io.weir.controlplane.volume;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The API refuses what a data node's scheduler would refuse (the two cases reported in issue 10,
 * and the ways around them): the QoS contract has one owner, {@code io.weir.protocol.QosSettings}.
 */
class QosContractApiTest extends IntegrationTest {

    @Autowired
    JdbcClient jdbc;

    private VolumeFixtures fx;

    @BeforeEach
    void fixtures() {
        fx = new VolumeFixtures(api, jdbc);
    }

    private static List<String> errorFields(Response r) {
        return r.json().get("errors").findValuesAsString("field");
    }

    @Test
    void aPolicyWhoseBurstEqualsItsMaximumIsRefused() {
        Response iops = api.post("/api/v1/policies", "{\"name\":\"" + unique("eq") + "\",\"maxIops\":1000,\"burstIops\":1000}");
        assertThat(iops.status()).as(iops.toString()).isEqualTo(400);
        assertThat(errorFields(iops)).containsExactly("burstIops");
        assertThat(iops.body()).contains("burstIops (1000) must be greater than maxIops (1000)");

        Response bytes = api.post("/api/v1/policies",
                "{\"name\":\"" + unique("eq") + "\",\"maxBytesPerSec\":4096,\"burstBytesPerSec\":4096}");
        assertThat(bytes.status()).as(bytes.toString()).isEqualTo(400);
        assertThat(errorFields(bytes)).containsExactly("burstBytesPerSec");
    }

    @Test
    void anOverrideThatMakesTheBurstEqualToTheMaximumIsRefused() {
        String tenant = fx.tenant(unique("t"));
        // standard: maxIops 5000, burstIops 10000
        Response r = fx.createVolume(tenant, unique("v"), ",\"overrides\":{\"burstIops\":5000}");
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(errorFields(r)).containsExactly("overrides.burstIops");
    }

    @Test
    void aTenantLimitBelowTheReservationsOfItsVolumesOnANodeIsRefused() {
        String tenant = fx.tenant(unique("t"));
        String node = fx.node(unique("n"));
        String a = fx.volume(tenant, unique("a"), ",\"nodeIds\":[\"" + node + "\"],\"overrides\":{\"minIops\":60}");
        String b = fx.volume(tenant, unique("b"), ",\"nodeIds\":[\"" + node + "\"],\"overrides\":{\"minIops\":60}");

        Response r = api.patch("/api/v1/tenants/" + tenant, "{\"maxIops\":100}", null);

        assertThat(r.status()).as(r.toString()).isEqualTo(409);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(r.json().get("detail").asString()).contains("maxIops (100)", "minIops (120)", node);
        assertThat(r.json().get("fields").valueStream().map(n -> n.asString()).toList()).containsExactly("maxIops");
        assertThat(r.json().get("volumeIds").valueStream().map(n -> "/api/v1/volumes/" + n.asString()).toList())
                .containsExactlyInAnyOrder(a, b);
        assertThat(api.get("/api/v1/tenants/" + tenant).json().get("maxIops").isNull()).isTrue();
        // 120 fits.
        assertThat(api.patch("/api/v1/tenants/" + tenant, "{\"maxIops\":120}", null).status()).isEqualTo(200);
    }

    @Test
    void reservationsOnDifferentNodesAreCountedPerNodeAsTheSchedulerDoes() {
        String tenant = fx.tenant(unique("t"));
        fx.volume(tenant, unique("a"), ",\"nodeIds\":[\"" + fx.node(unique("n")) + "\"],\"overrides\":{\"minIops\":60}");
        fx.volume(tenant, unique("b"), ",\"nodeIds\":[\"" + fx.node(unique("n")) + "\"],\"overrides\":{\"minIops\":60}");
        assertThat(api.patch("/api/v1/tenants/" + tenant, "{\"maxIops\":100}", null).status()).isEqualTo(200);
    }

    @Test
    void aVolumeWhoseReservationItsTenantCannotCarryOnTheNodeIsRefused() {
        String tenant = fx.tenant(unique("t"));
        assertThat(api.patch("/api/v1/tenants/" + tenant, "{\"maxIops\":100}", null).status()).isEqualTo(200);
        String node = fx.node(unique("n"));
        String a = fx.volume(tenant, unique("a"), ",\"nodeIds\":[\"" + node + "\"],\"overrides\":{\"minIops\":60}");

        Response second = fx.createVolume(tenant, unique("b"), ",\"nodeIds\":[\"" + node + "\"],\"overrides\":{\"minIops\":60}");
        assertThat(second.status()).as(second.toString()).isEqualTo(409);
        assertThat(second.json().get("volumeIds").valueStream().map(n -> "/api/v1/volumes/" + n.asString()).toList())
                .containsExactly(a);
        assertThat(second.json().get("detail").asString()).contains("maxIops (100)", "minIops (120)");

        // Moving a reserved volume onto the node is a way to the same state.
        String elsewhere = fx.volume(tenant, unique("c"), ",\"nodeIds\":[\"" + fx.node(unique("n")) + "\"],\"overrides\":{\"minIops\":60}");
        Response move = api.patch(elsewhere, "{\"nodeIds\":[\"" + node + "\"]}", null);
        assertThat(move.status()).as(move.toString()).isEqualTo(409);
    }

    @Test
    void aPolicyChangeThatRaisesReservationsPastATenantLimitIsRefused() {
        String policy = fx.policy(unique("p"), ",\"minIops\":10");
        String tenant = fx.tenant(unique("t"));
        assertThat(api.patch("/api/v1/tenants/" + tenant, "{\"maxIops\":100}", null).status()).isEqualTo(200);
        String node = fx.node(unique("n"));
        String a = fx.volume(tenant, unique("a"), ",\"nodeIds\":[\"" + node + "\"],\"policyId\":\"" + policy + "\"");
        String b = fx.volume(tenant, unique("b"), ",\"nodeIds\":[\"" + node + "\"],\"policyId\":\"" + policy + "\"");

        Response r = api.patch("/api/v1/policies/" + policy, "{\"minIops\":60}", null);

        assertThat(r.status()).as(r.toString()).isEqualTo(409);
        assertThat(r.json().get("volumeIds").valueStream().map(n -> "/api/v1/volumes/" + n.asString()).toList())
                .containsExactlyInAnyOrder(a, b);
        assertThat(api.patch("/api/v1/policies/" + policy, "{\"minIops\":50}", null).status()).isEqualTo(200);
    }
}
