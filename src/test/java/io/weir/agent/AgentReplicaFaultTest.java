package io.weir.agent;

import static io.weir.support.Patience.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.agent.support.AgentFixture;
import io.weir.agent.support.AgentFixture.Node;
import io.weir.agent.support.AgentFixture.RunningAgent;
import io.weir.agent.support.Replica;
import io.weir.support.TcpProxy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Control-plane replicas that stop, restart and share one PostgreSQL, each in its own Spring
 * context on its own port, with a real agent connected through a {@link TcpProxy} that stands
 * for the network (and for the address a restarted replica comes back on).
 */
class AgentReplicaFaultTest {

    @TempDir
    Path stateDir;

    private final List<AutoCloseable> toClose = new ArrayList<>();

    private <T extends AutoCloseable> T closeLater(T c) {
        toClose.add(0, c);
        return c;
    }

    @AfterEach
    void closeAll() {
        for (AutoCloseable c : toClose) {
            try {
                c.close();
            } catch (Exception ignored) {
                // clean-up
            }
        }
    }

    @Test
    void theControlPlaneKilledInTheMiddleOfAPushTheAgentConvergesAfterTheRestart() {
        Replica first = closeLater(Replica.start());
        AgentFixture fixture = closeLater(new AgentFixture(first.api()));
        Node node = fixture.node("kill", 1000);
        TcpProxy link = closeLater(new TcpProxy(first.port()));
        RunningAgent a = fixture.start(node, link.port(), stateDir);
        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(1000L)));
        long before = a.agent().state().appliedRevision();

        link.freeze();
        fixture.setPolicyMaxIops(node, 6000);
        // The replica has sent the push; it is on the wire, not yet at the agent.
        await().atMost(PATIENCE).until(() -> link.heldFromUpstream().contains("config"));
        first.close();
        link.cut(); // the dead process's connections are reset; the push is lost
        assertThat(a.maxIops(node.volumeId())).contains(1000L);

        Replica second = closeLater(Replica.start());
        link.retarget(second.port());

        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(6000L)));
        assertThat(a.agent().state().appliedRevision()).isGreaterThan(before);
        AgentFixture onSecond = new AgentFixture(second.api());
        await().atMost(PATIENCE).until(() -> onSecond.status(node).get("appliedRevision").asLong()
                == a.agent().state().appliedRevision());
    }

    @Test
    void revisionsAreNeverReusedAcrossAControlPlaneRestart() {
        Replica first = closeLater(Replica.start());
        AgentFixture fixture = closeLater(new AgentFixture(first.api()));
        Node node = fixture.node("revs", 1000);
        TcpProxy link = closeLater(new TcpProxy(first.port()));
        RunningAgent a = fixture.start(node, link.port(), stateDir);
        fixture.setPolicyMaxIops(node, 1100);
        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(1100L)));
        long beforeRestart = a.agent().state().appliedRevision();

        first.close();
        link.cut();
        Replica second = closeLater(Replica.start());
        link.retarget(second.port());
        AgentFixture afterRestart = new AgentFixture(second.api());
        afterRestart.setPolicyMaxIops(node, 1200);

        await().atMost(PATIENCE).until(() -> a.maxIops(node.volumeId()).equals(Optional.of(1200L)));
        long afterRestartRevision = a.agent().state().appliedRevision();
        assertThat(afterRestartRevision).isGreaterThan(beforeRestart);
        assertThat(a.applied()).as("every revision the agent applied, in order").isSorted().doesNotHaveDuplicates();
    }

    @Test
    void anAgentOnReplicaBHearsAChangeMadeOnReplicaA() {
        Replica a = closeLater(Replica.start());
        Replica b = closeLater(Replica.start());
        AgentFixture onA = closeLater(new AgentFixture(a.api()));
        Node node = onA.node("two", 1000);
        AgentFixture onB = closeLater(new AgentFixture(b.api()));
        RunningAgent agent = onB.start(node, b.port(), stateDir);
        await().atMost(PATIENCE).until(() -> agent.agent().state().connected());
        await().atMost(PATIENCE).until(() -> agent.maxIops(node.volumeId()).equals(Optional.of(1000L)));

        onA.setPolicyMaxIops(node, 8800);

        await().atMost(PATIENCE).until(() -> agent.maxIops(node.volumeId()).equals(Optional.of(8800L)));
        long applied = agent.agent().state().appliedRevision();
        await().atMost(PATIENCE).until(() -> onA.status(node).get("appliedRevision").asLong() == applied);
        assertThat(onA.status(node).get("connected").asBoolean()).as("replica A sees B's agent").isTrue();
    }
}
