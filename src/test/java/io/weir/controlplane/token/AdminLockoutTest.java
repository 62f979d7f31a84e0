package io.weir.controlplane.token;

import static io.weir.controlplane.token.TokenBootstrapTest.client;
import static io.weir.controlplane.token.TokenBootstrapTest.emptyDatabase;
import static io.weir.controlplane.token.TokenBootstrapTest.start;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.RowLocks;
import io.weir.controlplane.support.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The service never locks its operators out: the last unexpired admin token cannot be revoked
 * (expired ones do not count, concurrent revokes cannot both pass), and if every admin token has
 * expired anyway, WEIR_BOOTSTRAP_TOKEN recovers at the next start. Each scenario runs the whole
 * service on an empty database of its own.
 */
@ExtendWith(OutputCaptureExtension.class)
class AdminLockoutTest {

    private static String chosen() {
        return "chosen-admin-secret-" + UUID.randomUUID();
    }

    private static void sql(String url, String statement, Object... params) throws Exception {
        TestDatabase.Coordinates db = TestDatabase.get();
        try (Connection c = DriverManager.getConnection(url, db.username(), db.password());
             PreparedStatement st = c.prepareStatement(statement)) {
            for (int i = 0; i < params.length; i++) {
                st.setObject(i + 1, params[i]);
            }
            st.execute();
        }
    }

    /**
     * An expiry a minute in the past by this JVM's clock, which is the one the service judges
     * expiry by. Not the database's {@code now()}: a database in a container VM or on a remote
     * Docker host may run minutes behind, and then its "a minute ago" is still the future here.
     */
    private static OffsetDateTime aMinuteAgo() {
        return OffsetDateTime.now(ZoneOffset.UTC).minusMinutes(1);
    }

    private static UUID idOf(String url, String name) throws Exception {
        TestDatabase.Coordinates db = TestDatabase.get();
        try (Connection c = DriverManager.getConnection(url, db.username(), db.password());
             PreparedStatement st = c.prepareStatement("SELECT id FROM api_token WHERE name = ?")) {
            st.setString(1, name);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getObject(1, UUID.class);
            }
        }
    }

    private static String mintAdmin(HttpApi admin, String name, Instant expiresAt) {
        return mint(admin, name, expiresAt).json().get("id").asString();
    }

    private static Response mint(HttpApi admin, String name, Instant expiresAt) {
        Response r = admin.post("/api/v1/tokens", "{\"name\":\"" + name + "\",\"role\":\"admin\""
                + (expiresAt == null ? "" : ",\"expiresAt\":\"" + expiresAt + "\"") + "}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r;
    }

    @Test
    void expiredAdminTokensDoNotCountTowardsTheLastAdmin(@TempDir Path dataDir) throws Exception {
        String url = emptyDatabase();
        String secret = chosen();
        try (ConfigurableApplicationContext app = start(url, dataDir, secret)) {
            HttpApi admin = client(app, secret);
            String expired = mintAdmin(admin, "soon-gone", Instant.now().plus(1, ChronoUnit.HOURS));
            sql(url, "UPDATE api_token SET expires_at = ? WHERE id = ?", aMinuteAgo(), UUID.fromString(expired));
            UUID bootstrap = idOf(url, TokenBootstrap.NAME);
            Response refused = admin.delete("/api/v1/tokens/" + bootstrap, null);
            assertThat(refused.status()).as(refused.toString()).isEqualTo(409);
            assertThat(admin.get("/api/v1/tokens").status()).isEqualTo(200);
            // Revoking the expired one is fine: it manages nothing.
            assertThat(admin.delete("/api/v1/tokens/" + expired, null).status()).isEqualTo(204);
        }
    }

    @Test
    void concurrentRevokesOfTheLastTwoAdminTokensCannotBothSucceed(@TempDir Path dataDir) throws Exception {
        String url = emptyDatabase();
        String secret = chosen();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (ConfigurableApplicationContext app = start(url, dataDir, secret)) {
            HttpApi admin = client(app, secret);
            Response ra = mint(admin, "admin-a", null);
            Response rb = mint(admin, "admin-b", null);
            UUID a = UUID.fromString(ra.json().get("id").asString());
            UUID b = UUID.fromString(rb.json().get("id").asString());
            HttpApi adminA = client(app, ra.json().get("token").asString());
            HttpApi adminB = client(app, rb.json().get("token").asString());
            // The bootstrap token expires: a and b are the last two unexpired admin tokens.
            sql(url, "UPDATE api_token SET expires_at = ? WHERE name = ?", aMinuteAgo(), TokenBootstrap.NAME);
            List<Response> results;
            try (RowLocks locks = new RowLocks(url)) {
                // Hold both rows, so both revokes are in flight before either may finish.
                locks.hold("SELECT 1 FROM api_token WHERE id IN (?, ?) FOR UPDATE", a, b);
                // Each revokes the other: the classic way to end with no admin at all.
                CompletableFuture<Response> first = CompletableFuture.supplyAsync(
                        () -> adminA.delete("/api/v1/tokens/" + b, null), pool);
                CompletableFuture<Response> second = CompletableFuture.supplyAsync(
                        () -> adminB.delete("/api/v1/tokens/" + a, null), pool);
                locks.awaitWaiters(2);
                locks.release();
                results = List.of(first.get(30, TimeUnit.SECONDS), second.get(30, TimeUnit.SECONDS));
            }
            assertThat(results).extracting(Response::status).as(results.toString()).containsExactlyInAnyOrder(204, 409);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void whenEveryAdminTokenHasExpiredTheBootstrapTokenRecoversAccess(@TempDir Path dataDir, CapturedOutput output)
            throws Exception {
        String url = emptyDatabase();
        String first = chosen();
        try (ConfigurableApplicationContext app = start(url, dataDir, first)) {
            assertThat(client(app, first).get("/api/v1/tokens").status()).isEqualTo(200);
        }
        sql(url, "UPDATE api_token SET expires_at = ? WHERE role = 'admin'", aMinuteAgo());
        String recovery = chosen();
        try (ConfigurableApplicationContext app = start(url, dataDir, recovery)) {
            assertThat(client(app, first).get("/api/v1/tokens").status()).isEqualTo(401);
            assertThat(client(app, recovery).get("/api/v1/tokens").status()).isEqualTo(200);
        }
        assertThat(output.getAll()).contains("No unexpired admin token existed").doesNotContain(recovery);
        // With an unexpired admin token, a different bootstrap token is ignored.
        String third = chosen();
        try (ConfigurableApplicationContext app = start(url, dataDir, third)) {
            assertThat(client(app, third).get("/api/v1/tokens").status()).isEqualTo(401);
        }
    }
}
