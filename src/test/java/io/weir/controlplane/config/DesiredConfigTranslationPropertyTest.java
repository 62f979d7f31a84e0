package io.weir.controlplane.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.agent.ConfigTranslator;
import io.weir.controlplane.support.ControlPlaneInstance;
import io.weir.controlplane.support.HttpApi;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.TenantConfig;
import io.weir.protocol.VolumeConfig;
import io.weir.scheduler.SchedulerConfig;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Every desired config the API can produce holds what the API says and translates into a
 * {@code SchedulerConfig} with the same figures: random sequences of tenant, policy and volume
 * writes (with random limits, overrides and placements) go through the real REST API, which
 * accepts some and refuses others; whatever it accepted, each node's snapshot holds exactly the
 * volumes the API shows on that node, each with the effective policy the API shows, and their
 * tenant with its weight and limits, and the data node's scheduler accepts it with those figures.
 */
class DesiredConfigTranslationPropertyTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static ControlPlaneInstance instance;
    private static HttpApi api;

    @BeforeContainer
    static void start() {
        instance = ControlPlaneInstance.start(Map.of());
        api = instance.adminApi();
    }

    @AfterContainer
    static void stop() {
        if (instance != null) {
            instance.close();
        }
    }

    /** One write: which kind, and the random QoS values it carries. */
    record Step(int kind, int target, int nodes, Long a, Long b, Long c, Long d, Long e, Integer weight) {
    }

    @Property(tries = 25)
    void everySnapshotTheApiProducesTranslates(@ForAll("steps") List<Step> steps) {
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<String> nodes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            nodes.add(api.post("/api/v1/nodes", "{\"name\":\"prop-" + run + "-n" + i + "\"}").json().get("id").asString());
        }
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"prop-" + run + "\"}").json().get("id").asString();
        List<String> policies = new ArrayList<>(List.of("00000000-0000-4000-8000-000000000002"));
        List<String> volumes = new ArrayList<>();
        int n = 0;
        for (Step s : steps) {
            n++;
            switch (s.kind()) {
                case 0 -> { // a policy with random QoS fields
                    HttpApi.Response r = api.post("/api/v1/policies", "{\"name\":\"prop-" + run + "-p" + n + "\"" + qos(s, true) + "}");
                    if (r.status() == 201) {
                        policies.add(r.json().get("id").asString());
                    }
                }
                case 1 -> { // a volume on some nodes, with random overrides
                    HttpApi.Response r = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"v" + n
                            + "\",\"sizeBytes\":1048576,\"policyId\":\"" + policies.get(s.target() % policies.size())
                            + "\",\"nodeIds\":" + placement(nodes, s.nodes()) + ",\"overrides\":{" + qos(s, false).replaceFirst(",", "") + "}}");
                    if (r.status() == 201) {
                        volumes.add(r.json().get("id").asString());
                    }
                }
                case 2 -> { // tenant limits
                    api.patch("/api/v1/tenants/" + tenant, "{\"weight\":" + (s.weight() == null ? 100 : s.weight())
                            + ",\"maxIops\":" + s.b() + ",\"maxBytesPerSec\":" + s.d() + "}", null);
                }
                case 3 -> { // a policy change
                    if (policies.size() > 1) {
                        api.patch("/api/v1/policies/" + policies.get(1 + s.target() % (policies.size() - 1)),
                                "{" + qos(s, true).replaceFirst(",", "") + "}", null);
                    }
                }
                default -> { // a volume's overrides or placement
                    if (!volumes.isEmpty()) {
                        api.patch("/api/v1/volumes/" + volumes.get(s.target() % volumes.size()), "{\"nodeIds\":"
                                + placement(nodes, s.nodes()) + ",\"overrides\":{" + qos(s, false).replaceFirst(",", "") + "}}", null);
                    }
                }
            }
        }
        // What the REST API says after the writes: the tenant, and every volume with its nodes and
        // effective policy. Each node's snapshot must hold exactly that, and translate into a
        // scheduler config with the same figures.
        JsonNode tenantNow = api.get("/api/v1/tenants/" + tenant).json();
        List<JsonNode> volumesNow = new ArrayList<>();
        for (String volume : volumes) {
            volumesNow.add(api.get("/api/v1/volumes/" + volume).json());
        }
        for (String node : nodes) {
            HttpApi.Response r = api.get("/api/v1/nodes/" + node + "/desired-config");
            assertThat(r.status()).isEqualTo(200);
            DesiredConfig config = JSON.readValue(r.body(), DesiredConfig.class);
            List<JsonNode> placedHere = volumesNow.stream()
                    .filter(v -> v.get("nodeIds").valueStream().anyMatch(id -> id.asString().equals(node)))
                    .toList();
            assertSnapshotHolds(config, node, tenantNow, placedHere, r.body());
            SchedulerConfig translated = ConfigTranslator.translate(config);
            assertTranslationKeepsTheFigures(config, translated, r.body());
        }
    }

    private static void assertSnapshotHolds(DesiredConfig config, String node, JsonNode tenant, List<JsonNode> placed,
            String body) {
        assertThat(config.nodeId()).as(body).hasToString(node);
        assertThat(config.volumes()).as("volumes of node %s: %s", node, body)
                .extracting(v -> v.id().toString())
                .containsExactlyInAnyOrderElementsOf(placed.stream().map(v -> v.get("id").asString()).toList());
        for (JsonNode rest : placed) {
            VolumeConfig v = config.volumes().stream()
                    .filter(c -> c.id().toString().equals(rest.get("id").asString())).findFirst().orElseThrow();
            assertThat(v.tenantId()).as(body).hasToString(tenant.get("id").asString());
            assertThat(v.name()).as(body).isEqualTo(rest.get("name").asString());
            assertThat(v.sizeBytes()).as(body).isEqualTo(rest.get("sizeBytes").asLong());
            assertThat(v.effectivePolicy()).as("effective policy of %s: %s", v.name(), body)
                    .isEqualTo(JSON.treeToValue(rest.get("effectivePolicy"), EffectivePolicy.class));
        }
        if (placed.isEmpty()) {
            assertThat(config.tenants()).as(body).isEmpty();
        } else {
            assertThat(config.tenants()).as(body).singleElement().satisfies(t -> {
                assertThat(t.id()).hasToString(tenant.get("id").asString());
                assertThat(t.weight()).isEqualTo(tenant.get("weight").asInt());
                assertThat(t.maxIops()).isEqualTo(longOrNull(tenant.get("maxIops")));
                assertThat(t.maxBytesPerSec()).isEqualTo(longOrNull(tenant.get("maxBytesPerSec")));
            });
        }
    }

    /** The scheduler config has every tenant and volume of the snapshot with its figures (null: 0, no limit). */
    private static void assertTranslationKeepsTheFigures(DesiredConfig config, SchedulerConfig translated, String body) {
        assertThat(translated.tenants()).as(body).extracting(TenantSpec::id)
                .containsExactlyInAnyOrderElementsOf(config.tenants().stream().map(t -> t.id().toString()).toList());
        for (TenantConfig t : config.tenants()) {
            TenantSpec spec = translated.tenants().stream().filter(s -> s.id().equals(t.id().toString())).findFirst().orElseThrow();
            assertThat(spec.weight()).as(body).isEqualTo(t.weight());
            assertThat(spec.maxIops()).as(body).isEqualTo(orZero(t.maxIops()));
            assertThat(spec.maxBytesPerSec()).as(body).isEqualTo(orZero(t.maxBytesPerSec()));
        }
        assertThat(translated.volumes()).as(body).extracting(VolumeSpec::id)
                .containsExactlyInAnyOrderElementsOf(config.volumes().stream().map(v -> v.id().toString()).toList());
        for (VolumeConfig v : config.volumes()) {
            VolumeSpec spec = translated.volumes().stream().filter(s -> s.id().equals(v.id().toString())).findFirst().orElseThrow();
            EffectivePolicy p = v.effectivePolicy();
            assertThat(spec.tenantId()).as(body).isEqualTo(v.tenantId().toString());
            assertThat(spec.weight()).as(body).isEqualTo(p.weight());
            assertThat(spec.minIops()).as(body).isEqualTo(orZero(p.minIops()));
            assertThat(spec.maxIops()).as(body).isEqualTo(orZero(p.maxIops()));
            assertThat(spec.burstIops()).as(body).isEqualTo(orZero(p.burstIops()));
            assertThat(spec.maxBytesPerSec()).as(body).isEqualTo(orZero(p.maxBytesPerSec()));
            assertThat(spec.burstBytesPerSec()).as(body).isEqualTo(orZero(p.burstBytesPerSec()));
        }
    }

    private static Long longOrNull(JsonNode value) {
        return value == null || value.isNull() ? null : value.asLong();
    }

    private static long orZero(Long value) {
        return value == null ? 0 : value;
    }

    private static String placement(List<String> nodes, int mask) {
        List<String> chosen = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            if ((mask & (1 << i)) != 0) {
                chosen.add("\"" + nodes.get(i) + "\"");
            }
        }
        return chosen.toString();
    }

    /** The QoS members of a step as JSON members, each with a leading comma; nulls left out for overrides. */
    private static String qos(Step s, boolean policy) {
        StringBuilder b = new StringBuilder();
        member(b, "weight", s.weight() == null ? null : (long) s.weight(), policy);
        member(b, "minIops", s.a(), policy);
        member(b, "maxIops", s.b(), policy);
        member(b, "burstIops", s.c(), policy);
        member(b, "maxBytesPerSec", s.d(), policy);
        member(b, "burstBytesPerSec", s.e(), policy);
        return b.toString();
    }

    private static void member(StringBuilder b, String name, Long value, boolean writeNull) {
        if (value != null || writeNull) {
            b.append(",\"").append(name).append("\":").append(value);
        }
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        // Small values, so that limits, reservations and bursts often meet and collide.
        Arbitrary<Long> limit = Arbitraries.longs().between(1, 200).injectNull(0.4);
        Arbitrary<Step> step = Combinators.combine(Arbitraries.integers().between(0, 4), Arbitraries.integers().between(0, 9),
                        Arbitraries.integers().between(0, 7), limit, limit, limit, limit,
                        Arbitraries.integers().between(1, 10_000).injectNull(0.5))
                .as((kind, target, nodes, a, b, c, d, w) -> new Step(kind, target, nodes, a, b, c, d,
                        d == null ? null : d + (target % 3) - 1, w));
        return step.list().ofMinSize(3).ofMaxSize(12);
    }
}
