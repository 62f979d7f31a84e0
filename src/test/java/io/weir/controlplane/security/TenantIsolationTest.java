package io.weir.controlplane.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import io.weir.controlplane.support.RowLocks;
import static org.awaitility.Awaitility.await;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A caller bound to tenant A gets nothing of tenant B: 404 by id (exactly as for an id that does
 * not exist), empty lists by filter, 404 for writes. And tokens stop working once revoked or
 * expired.
 */
class TenantIsolationTest extends IntegrationTest {

    private UUID tenantA;
    private UUID tenantB;
    private String nameB;
    private HttpApi adminOfA;
    private HttpApi viewerOfA;

    @BeforeEach
    void twoTenants() {
        tenantA = tenant(unique("iso-a"));
        nameB = unique("iso-b");
        tenantB = tenant(nameB);
        adminOfA = apiAs("tenant-admin", tenantA, null);
        viewerOfA = apiAs("viewer", tenantA, null);
    }

    private UUID tenant(String name) {
        Response r = api.post("/api/v1/tenants", "{\"name\":\"" + name + "\"}");
        assertThat(r.status()).isEqualTo(201);
        return UUID.fromString(r.json().get("id").asString());
    }

    private static void assertNotFoundLikeAMissingId(Response r, Response missing) {
        assertThat(r.status()).isEqualTo(404);
        assertThat(missing.status()).isEqualTo(404);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(r.json().get("title")).isEqualTo(missing.json().get("title"));
    }

    @Test
    void tenantOfAnotherTenantAnswers404ByIdLikeAMissingOne() {
        String missing = "/api/v1/tenants/" + UUID.randomUUID();
        for (HttpApi caller : new HttpApi[] {adminOfA, viewerOfA}) {
            assertNotFoundLikeAMissingId(caller.get("/api/v1/tenants/" + tenantB), caller.get(missing));
            assertThat(caller.get("/api/v1/tenants/" + tenantA).status()).isEqualTo(200);
        }
    }

    @Test
    void writesToAnotherTenantAnswer404AndChangeNothing() {
        String pathB = "/api/v1/tenants/" + tenantB;
        String missing = "/api/v1/tenants/" + UUID.randomUUID();
        assertNotFoundLikeAMissingId(adminOfA.patch(pathB, "{\"weight\":9999}", null),
                adminOfA.patch(missing, "{\"weight\":9999}", null));
        assertThat(adminOfA.put(pathB, "{\"name\":\"" + nameB + "\",\"weight\":9999}", null).status()).isEqualTo(404);
        assertThat(adminOfA.delete(pathB, null).status()).isEqualTo(404);
        Response b = api.get(pathB);
        assertThat(b.status()).isEqualTo(200);
        assertThat(b.json().get("weight").asInt()).isEqualTo(100);
        // Its own tenant: visible, but a tenant-admin may not change the tenant itself.
        assertThat(adminOfA.patch("/api/v1/tenants/" + tenantA, "{\"weight\":9999}", null).status()).isEqualTo(403);
    }

