package io.weir.controlplane.taskshare;

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

/**
 * Deleting a node's task-share override while another request replaces it, interleaved
 * deterministically behind a row lock the test holds on the override: with one lock order
 * (revision first, then the set) the two serialise, the delete wins and the replace loses the
 * optimistic-lock race with 409. With the delete flushing before its bump they deadlocked
 * (PostgreSQL 40P01), answered 500.
 */
class TaskShareLockOrderTest extends IntegrationTest {

    private static final String OVERRIDE = """
            {"tasks":[{"name":"foreground","share":900},{"name":"gc","share":40}]}""";

    private ExecutorService pool;

    @BeforeEach
    void setUp() {
        pool = Executors.newFixedThreadPool(2);
    }

    @AfterEach
    void tearDown() {
        pool.shutdownNow();
    }

    @Test
    void deletingAnOverrideWhileItIsReplacedDoesNotDeadlock() throws Exception {
        Response node = api.post("/api/v1/nodes", "{\"name\":\"" + unique("lock-node") + "\"}");
        assertThat(node.status()).isEqualTo(201);
        String nodeId = node.json().get("id").asString();
        String path = "/api/v1/nodes/" + nodeId + "/task-shares";
        assertThat(api.put(path, OVERRIDE, null).status()).isEqualTo(200);

        Response deleted;
        Response replaced;
        try (RowLocks locks = new RowLocks()) {
            locks.hold("SELECT 1 FROM task_share_set WHERE node_id = ? FOR UPDATE", UUID.fromString(nodeId));
            CompletableFuture<Response> delete = CompletableFuture.supplyAsync(
                    () -> apiAs(ADMIN_TOKEN).delete(path, null), pool);
            locks.awaitWaiters(1);
            CompletableFuture<Response> replace = CompletableFuture.supplyAsync(
                    () -> apiAs(ADMIN_TOKEN).put(path, OVERRIDE.replace("900", "901"), null), pool);
            locks.awaitWaiters(2);
            locks.release();
            deleted = delete.get(30, TimeUnit.SECONDS);
            replaced = replace.get(30, TimeUnit.SECONDS);
        }

        assertThat(deleted.status()).as(deleted.toString()).isEqualTo(204);
        assertThat(replaced.status()).as(replaced.toString()).isEqualTo(409);
        assertThat(api.get(path).json().get("source").asString()).isEqualTo("cluster-default");
    }
}
