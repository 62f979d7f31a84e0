package io.weir.controlplane.volume;

import static io.weir.controlplane.volume.VolumeFixtures.BLOCK;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.config.DesiredConfigService;
import io.weir.controlplane.config.PlacedVolumes;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.ReplicationConfig;
import io.weir.protocol.VolumeConfig;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Replicated volumes through the REST API: placement on several nodes, the control plane's choice
 * of nodes, the rules of an update, and what the nodes' desired configs carry.
 */
class ReplicatedVolumeApiTest extends IntegrationTest {

    @Autowired
    JdbcClient jdbc;

    @Autowired
    PlacedVolumes placedVolumes;

    @Autowired
    DesiredConfigService desiredConfigs;

    @Autowired
    ConfigRevisions revisions;

    @Autowired
    JsonMapper json;

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

    private static String nodeIds(String... ids) {
        return Stream.of(ids).map(id -> "\"" + id + "\"").reduce((a, b) -> a + "," + b).map(s -> "[" + s + "]").orElse("[]");
    }

    /** The copies of a volume response: node id to state. */
    private static Map<String, String> states(Response r) {
        return r.json().get("copies").valueStream().collect(java.util.stream.Collectors.toMap(
                c -> c.get("nodeId").asString(), c -> c.get("state").asString()));
    }

    /** A tenant whose node selector is a label of its own, and a node API to label nodes with it. */
    private record Pool(String tenant, String label) {
    }

    private Pool pool() {
        String label = unique("pool");
        Response t = api.post("/api/v1/tenants", "{\"name\":\"" + unique("t") + "\",\"nodeSelector\":{\"pool\":\"" + label + "\"}}");
        assertThat(t.status()).as(t.toString()).isEqualTo(201);
        return new Pool(t.json().get("id").asString(), label);
    }

