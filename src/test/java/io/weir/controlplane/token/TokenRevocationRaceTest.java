package io.weir.controlplane.token;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.RowLocks;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A token revoked (or expiring) after its request was authenticated but before the request's
 * change commits: the change must not commit. The test holds a row lock on the tenant the
 * request changes, so the request is authenticated and then waits inside its transaction; the
 * revoke happens while it waits (on pg_locks, not on time).
 */
class TokenRevocationRaceTest extends IntegrationTest {

    private final ExecutorService pool = Executors.newSingleThreadExecutor();

    @AfterEach
    void tearDown() {
        pool.shutdownNow();
    }

    private String tenant() {
        return api.post("/api/v1/tenants", "{\"name\":\"" + unique("race") + "\"}").json().get("id").asString();
    }

    private String tokenId(String secret) {
        String hex = secret.substring(5, 37);
        return new UUID(Long.parseUnsignedLong(hex.substring(0, 16), 16), Long.parseUnsignedLong(hex.substring(16), 16))
                .toString();
    }

    /** PATCHes the tenant's display name with {@code secret} while its row is locked; runs {@code meanwhile} then releases. */
    private Response patchWhileLocked(String tenant, String secret, Runnable meanwhile) throws Exception {
        try (RowLocks locks = new RowLocks()) {
            locks.hold("SELECT 1 FROM tenant WHERE id = ? FOR UPDATE", UUID.fromString(tenant));
            CompletableFuture<Response> patch = CompletableFuture.supplyAsync(
                    () -> apiAs(secret).patch("/api/v1/tenants/" + tenant, "{\"displayName\":\"changed\"}", null), pool);
            locks.awaitWaiters(1);
            meanwhile.run();
            locks.release();
            return patch.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aChangeOfATokenRevokedWhileItsRequestRunsDoesNotCommit() throws Exception {
        String tenant = tenant();
        String secret = mintToken("admin", null, null);
        Response patch = patchWhileLocked(tenant, secret,
                () -> assertThat(api.delete("/api/v1/tokens/" + tokenId(secret), null).status()).isEqualTo(204));
        assertThat(patch.status()).as(patch.toString()).isEqualTo(401);
        assertThat(patch.contentType()).startsWith("application/problem+json");
        assertThat(api.get("/api/v1/tenants/" + tenant).json().get("displayName").isNull()).isTrue();
        assertThat(api.get("/api/v1/audit?resourceId=" + tenant + "&actor=" + tokenId(secret)).json()
                .get("totalItems").asLong()).isZero();
    }

    @Test
    void aChangeOfATokenExpiringWhileItsRequestRunsDoesNotCommit() throws Exception {
        String tenant = tenant();
        Response minted = api.post("/api/v1/tokens", "{\"name\":\"" + unique("exp") + "\",\"role\":\"admin\",\"expiresAt\":\""
                + clock.instant().plus(Duration.ofMinutes(1)) + "\"}");
        String secret = minted.json().get("token").asString();
        Response patch = patchWhileLocked(tenant, secret, () -> clock.advance(Duration.ofMinutes(2)));
        assertThat(patch.status()).as(patch.toString()).isEqualTo(401);
        assertThat(api.get("/api/v1/tenants/" + tenant).json().get("displayName").isNull()).isTrue();
    }

    @Test
    void aValidTokenStillChangesThingsAndMayRevokeItself() {
        String tenant = tenant();
        String secret = mintToken("admin", null, null);
        assertThat(apiAs(secret).patch("/api/v1/tenants/" + tenant, "{\"displayName\":\"ok\"}", null).status())
                .isEqualTo(200);
        assertThat(apiAs(secret).delete("/api/v1/tokens/" + tokenId(secret), null).status()).isEqualTo(204);
        assertThat(apiAs(secret).get("/api/v1/tenants").status()).isEqualTo(401);
    }
}
