package io.weir.agent;

import static io.weir.support.Patience.PATIENCE;
import static org.awaitility.Awaitility.await;

import io.weir.agent.support.AgentFixture;
import io.weir.agent.support.AgentFixture.Node;
import io.weir.agent.support.AgentFixture.RunningAgent;
import io.weir.agent.support.Replica;
import io.weir.controlplane.database.EmbeddedPostgresServer;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PostgreSQL restarted under a running replica: the replica's pool and its LISTEN connection
 * lose the server; once it is back, changes are stored again and pushed to the agent. Runs on a
 * PostgreSQL of its own (the run's shared one must not be restarted under other tests).
 */
class AgentPostgresRestartTest {

    @TempDir
    Path pgDir;

    @TempDir
    Path stateDir;

    private EmbeddedPostgresServer postgres;
    private Replica replica;
    private AgentFixture fixture;

    @AfterEach
    void stop() {
        if (fixture != null) {
            fixture.close();
        }
        if (replica != null) {
            replica.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void postgresRestartedUnderARunningReplicaAndPushesResume() {
        postgres = EmbeddedPostgresServer.start(pgDir, 0);
        int pgPort = postgres.port();
        replica = Replica.start(postgres.jdbcUrl(), EmbeddedPostgresServer.USER, postgres.password());
        fixture = new AgentFixture(replica.api());
        Node node = fixture.node("pg", 1000);
        RunningAgent a = fixture.start(node, replica.port(), stateDir);
        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(1000L)));

        postgres.close();
        postgres = EmbeddedPostgresServer.start(pgDir, pgPort);

        // The first requests after the restart may meet connections the server dropped.
        await().atMost(PATIENCE).ignoreExceptions().until(() -> {
            fixture.setPolicyMaxIops(node, 5000);
            return true;
        });
        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(5000L)));

        fixture.setPolicyMaxIops(node, 5100);
        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(5100L)));
        await().atMost(PATIENCE).until(() -> fixture.status(node).get("appliedRevision").asLong()
                == a.agent().state().appliedRevision());
    }
}
