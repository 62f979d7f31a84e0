package io.weir.controlplane.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.weir.agent.ConfigTranslator;
import io.weir.controlplane.support.ControlPlaneInstance;
import io.weir.controlplane.support.HttpApi;
import io.weir.protocol.DesiredConfig;
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
import tools.jackson.databind.json.JsonMapper;

/**
 * Every desired config the API can produce translates into a {@code SchedulerConfig} without
 * error: random sequences of tenant, policy and volume writes (with random limits, overrides and
 * placements) go through the real REST API, which accepts some and refuses others; whatever it
 * accepted, each node's snapshot must be one the data node's scheduler accepts.
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
        for (String node : nodes) {
            HttpApi.Response r = api.get("/api/v1/nodes/" + node + "/desired-config");
            assertThat(r.status()).isEqualTo(200);
            DesiredConfig config = JSON.readValue(r.body(), DesiredConfig.class);
            assertThatCode(() -> ConfigTranslator.translate(config)).as(r.body()).doesNotThrowAnyException();
        }
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
