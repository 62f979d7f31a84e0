package io.weir.controlplane.volume;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.RowLocks;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * A policy change and a volume write that validates overrides against that policy, interleaved
 * deterministically: the test holds a row lock on the policy, starts both requests, waits (on
 * pg_locks) until both queue behind it, then releases. Whatever order they then run in, the result
 * must be consistent: never both accepted when together they contradict each other.
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
}
