package io.weir.controlplane.volume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.weir.controlplane.config.PlacedVolumes;
import io.weir.controlplane.node.NodeDeleting;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.web.ApiException;
import io.weir.protocol.EffectiveCostModel;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.VolumeConfig;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.simple.JdbcClient;

/** The volume side of a node: what its desired config lists, and the veto on deleting it. */
class VolumePlacementTest extends IntegrationTest {

    @Autowired
    PlacedVolumes placedVolumes;

    @Autowired
    ApplicationEventPublisher events;

    @Autowired
    JdbcClient jdbc;

    private VolumeFixtures fx;

    @BeforeEach
    void setUp() {
        fx = new VolumeFixtures(api, jdbc);
    }

    @Test
    void placedVolumesAreOrderedByTenantThenNameWithEffectivePolicies() {
        String node = fx.node(unique("n"));
        String other = fx.node(unique("n"));
        String t1 = fx.tenant(unique("t"));
        String t2 = fx.tenant(unique("t"));
        String policy = fx.policy(unique("p"), ",\"weight\":300,\"maxIops\":1000,\"costModel\":{\"minChargeBytes\":512}");
        String on = ",\"nodeIds\":[\"" + node + "\"]";
        fx.volume(t1, "zeta", on + ",\"policyId\":\"" + policy + "\",\"overrides\":{\"maxIops\":2000,\"weight\":5}");
        fx.volume(t1, "alpha", on);
        fx.volume(t2, "mid", on);
        fx.volume(t2, "elsewhere", ",\"nodeIds\":[\"" + other + "\"]");
        fx.volume(t2, "nowhere", "");

        List<VolumeConfig> placed = placedVolumes.placedOn(UUID.fromString(node));

        // PostgreSQL orders uuids bytewise, which is the order of their text form.
        List<String> tenantsInOrder = Stream.of(t1, t2).sorted().toList();
        List<String> expected = tenantsInOrder.get(0).equals(t1)
                ? List.of("alpha", "zeta", "mid") : List.of("mid", "alpha", "zeta");
        assertThat(placed).extracting(VolumeConfig::name).containsExactlyElementsOf(expected);
        VolumeConfig zeta = placed.stream().filter(v -> v.name().equals("zeta")).findFirst().orElseThrow();
        assertThat(zeta.tenantId().toString()).isEqualTo(t1);
        assertThat(zeta.sizeBytes()).isEqualTo(256 * VolumeFixtures.BLOCK);
        assertThat(zeta.effectivePolicy()).isEqualTo(new EffectivePolicy(5, null, 2000L, null, null, null, new EffectiveCostModel(512)));
        VolumeConfig mid = placed.stream().filter(v -> v.name().equals("mid")).findFirst().orElseThrow();
        assertThat(mid.effectivePolicy()).as("standard")
                .isEqualTo(new EffectivePolicy(100, null, 5000L, 10000L, 209715200L, 419430400L, new EffectiveCostModel(4096)));
        assertThat(placedVolumes.placedOn(UUID.randomUUID())).isEmpty();
    }

    /**
     * A data node holds at most {@value io.weir.protocol.UsageReport#MAX_VOLUMES} volumes, the most
     * a usage report names (every report names every volume of its node): past that the node's
     * agent could make no report at all, silently, and the node's usage stopped. A placement on a
     * full node is refused with 409 naming it, and a placement the control plane chooses passes
     * it by.
     */
    @Test
    void aFullNodeTakesNoMoreVolumes() {
        String full = fx.node(unique("n"));
        String tenant = fx.tenant(unique("t"));
        jdbc.sql("""
                        INSERT INTO volume (id, tenant_id, name, size_bytes, policy_id, version, created_at, updated_at,
                                            primary_node_id)
                        SELECT gen_random_uuid(), ?::uuid, 'bulk-' || i, 4096, (SELECT id FROM qos_policy WHERE name = 'standard'),
                               0, now(), now(), ?::uuid
                        FROM generate_series(1, ?) AS i""")
                .param(tenant).param(full).param(io.weir.protocol.UsageReport.MAX_VOLUMES).update();
        jdbc.sql("INSERT INTO volume_placement (volume_id, node_id) SELECT id, ?::uuid FROM volume WHERE tenant_id = ?::uuid")
                .param(full).param(tenant).update();
        try {
            HttpApi.Response named = api.post("/api/v1/tenants/" + tenant + "/volumes",
                    "{\"name\":\"one-more\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + full + "\"]}");
            assertThat(named.status()).as(named.toString()).isEqualTo(409);
            assertThat(named.json().get("detail").asString()).contains(full)
                    .contains(String.valueOf(io.weir.protocol.UsageReport.MAX_VOLUMES));
        } finally {
            jdbc.sql("DELETE FROM volume WHERE tenant_id = ?::uuid").param(tenant).update();
        }
    }

    @Test
    void deletingANodeThatServesVolumesIsVetoedNamingThem() {
        String node = fx.node(unique("n"));
        String tenant = fx.tenant(unique("t"));
        fx.volume(tenant, "beta", ",\"nodeIds\":[\"" + node + "\"]");
        fx.volume(tenant, "alpha", ",\"nodeIds\":[\"" + node + "\"]");
        fx.volume(tenant, "unplaced", "");

        ApiException veto = catchThrowableOfType(ApiException.class,
                () -> events.publishEvent(new NodeDeleting(UUID.fromString(node), "node-x")));
        assertThat(veto).isNotNull();
        assertThat(veto.status()).isEqualTo(HttpStatus.CONFLICT);
        assertThat(veto.getMessage()).contains("node-x").contains("2 volume(s)");
        assertThat(veto.properties().get("volumes")).isEqualTo(List.of("alpha", "beta"));
        assertThat((List<?>) veto.properties().get("volumeIds")).hasSize(2);

        String empty = fx.node(unique("n"));
        assertThatCode(() -> events.publishEvent(new NodeDeleting(UUID.fromString(empty), "idle"))).doesNotThrowAnyException();
    }
}
