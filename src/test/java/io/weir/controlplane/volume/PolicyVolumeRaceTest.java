package io.weir.controlplane.volume;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.security.TokenSecrets;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.RowLocks;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * A policy change and another write that contradicts it, interleaved deterministically: never both
 * accepted when together they contradict each other.
 *
 * <ul>
 *   <li>A volume write that validates overrides against the policy: the test holds a row lock on
 *       the policy, starts both requests, waits (on pg_locks) until both queue behind it, then
 *       releases; whatever order they then run in, the result must be consistent.</li>
 *   <li>Two changes that each fit a tenant's limit on a node alone, and together do not (a node
 *       refuses, nacks, every snapshot whose reservations its tenant's limit cannot carry): the
 *       policy raise, made with a token, is held after its reservation check (at its audit entry,
 *       which holds the token's row) by a test transaction that locks that row; the other change
 *       then checks and queues behind it (on pg_locks).</li>
 * </ul>
 */
class PolicyVolumeRaceTest extends IntegrationTest {

    @Autowired
    JdbcClient jdbc;

    private VolumeFixtures fx;
    private ExecutorService pool;

    @BeforeEach
    void setUp() {
        fx = new VolumeFixtures(api, jdbc);
        pool = Executors.newFixedThreadPool(2);
    }

    @AfterEach
    void tearDown() {
        pool.shutdownNow();
    }

    @Test
    void policyChangeAndVolumeOverrideThatContradictItAreNeverBothAccepted() throws Exception {
        String tenant = fx.tenant(unique("race"));
        String policy = fx.policy(unique("racy"), ",\"maxIops\":1000");
        String volumeName = unique("v");

        Response policyChange;
        Response volumeCreate;
        try (RowLocks locks = new RowLocks()) {
            locks.hold("SELECT 1 FROM qos_policy WHERE id = ? FOR NO KEY UPDATE", UUID.fromString(policy));
            // A reservation of 800 is fine for the policy alone (max 1000) ...
            CompletableFuture<Response> raise = CompletableFuture.supplyAsync(
                    () -> apiAs(ADMIN_TOKEN).patch("/api/v1/policies/" + policy, "{\"minIops\":800}", null), pool);
            locks.awaitWaiters(1);
            // ... and an override of maxIops 500 is fine for the policy as it is now, but not both.
            CompletableFuture<Response> create = CompletableFuture.supplyAsync(
                    () -> fx.createVolume(tenant, volumeName,
                            ",\"policyId\":\"" + policy + "\",\"overrides\":{\"maxIops\":500}"), pool);
            locks.awaitWaiters(2);
            locks.release();
            policyChange = raise.get(30, TimeUnit.SECONDS);
            volumeCreate = create.get(30, TimeUnit.SECONDS);
        }

        assertThat(policyChange.status() == 200 && volumeCreate.status() == 201)
                .as("both accepted: %s / %s", policyChange, volumeCreate)
                .isFalse();
        if (policyChange.status() == 200) {
            assertThat(volumeCreate.status()).as(volumeCreate.toString()).isEqualTo(400);
            assertThat(volumeCreate.body()).contains("overrides.maxIops");
        } else {
            assertThat(volumeCreate.status()).as(volumeCreate.toString()).isEqualTo(201);
            assertThat(policyChange.status()).as(policyChange.toString()).isEqualTo(409);
            assertThat(policyChange.body()).contains(volumeName);
        }
    }

    /** Raises the policy's minIops from 40 to 60, held after its check; runs {@code second} meanwhile; both answers. */
    private Response[] raiseThen(String policy, Supplier<Response> second) throws Exception {
        String secret = mintToken("admin", null, null);
        try (RowLocks locks = new RowLocks()) {
            locks.hold("SELECT 1 FROM api_token WHERE id = ? FOR UPDATE", TokenSecrets.idOf(secret));
            CompletableFuture<Response> raised = CompletableFuture.supplyAsync(
                    () -> apiAs(secret).patch("/api/v1/policies/" + policy, "{\"minIops\":60}", null), pool);
            locks.awaitWaiters(1);
            CompletableFuture<Response> other = CompletableFuture.supplyAsync(second, pool);
            locks.awaitWaiters(2);
            locks.release();
            return new Response[] {raised.get(30, TimeUnit.SECONDS), other.get(30, TimeUnit.SECONDS)};
        }
    }

    private long reservedOn(String tenant, String node) {
        return jdbc.sql("SELECT coalesce(sum(v.reserved_iops), 0) FROM volume v JOIN volume_placement vp"
                        + " ON vp.volume_id = v.id WHERE v.tenant_id = ? AND vp.node_id = ?")
                .param(UUID.fromString(tenant)).param(UUID.fromString(node)).query(Long.class).single();
    }

    /** Limits {@code tenant} to 100 IOPS and places a volume of {@code policy} (40 reserved) on a new node; the node. */
    private String reservedVolume(String tenant, String policy) {
        assertThat(api.patch("/api/v1/tenants/" + tenant, "{\"maxIops\":100}", null).status()).isEqualTo(200);
        String node = fx.node(unique("n"));
        fx.volume(tenant, unique("a"), ",\"nodeIds\":[\"" + node + "\"],\"policyId\":\"" + policy + "\"");
        return node;
    }

    @Test
    void aPolicyRaiseAndANewReservationBesideItOnOneNodeAreNeverBothAccepted() throws Exception {
        String policy = fx.policy(unique("p"), ",\"minIops\":40");
        String tenant = fx.tenant(unique("t"));
        String node = reservedVolume(tenant, policy);

        // 60 fits the tenant's 100 alone, and 50 fits beside the 40 committed now, but not beside 60.
        Response[] answers = raiseThen(policy, () -> fx.createVolume(tenant, unique("b"),
                ",\"nodeIds\":[\"" + node + "\"],\"overrides\":{\"minIops\":50}"));

        assertThat(answers[0].status()).as(answers[0].toString()).isEqualTo(200);
        assertThat(answers[1].status()).as("checked against the committed 40: %s", answers[1]).isEqualTo(409);
        assertThat(reservedOn(tenant, node)).isLessThanOrEqualTo(100);
    }

    @Test
    void aPolicyRaiseAndATenantLimitBelowItAreNeverBothAccepted() throws Exception {
        String policy = fx.policy(unique("p"), ",\"minIops\":40");
        String tenant = fx.tenant(unique("t"));
        String node = reservedVolume(tenant, policy);

        // 50 carries the 40 committed now, not the 60 the policy raises it to.
        Response[] answers = raiseThen(policy,
                () -> api.patch("/api/v1/tenants/" + tenant, "{\"maxIops\":50}", null));

        assertThat(answers[0].status()).as(answers[0].toString()).isEqualTo(200);
        assertThat(answers[1].status()).as("checked against the committed 40: %s", answers[1]).isEqualTo(409);
        assertThat(api.get("/api/v1/tenants/" + tenant).json().get("maxIops").asLong()).isEqualTo(100);
    }
}
