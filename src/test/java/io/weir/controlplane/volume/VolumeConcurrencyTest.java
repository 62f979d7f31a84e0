package io.weir.controlplane.volume;

import static io.weir.controlplane.volume.VolumeFixtures.BLOCK;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Many writers at once, over real HTTP and real PostgreSQL: conditional updates of one volume must
 * lose nothing, and the config revision must stay gap-free, ordered and unique.
 */
class VolumeConcurrencyTest extends IntegrationTest {

    private static final int THREADS = 8;

    @Autowired
    ConfigRevisions revisions;

    @Autowired
    JdbcClient jdbc;

    @Autowired
    javax.sql.DataSource dataSource;

    private VolumeFixtures fx;
    private String tenant;
    private ExecutorService pool;

    @BeforeEach
    void setUp() {
        fx = new VolumeFixtures(api, jdbc);
        tenant = fx.tenant(unique("race"));
        pool = Executors.newFixedThreadPool(THREADS);
    }

    @AfterEach
    void tearDown() {
        pool.shutdownNow();
    }

    /** Starts {@code THREADS} copies of {@code body} at once and waits for all of them. */
    private void race(ThreadBody body) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            futures.add(pool.submit(() -> {
                start.await();
                body.run(thread, apiAs(ADMIN_TOKEN));
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
    }

    @FunctionalInterface
    private interface ThreadBody {
        void run(int thread, HttpApi api) throws Exception;
    }

    /**
     * A read of volumes or nodes holds one pooled connection at a time: whether each node applied
     * its config is read (and its desired revision stamped) in transactions of their own, which
     * took a second connection while the read's was held, so as many concurrent reads as the pool
     * has connections waited on each other until the pool's timeout and answered 503. Here the
     * test holds all connections but one, as busy readers would.
     */
    @Test
    void aReadOfVolumesOrNodesNeedsOneConnectionAtATime() throws Exception {
        String node = fx.node(unique("n"));
        String path = fx.volume(tenant, unique("v"), ",\"nodeIds\":[\"" + node + "\"]");
        com.zaxxer.hikari.HikariDataSource pool = (com.zaxxer.hikari.HikariDataSource) dataSource;
        List<Connection> held = new ArrayList<>();
        try { // a read that waits for a second connection fails after the pool's timeout (30 s)
            while (held.size() < pool.getMaximumPoolSize() - 1) {
                held.add(pool.getConnection());
            }
            for (String read : List.of(path, "/api/v1/volumes", "/api/v1/tenants/" + tenant + "/volumes",
                    "/api/v1/nodes/" + node, "/api/v1/nodes")) {
                Response r = api.get(read);
                assertThat(r.status()).as("GET %s: %s", read, r).isEqualTo(200);
            }
        } finally {
            for (Connection c : held) {
                c.close();
            }
        }
    }

    @Test
    void conditionalPatchesFromEightThreadsLoseNoUpdate() throws Exception {
        int attempts = 10;
        String path = fx.volume(tenant, unique("hot"), "");
        long initialSize = api.get(path).json().get("sizeBytes").asLong();
        AtomicInteger succeeded = new AtomicInteger();
        AtomicInteger stale = new AtomicInteger();
        List<String> unexpected = Collections.synchronizedList(new ArrayList<>());

        race((thread, client) -> {
            for (int i = 0; i < attempts; i++) {
                Response read = client.get(path);
                long size = read.json().get("sizeBytes").asLong();
                Response write = client.patch(path, "{\"sizeBytes\":" + (size + BLOCK) + "}", read.etag());
                switch (write.status()) {
                    case 200 -> succeeded.incrementAndGet();
                    case 412 -> stale.incrementAndGet();
                    default -> unexpected.add(write.toString());
                }
            }
        });

        assertThat(unexpected).isEmpty();
        assertThat(succeeded.get() + stale.get()).isEqualTo(THREADS * attempts);
        assertThat(succeeded.get()).isPositive();
        Response end = api.get(path);
        assertThat(end.json().get("sizeBytes").asLong())
                .as("every successful increment is visible, and only those")
                .isEqualTo(initialSize + BLOCK * succeeded.get());
        assertThat(end.versionTag()).isEqualTo("\"" + succeeded.get() + "\"");
    }

    @Test
    void conditionalPlacementChangesFromEightThreadsVersionEachSuccessOnce() throws Exception {
        int attempts = 6;
        String a = fx.node(unique("a"));
        String b = fx.node(unique("b"));
        String path = fx.volume(tenant, unique("moving"), ",\"nodeIds\":[\"" + a + "\"]");
        AtomicInteger succeeded = new AtomicInteger();
        List<String> unexpected = Collections.synchronizedList(new ArrayList<>());

        race((thread, client) -> {
            for (int i = 0; i < attempts; i++) {
                Response read = client.get(path);
                // Only the placement changes: it moves to whichever node the volume is not on now.
                String next = read.json().get("nodeIds").get(0).asString().equals(a)
                        ? "[\"" + b + "\"]" : "[\"" + a + "\"]";
                Response write = client.patch(path, "{\"nodeIds\":" + next + "}", read.etag());
                if (write.status() == 200) {
                    succeeded.incrementAndGet();
                } else if (write.status() != 412) {
                    unexpected.add(write.toString());
                }
            }
        });

        assertThat(unexpected).isEmpty();
        assertThat(succeeded.get()).isPositive();
        Response end = api.get(path);
        assertThat(end.versionTag()).isEqualTo("\"" + succeeded.get() + "\"");
        assertThat(end.json().get("nodeIds").get(0).asString()).isEqualTo(succeeded.get() % 2 == 0 ? a : b);
    }

    @Test
    void concurrentEnforcingWritesCommitEveryRevisionOnceAndInOrder() throws Exception {
        int writesPerThread = 3;
        // Everything is placed on a node, so that every enforced change reaches one and bumps.
        String node = fx.node(unique("n"));
        String placed = ",\"nodeIds\":[\"" + node + "\"]";
        List<String> volumes = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            volumes.add(fx.volume(tenant, unique("w" + t), placed));
        }
        String policyId = fx.policy(unique("shared"), ",\"maxIops\":1000");
        fx.volume(tenant, unique("user"), placed + ",\"policyId\":\"" + policyId + "\"");
        String policy = "/api/v1/policies/" + policyId;
        AtomicInteger bumping = new AtomicInteger();
        AtomicInteger lostRaces = new AtomicInteger();
        List<String> unexpected = Collections.synchronizedList(new ArrayList<>());

        TestDatabase.Coordinates db = TestDatabase.get();
        try (Connection listener = DriverManager.getConnection(db.jdbcUrl(), db.username(), db.password())) {
            try (Statement listen = listener.createStatement()) {
                listen.execute("LISTEN " + ConfigRevisions.NOTIFY_CHANNEL);
            }
            long initial = revisions.current();

            race((thread, client) -> {
                for (int i = 0; i < writesPerThread; i++) {
                    Response r;
                    boolean bumps;
                    boolean sharedRow;
                    switch (i % 3) {
                        // An override change on the thread's own volume: enforced, never contended.
                        case 0 -> {
                            r = client.patch(volumes.get(thread), "{\"overrides\":{\"weight\":" + (thread * 100 + i + 1) + "}}", null);
                            bumps = true;
                            sharedRow = false;
                        }
                        // A limit change of one policy that all threads write: enforced. The
                        // transaction bumps before it flushes, so a writer that then loses the
                        // optimistic-lock race (409) rolls its bump back.
                        case 1 -> {
                            r = client.patch(policy, "{\"maxIops\":" + (2000 + thread * 100 + i) + "}", null);
                            bumps = true;
                            sharedRow = true;
                        }
                        // A description change of the same policy: cosmetic, bumps nothing.
                        default -> {
                            r = client.patch(policy, "{\"description\":\"thread " + thread + " write " + i + "\"}", null);
                            bumps = false;
                            sharedRow = true;
                        }
                    }
                    if (r.status() == 200) {
                        if (bumps) {
                            bumping.incrementAndGet();
                        }
                    } else if (r.status() == 409 && sharedRow) {
                        lostRaces.incrementAndGet();
                    } else {
                        unexpected.add(r.toString());
                    }
                }
            });

            assertThat(unexpected).isEmpty();
            long bumps = bumping.get();
            assertThat(bumps).as("at least every volume write").isGreaterThanOrEqualTo(THREADS * writesPerThread / 3);
            assertThat(revisions.current()).isEqualTo(initial + bumps);

            // pg_notify carries the value each transaction got from its bump, delivered at commit:
            // every value exactly once, in commit order, with no gap.
            List<Long> committed = new ArrayList<>();
            PGConnection pg = listener.unwrap(PGConnection.class);
            while (committed.size() < bumps) {
                PGNotification[] batch = pg.getNotifications(10_000);
                if (batch == null || batch.length == 0) {
                    break;
                }
                for (PGNotification n : batch) {
                    committed.add(Long.parseLong(n.getParameter()));
                }
            }
            assertThat(committed).containsExactlyElementsOf(
                    LongStream.rangeClosed(initial + 1, initial + bumps).boxed().toList());
        }
    }
}