    private UUID volume(UUID tenant, String name) {
        Response r = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"" + name + "\",\"sizeBytes\":1048576}");
        assertThat(r.status()).isEqualTo(201);
        return UUID.fromString(r.json().get("id").asString());
    }

    @Test
    void volumesOfAnotherTenantAnswer404ByIdAndForEveryWrite() {
        String volumeName = unique("vol-b");
        UUID volumeB = volume(tenantB, volumeName);
        String pathB = "/api/v1/volumes/" + volumeB;
        String missing = "/api/v1/volumes/" + UUID.randomUUID();
        for (HttpApi caller : new HttpApi[] {adminOfA, viewerOfA}) {
            assertNotFoundLikeAMissingId(caller.get(pathB), caller.get(missing));
            assertNotFoundLikeAMissingId(caller.get("/api/v1/tenants/" + tenantB + "/volumes"),
                    caller.get("/api/v1/tenants/" + UUID.randomUUID() + "/volumes"));
        }
        assertNotFoundLikeAMissingId(adminOfA.patch(pathB, "{\"sizeBytes\":2097152}", null),
                adminOfA.patch(missing, "{\"sizeBytes\":2097152}", null));
        assertThat(adminOfA.put(pathB, "{\"name\":\"" + volumeName + "\",\"sizeBytes\":2097152}", null).status())
                .isEqualTo(404);
        assertThat(adminOfA.delete(pathB, null).status()).isEqualTo(404);
        assertThat(adminOfA.post("/api/v1/tenants/" + tenantB + "/volumes",
                "{\"name\":\"" + unique("sneak") + "\",\"sizeBytes\":1048576}").status()).isEqualTo(404);
        Response b = api.get(pathB);
        assertThat(b.status()).isEqualTo(200);
        assertThat(b.json().get("sizeBytes").asLong()).isEqualTo(1048576);
        assertThat(api.get("/api/v1/tenants/" + tenantB + "/volumes").json().get("totalItems").asLong()).isEqualTo(1);
    }

    /**
     * The timing oracle: GET /volumes/{id} loaded the volume, its placement and its policy before
     * it checked the tenant, so another tenant's volume took measurably longer to refuse than a
     * random id. The check must come first and read nothing but the volume's tenant. Shown without
     * timing: while a test transaction holds the policy and placement tables exclusively, a read
     * that touched them would queue behind it until the lock is let go; the refusal must arrive
     * while it is held. (Not "no waiter on the lock": the control plane's failover check reads
     * the placements every second and may queue behind it too; a full run once counted one.)
     */
    @Test
    void anotherTenantsVolumeIsRefusedBeforeItsPolicyOrPlacementIsRead() throws Exception {
        UUID volumeB = volume(tenantB, unique("vol-b"));
        try (RowLocks locks = new RowLocks()) {
            locks.hold("LOCK TABLE qos_policy, volume_placement IN ACCESS EXCLUSIVE MODE");
            CompletableFuture<Response> read = CompletableFuture.supplyAsync(() -> adminOfA.get("/api/v1/volumes/" + volumeB));
            await().atMost(Duration.ofSeconds(60)).until(read::isDone); // while the lock is held
            locks.release();
            assertNotFoundLikeAMissingId(read.get(), adminOfA.get("/api/v1/volumes/" + UUID.randomUUID()));
        }
    }

    @Test
    void volumeListsShowOnlyTheBoundTenantsVolumes() {
        UUID volumeA = volume(tenantA, unique("vol-a"));
        volume(tenantB, unique("vol-b"));
        for (HttpApi caller : new HttpApi[] {adminOfA, viewerOfA}) {
            assertThat(caller.get("/api/v1/volumes?size=500").json().get("items").findValuesAsString("id"))
                    .containsExactly(volumeA.toString());
            Response filtered = caller.get("/api/v1/volumes?tenantId=" + tenantB);
            assertThat(filtered.status()).isEqualTo(200);
            assertThat(filtered.json().get("items").isEmpty()).isTrue();
            assertThat(filtered.json().get("totalItems").asLong()).isZero();
            assertThat(caller.get("/api/v1/volumes?tenantId=" + tenantA).json().get("items").findValuesAsString("id"))
                    .containsExactly(volumeA.toString());
        }
    }

    @Test
    void aTenantAdminManagesItsOwnVolumesWithTheGlobalPolicies() {
        Response policies = adminOfA.get("/api/v1/policies");
        assertThat(policies.status()).isEqualTo(200);
        String premium = "00000000-0000-4000-8000-000000000003";
        Response created = adminOfA.post("/api/v1/tenants/" + tenantA + "/volumes",
                "{\"name\":\"" + unique("own") + "\",\"sizeBytes\":1048576,\"policyId\":\"" + premium + "\"}");
        assertThat(created.status()).isEqualTo(201);
        String path = "/api/v1/volumes/" + created.json().get("id").asString();
        assertThat(adminOfA.patch(path, "{\"overrides\":{\"weight\":500}}", created.etag()).status()).isEqualTo(200);
        assertThat(adminOfA.patch("/api/v1/policies/" + premium, "{\"weight\":1}", null).status()).isEqualTo(403);
        assertThat(adminOfA.post("/api/v1/policies", "{\"name\":\"" + unique("p") + "\"}").status()).isEqualTo(403);
        assertThat(adminOfA.delete(path, null).status()).isEqualTo(204);
    }

    @Test
    void listsShowOnlyTheBoundTenant() {
        for (HttpApi caller : new HttpApi[] {adminOfA, viewerOfA}) {
            Response all = caller.get("/api/v1/tenants?size=500");
            assertThat(all.json().get("items").findValuesAsString("id")).containsExactly(tenantA.toString());
            assertThat(all.json().get("totalItems").asLong()).isEqualTo(1);
            Response byName = caller.get("/api/v1/tenants?name=" + nameB);
            assertThat(byName.json().get("items").isEmpty()).isTrue();
            assertThat(byName.json().get("totalItems").asLong()).isZero();
        }
        assertThat(api.get("/api/v1/tenants?name=" + nameB).json().get("totalItems").asLong()).isEqualTo(1);
    }

    @Test
    void auditOfAnotherTenantIsEmptyForATenantAdmin() {
        api.patch("/api/v1/tenants/" + tenantB, "{\"displayName\":\"B\"}", null);
        api.patch("/api/v1/tenants/" + tenantA, "{\"displayName\":\"A\"}", null);
        Response filtered = adminOfA.get("/api/v1/audit?tenantId=" + tenantB);
        assertThat(filtered.status()).isEqualTo(200);
        assertThat(filtered.json().get("items").isEmpty()).isTrue();
        Response byResource = adminOfA.get("/api/v1/audit?resourceId=" + tenantB);
        assertThat(byResource.json().get("items").isEmpty()).isTrue();
        Response own = adminOfA.get("/api/v1/audit?size=500");
        assertThat(own.json().get("items").findValuesAsString("tenantId")).isNotEmpty()
                .allMatch(tenantA.toString()::equals);
    }

    @Test
    void revokedTokenIsRefusedOnTheNextRequest() {
        Response created = api.post("/api/v1/tokens", "{\"name\":\"" + unique("rv") + "\",\"role\":\"tenant-admin\","
                + "\"tenantId\":\"" + tenantA + "\"}");
        HttpApi caller = apiAs(created.json().get("token").asString());
        assertThat(caller.get("/api/v1/tenants/" + tenantA).status()).isEqualTo(200);
        assertThat(api.delete("/api/v1/tokens/" + created.json().get("id").asString(), null).status()).isEqualTo(204);
        Response refused = caller.get("/api/v1/tenants/" + tenantA);
        assertThat(refused.status()).isEqualTo(401);
        assertThat(refused.contentType()).startsWith("application/problem+json");
    }

    @Test
    void expiredTokenIsRefused() {
        Instant expiry = clock.instant().plus(Duration.ofHours(1));
        Response created = api.post("/api/v1/tokens", "{\"name\":\"" + unique("ex") + "\",\"role\":\"viewer\","
                + "\"expiresAt\":\"" + expiry + "\"}");
        assertThat(created.status()).isEqualTo(201);
        HttpApi caller = apiAs(created.json().get("token").asString());
        assertThat(caller.get("/api/v1/tenants").status()).isEqualTo(200);
        clock.advance(Duration.ofMinutes(59));
        assertThat(caller.get("/api/v1/tenants").status()).isEqualTo(200);
        clock.advance(Duration.ofMinutes(1));
        assertThat(caller.get("/api/v1/tenants").status()).isEqualTo(401);
    }

    @Test
    void tokenOfADeletedTenantStopsWorking() {
        UUID doomed = tenant(unique("iso-gone"));
        HttpApi caller = apiAs("tenant-admin", doomed, null);
        assertThat(caller.get("/api/v1/tenants/" + doomed).status()).isEqualTo(200);
        assertThat(api.delete("/api/v1/tenants/" + doomed, null).status()).isEqualTo(204);
        assertThat(caller.get("/api/v1/tenants").status()).isEqualTo(401);
    }
}
