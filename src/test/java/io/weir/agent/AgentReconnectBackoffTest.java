package io.weir.agent;

import io.weir.support.TestConfigs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.agent.support.ScriptedControlPlane;
import io.weir.agent.support.ScriptedControlPlane.Peer;
import io.weir.controlplane.support.MutableClock;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import io.weir.protocol.DesiredConfig;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reconnect backoff against a control plane that accepts the agent, completes a config/ack
 * exchange and drops it at once, over and over: the delays must keep growing (a reset on every
 * message made this a tight reconnect loop), and start over only after a connection stayed
 * healthy for {@link QosAgent.Builder#backoffResetAfter the reset time}. The delays are read from
 * the jitter source, which answers the largest delay allowed each time (tiny here, so the test
 * never waits long); the agent's clock is the test's.
 */
class AgentReconnectBackoffTest {

    private static final int WAIT = 30;
    private static final Duration INITIAL = Duration.ofMillis(1);
    private static final Duration RESET_AFTER = Duration.ofMinutes(1);

    @TempDir
    Path stateDir;

    private final UUID nodeId = UUID.randomUUID();
    private final MutableClock clock = new MutableClock();
    private final HighestDraw random = new HighestDraw();
    private final ScriptedControlPlane controlPlane = new ScriptedControlPlane();
    private final QosExecutor executor = QosExecutor.builder(SchedulerConfig.builder().defaultTasks().build()).workers(1).build();
    private QosAgent agent;

    @AfterEach
    void stop() {
        if (agent != null) {
            agent.close();
        }
        executor.close();
        controlPlane.close();
    }

    private void startAgent() throws Exception {
        agent = QosAgent.builder()
                .controlPlane(URI.create("http://127.0.0.1:" + controlPlane.port()))
                .token("weir_node-token-of-the-test")
                .stateDir(stateDir)
                .executor(executor)
                .clock(clock)
                .random(random)
                .backoff(INITIAL, Duration.ofSeconds(1))
                .backoffResetAfter(RESET_AFTER)
                .build();
        agent.start();
    }

    private DesiredConfig snapshot(long revision) {
        return TestConfigs.config().node(nodeId).revision(revision).task("foreground", 800).build();
    }

    /** Takes the next connection, answers its hello with a config, awaits the ack. */
    private Peer exchange(long revision) throws InterruptedException {
        Peer peer = controlPlane.nextPeer(WAIT);
        assertThat(peer).as("the agent connected").isNotNull();
        assertThat(peer.next(WAIT)).contains("\"hello\"");
        peer.send(AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(revision))));
        assertThat(peer.next(WAIT)).contains("\"ack\"");
        return peer;
    }

    private static long ceilingNanos(long bound) {
        return bound - 1;
    }

    @Test
    void aControlPlaneThatAcceptsAndDropsAtOnceMakesTheDelaysGrow() throws Exception {
        startAgent();
        for (int i = 1; i <= 5; i++) {
            exchange(7).close();
        }
        await().atMost(Duration.ofSeconds(WAIT)).until(() -> random.bounds.size() >= 5);
        assertThat(random.bounds.subList(0, 5)).extracting(AgentReconnectBackoffTest::ceilingNanos)
                .containsExactly(INITIAL.toNanos(), 2 * INITIAL.toNanos(), 4 * INITIAL.toNanos(), 8 * INITIAL.toNanos(),
                        16 * INITIAL.toNanos());
    }

    @Test
    void aConnectionHealthyForTheResetTimeStartsTheDelaysOver() throws Exception {
        startAgent();
        for (int i = 1; i <= 3; i++) {
            exchange(7).close();
        }
        Peer healthy = exchange(8);
        clock.advance(RESET_AFTER);
        // Contact after the reset time: a pushed change, applied and acked.
        healthy.send(AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(9))));
        assertThat(healthy.next(WAIT)).contains("\"ack\"");
        healthy.close();
        await().atMost(Duration.ofSeconds(WAIT)).until(() -> random.bounds.size() >= 4);
        assertThat(random.bounds.subList(0, 4)).extracting(AgentReconnectBackoffTest::ceilingNanos)
                .containsExactly(INITIAL.toNanos(), 2 * INITIAL.toNanos(), 4 * INITIAL.toNanos(), INITIAL.toNanos());
    }
}
