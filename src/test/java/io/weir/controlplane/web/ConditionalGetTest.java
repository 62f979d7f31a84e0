package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A GET with {@code If-None-Match} is answered 304 only when the representation is the one the
 * tag was given with. A tenant's effective limits follow its volumes and a volume's effective
 * policy follows its policy, none of which changes the tenant's or the volume's version: tagged
 * with the version alone, the stale representation was confirmed (304) to the client that cached
 * it. The version still decides {@code If-Match}: a write guarded by a tag of the current version
 * goes through.
 */
class ConditionalGetTest extends IntegrationTest {

    private Response conditionalGet(String path, String etag) {
        return api.send("GET", path, null, null, Map.of("If-None-Match", etag));
    }

    @Test
    void aTenantsEffectiveLimitsChangedByAVolumeAreNotConfirmedStale() {
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("cg") + "\",\"maxIopsPerGiB\":1,"
                + "\"maxIopsFloor\":1}").json().get("id").asString();
        String path = "/api/v1/tenants/" + tenant;
        Response first = api.get(path);
        assertThat(conditionalGet(path, first.etag()).status()).as("nothing changed").isEqualTo(304);

        assertThat(api.post(path + "/volumes", "{\"name\":\"v\",\"sizeBytes\":10737418240}").status()).isEqualTo(201);
        Response after = conditionalGet(path, first.etag());
        assertThat(after.status()).isEqualTo(200);
        assertThat(after.json().get("effectiveLimits")).isNotEqualTo(first.json().get("effectiveLimits"));
        assertThat(after.json().get("version")).isEqualTo(first.json().get("version"));

        // the version decides a write's precondition: the first tag is still current
        assertThat(api.patch(path, "{\"weight\":200}", first.etag()).status()).isEqualTo(200);
        assertThat(api.patch(path, "{\"weight\":300}", first.etag()).status()).isEqualTo(412);
    }

    @Test
    void aVolumesEffectivePolicyChangedByItsPolicyIsNotConfirmedStale() {
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("cg") + "\"}").json().get("id").asString();
        String policy = api.post("/api/v1/policies", "{\"name\":\"" + unique("cgp") + "\",\"maxIops\":100}")
                .json().get("id").asString();
        String volume = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"v\",\"sizeBytes\":1048576,"
                + "\"policyId\":\"" + policy + "\"}").json().get("id").asString();
        String path = "/api/v1/volumes/" + volume;
        Response first = api.get(path);
        assertThat(conditionalGet(path, first.etag()).status()).isEqualTo(304);

        assertThat(api.patch("/api/v1/policies/" + policy, "{\"maxIops\":200}", null).status()).isEqualTo(200);
        Response after = conditionalGet(path, first.etag());
        assertThat(after.status()).isEqualTo(200);
        assertThat(after.json().get("effectivePolicy").get("maxIops").asLong()).isEqualTo(200);
    }
}