    private String labelledNode(Pool pool) {
        Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("n") + "\",\"labels\":{\"pool\":\"" + pool.label() + "\"}}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }

    @Test
    void aVolumeOnSeveralNodesKeepsACopyOnEachWithTheFirstNamedAsPrimary() {
        String a = fx.node(unique("a"));
        String b = fx.node(unique("b"));

        Response created = fx.createVolume(tenant, unique("v"), ",\"nodeIds\":" + nodeIds(b, a));

        assertThat(created.status()).as(created.toString()).isEqualTo(201);
        JsonNode body = created.json();
        assertThat(body.get("replicas").asInt()).isEqualTo(2);
        assertThat(body.get("primaryNodeId").asString()).as("the first of nodeIds").isEqualTo(b);
        assertThat(body.get("epoch").asLong()).isEqualTo(1);
        assertThat(body.get("copies").get(0).get("nodeId").asString()).as("the primary's copy first").isEqualTo(b);
        assertThat(states(created)).isEqualTo(Map.of(a, "inSync", b, "inSync"));
        assertThat(body.get("copies").findValues("inSync")).allMatch(JsonNode::asBoolean);
        assertThat(body.get("degraded").asBoolean()).isFalse();
        assertThat(body.get("placementWarning").isNull()).as("replicated, not a legacy placement").isTrue();
        assertThat(body.get("primaryAddress").isNull()).as("the primary never reported").isTrue();
        JsonNode read = api.get("/api/v1/volumes/" + body.get("id").asString()).json();
        for (String member : List.of("replicas", "primaryNodeId", "epoch", "copies", "degraded", "primaryAddress")) {
            assertThat(read.get(member)).as(member).isEqualTo(body.get(member));
        }
    }

    @Test
    void replicasWithoutNodeIdsPlacesTheCopiesOnTheTenantsNodesHoldingFewestVolumes() {
        Pool pool = pool();
        String busy = labelledNode(pool);
        String idle1 = labelledNode(pool);
        String idle2 = labelledNode(pool);
        fx.node(unique("unlabelled")); // holds nothing, but is not the tenant's
        fx.volume(pool.tenant(), unique("v"), ",\"nodeIds\":" + nodeIds(busy));
        fx.volume(pool.tenant(), unique("v"), ",\"nodeIds\":" + nodeIds(busy));

        Response created = fx.createVolume(pool.tenant(), unique("v"), ",\"replicas\":2");

        assertThat(created.status()).as(created.toString()).isEqualTo(201);
        List<String> idle = Stream.of(idle1, idle2).sorted().toList();
        assertThat(created.json().get("nodeIds").valueStream().map(JsonNode::asString)).containsExactlyElementsOf(idle);
        assertThat(created.json().get("primaryNodeId").asString()).as("the first chosen: ties go by id").isEqualTo(idle.get(0));
        assertThat(created.json().get("replicas").asInt()).isEqualTo(2);
        assertThat(states(created)).isEqualTo(Map.of(idle1, "inSync", idle2, "inSync"));

        // A volume of three copies takes every node of the pool, the busiest one too, but not as its primary.
        Response three = fx.createVolume(pool.tenant(), unique("v"), ",\"replicas\":3");
        assertThat(three.status()).as(three.toString()).isEqualTo(201);
        assertThat(three.json().get("nodeIds").valueStream().map(JsonNode::asString))
                .containsExactlyInAnyOrder(busy, idle1, idle2);
        assertThat(three.json().get("primaryNodeId").asString()).as("busy holds 2 volumes, the others 1")
                .isEqualTo(idle.get(0));
    }

    @Test
    void tooFewNodesAvailableToTheTenantAnswer409NamingHowManyWereNeededAndAvailable() {
        Pool pool = pool();
        String only = labelledNode(pool);

        Response refused = fx.createVolume(pool.tenant(), unique("v"), ",\"replicas\":3");

        assertThat(refused.status()).as(refused.toString()).isEqualTo(409);
        assertThat(refused.contentType()).startsWith("application/problem+json");
        assertThat(refused.json().get("needed").asInt()).isEqualTo(3);
        assertThat(refused.json().get("available").asInt()).isEqualTo(1);
        assertThat(refused.json().get("detail").asString()).startsWith("the volume needs 3 copies on distinct nodes, but "
                + "only 1 node is available to tenant");
        assertThat(api.get("/api/v1/tenants/" + pool.tenant() + "/volumes").json().get("totalItems").asLong()).isZero();

        // An update asking for more copies than the pool holds is refused alike, and changes nothing.
        String path = fx.volume(pool.tenant(), unique("v"), ",\"replicas\":1");
        Response one = api.get(path);
        assertThat(one.json().get("nodeIds").valueStream().map(JsonNode::asString)).containsExactly(only);
        Response more = api.patch(path, "{\"replicas\":2}", one.etag());
        assertThat(more.status()).as(more.toString()).isEqualTo(409);
        assertThat(more.json().get("needed").asInt()).isEqualTo(2);
        assertThat(more.json().get("available").asInt()).isEqualTo(1);
        assertThat(api.get(path).etag()).isEqualTo(one.etag());
    }

    @Test
    void replicasMustMatchNodeIdsWhichMustBeDistinctAndAtMostThree() {
        String a = fx.node(unique("a"));
        String b = fx.node(unique("b"));
        String c = fx.node(unique("c"));
        String d = fx.node(unique("d"));

        Response mismatch = fx.createVolume(tenant, unique("v"), ",\"nodeIds\":" + nodeIds(a, b) + ",\"replicas\":3");
        assertThat(mismatch.status()).as(mismatch.toString()).isEqualTo(400);
        assertThat(errorFields(mismatch)).containsExactly("replicas");
        assertThat(mismatch.json().get("errors").get(0).get("message").asString())
                .isEqualTo("must equal the number of nodeIds (2): the volume keeps one copy on each node it names");

        Response duplicates = fx.createVolume(tenant, unique("v"), ",\"nodeIds\":" + nodeIds(a, a));
        assertThat(duplicates.status()).as(duplicates.toString()).isEqualTo(400);
        assertThat(errorFields(duplicates)).containsExactly("nodeIds");

        Response four = fx.createVolume(tenant, unique("v"), ",\"nodeIds\":" + nodeIds(a, b, c, d));
        assertThat(four.status()).as(four.toString()).isEqualTo(400);
        assertThat(errorFields(four)).containsExactly("nodeIds");
        assertThat(four.json().get("errors").get(0).get("message").asString())
                .isEqualTo("names 4 nodes; a volume keeps at most 3 copies, one per node");

        for (int replicas : new int[] {0, 4}) {
            Response out = fx.createVolume(tenant, unique("v"), ",\"replicas\":" + replicas);
            assertThat(out.status()).as(out.toString()).isEqualTo(400);
            assertThat(errorFields(out)).containsExactly("replicas");
        }
        Response noneNamed = fx.createVolume(tenant, unique("v"), ",\"nodeIds\":[],\"replicas\":2");
        assertThat(noneNamed.status()).as("an empty nodeIds places nothing: " + noneNamed).isEqualTo(400);
        assertThat(errorFields(noneNamed)).containsExactly("replicas");
        assertThat(api.get("/api/v1/tenants/" + tenant + "/volumes").json().get("totalItems").asLong()).isZero();
    }

    @Test
    void aCopyAddedByAnUpdateStartsOutOfSyncWithAllToCopyAndTheVolumeShowsDegraded() {
        String a = fx.node(unique("a"));
        String b = fx.node(unique("b"));
        String path = fx.volume(tenant, unique("v"), ",\"nodeIds\":" + nodeIds(a));
        Response single = api.get(path);
        assertThat(single.json().get("primaryNodeId").asString()).isEqualTo(a);
        long before = revisions.current();

        Response added = api.patch(path, "{\"nodeIds\":" + nodeIds(b, a) + "}", single.etag());

        assertThat(added.status()).as(added.toString()).isEqualTo(200);
        assertThat(revisions.current()).as("both nodes' configs change").isGreaterThan(before);
        assertThat(added.json().get("replicas").asInt()).isEqualTo(2);
        assertThat(added.json().get("primaryNodeId").asString()).as("the primary holds the data: kept").isEqualTo(a);
        JsonNode copyB = added.json().get("copies").get(1);
        assertThat(copyB.get("nodeId").asString()).isEqualTo(b);
        assertThat(copyB.get("state").asString()).isEqualTo("outOfSync");
        assertThat(copyB.get("inSync").asBoolean()).isFalse();
        assertThat(copyB.get("resyncRemainingBytes").asLong()).isEqualTo(256 * BLOCK);
        assertThat(added.json().get("degraded").asBoolean()).isTrue();
        assertThat(api.get(path).json().get("copies")).isEqualTo(added.json().get("copies"));

        VolumeConfig onA = placedVolumes.placedOn(UUID.fromString(a)).stream()
                .filter(v -> path.endsWith(v.id().toString())).findFirst().orElseThrow();
        assertThat(onA.replication().copies()).containsExactly(new ReplicationConfig.Copy(UUID.fromString(a), null, true),
                new ReplicationConfig.Copy(UUID.fromString(b), null, false));

        // A later change of the placement leaves the copies it keeps as they were.
        String c = fx.node(unique("c"));
        Response third = api.patch(path, "{\"replicas\":3,\"nodeIds\":" + nodeIds(a, b, c) + "}", added.etag());
        assertThat(third.status()).as(third.toString()).isEqualTo(200);
        assertThat(states(third)).isEqualTo(Map.of(a, "inSync", b, "outOfSync", c, "outOfSync"));
        Response grown = api.patch(path, "{\"sizeBytes\":" + (512 * BLOCK) + "}", third.etag());
        assertThat(grown.status()).as(grown.toString()).isEqualTo(200);
        assertThat(grown.json().get("copies")).isEqualTo(third.json().get("copies"));
    }

    @Test
    void thePrimaryOfAReplicatedVolumeCannotBeRemovedButOtherCopiesCan() {
        String a = fx.node(unique("a"));
        String b = fx.node(unique("b"));
        String c = fx.node(unique("c"));
        String path = fx.volume(tenant, unique("v"), ",\"nodeIds\":" + nodeIds(a, b, c));
        Response three = api.get(path);

        Response withoutPrimary = api.patch(path, "{\"nodeIds\":" + nodeIds(b, c) + "}", three.etag());
        assertThat(withoutPrimary.status()).as(withoutPrimary.toString()).isEqualTo(409);
        assertThat(withoutPrimary.json().get("primaryNodeId").asString()).isEqualTo(a);
        assertThat(withoutPrimary.json().get("detail").asString()).startsWith("node " + a + " is the primary of this "
                + "replicated volume");
        Response unplaced = api.patch(path, "{\"nodeIds\":null}", three.etag());
        assertThat(unplaced.status()).as("unplacing removes the primary too: " + unplaced).isEqualTo(409);
        assertThat(api.get(path).etag()).isEqualTo(three.etag());

        Response two = api.patch(path, "{\"nodeIds\":" + nodeIds(c, a) + "}", three.etag());
        assertThat(two.status()).as(two.toString()).isEqualTo(200);
        assertThat(two.json().get("replicas").asInt()).isEqualTo(2);
        assertThat(two.json().get("primaryNodeId").asString()).isEqualTo(a);
        assertThat(states(two)).isEqualTo(Map.of(a, "inSync", c, "inSync"));

        Response mismatch = api.patch(path, "{\"nodeIds\":" + nodeIds(a) + ",\"replicas\":2}", two.etag());
        assertThat(mismatch.status()).as(mismatch.toString()).isEqualTo(400);
        assertThat(errorFields(mismatch)).containsExactly("replicas");

        Response one = api.patch(path, "{\"replicas\":1,\"nodeIds\":" + nodeIds(a) + "}", two.etag());
        assertThat(one.status()).as(one.toString()).isEqualTo(200);
        assertThat(one.json().get("replicas").asInt()).isEqualTo(1);
        assertThat(one.json().get("degraded").asBoolean()).isFalse();
        VolumeConfig config = placedVolumes.placedOn(UUID.fromString(a)).stream()
                .filter(v -> path.endsWith(v.id().toString())).findFirst().orElseThrow();
        assertThat(config.replication()).as("one copy: the node serves it alone").isNull();
    }

    @Test
    void eachCopyReservesItsVolumesMinIopsOnItsOwnNodeUnderTheTenantsLimit() {
        Response t = api.post("/api/v1/tenants", "{\"name\":\"" + unique("t") + "\",\"maxIops\":100}");
        assertThat(t.status()).as(t.toString()).isEqualTo(201);
        String limited = t.json().get("id").asString();
        String policy = fx.policy(unique("p"), ",\"minIops\":60,\"maxIops\":1000");
        String a = fx.node(unique("a"));
        String b = fx.node(unique("b"));
        String c = fx.node(unique("c"));
        fx.volume(limited, unique("v"), ",\"policyId\":\"" + policy + "\",\"nodeIds\":" + nodeIds(a, b));

        Response onB = fx.createVolume(limited, unique("v"), ",\"policyId\":\"" + policy + "\",\"nodeIds\":" + nodeIds(c, b));

        assertThat(onB.status()).as(onB.toString()).isEqualTo(409);
        assertThat(onB.json().get("nodeId").asString()).as("b already carries 60 of the 100").isEqualTo(b);
        Response onC = fx.createVolume(limited, unique("v"), ",\"policyId\":\"" + policy + "\",\"nodeIds\":" + nodeIds(c));
        assertThat(onC.status()).as("c carries nothing yet: " + onC).isEqualTo(201);
    }

    @Test
    void theDesiredConfigCarriesTheReplicationOfAReplicatedVolumeAndNoneForASingleCopy() {
        List<String> sorted = Stream.of(fx.node(unique("n")), fx.node(unique("n"))).sorted().toList();
        String low = sorted.get(0);
        String high = sorted.get(1);
        // As the node feature stores what the data node reports.
        jdbc.sql("UPDATE data_node SET replication_address = '10.0.0.7:10810' WHERE id = ?").param(UUID.fromString(low))
                .update();
        String replicated = fx.volume(tenant, unique("r"), ",\"nodeIds\":" + nodeIds(high, low));
        String single = fx.volume(tenant, unique("s"), ",\"nodeIds\":" + nodeIds(high));

        for (String node : List.of(low, high)) {
            VolumeConfig config = placedVolumes.placedOn(UUID.fromString(node)).stream()
                    .filter(v -> replicated.endsWith(v.id().toString())).findFirst().orElseThrow();
            assertThat(config.replication()).as("on " + node).isEqualTo(new ReplicationConfig(1, UUID.fromString(high), 0,
                    List.of(new ReplicationConfig.Copy(UUID.fromString(high), null, true),
                            new ReplicationConfig.Copy(UUID.fromString(low), "10.0.0.7:10810", true))));
        }
        VolumeConfig alone = placedVolumes.placedOn(UUID.fromString(high)).stream()
                .filter(v -> single.endsWith(v.id().toString())).findFirst().orElseThrow();
        assertThat(alone.replication()).isNull();
        JsonNode snapshot = json.readTree(json.writeValueAsString(desiredConfigs.forNode(UUID.fromString(high))));
        JsonNode singleJson = snapshot.get("volumes").valueStream()
                .filter(v -> single.endsWith(v.get("id").asString())).findFirst().orElseThrow();
        assertThat(singleJson.has("replication")).as("left out, as before replication existed: " + singleJson).isFalse();
        assertThat(singleJson.propertyNames()).containsExactlyInAnyOrder("id", "tenantId", "name", "sizeBytes",
                "effectivePolicy");
    }
}
