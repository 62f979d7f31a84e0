package io.weir.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.agent.support.ScriptedControlPlane;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * The heartbeat and a connection that has just opened. The socket is the connection's as soon as
 * the WebSocket opens (on the HTTP client's thread); its hello follows on the agent's event
 * thread. A heartbeat queued before that hello must not measure the silence of a connection that
 * has not spoken yet: on the first connection there was no contact at all. The test fires the
 * heartbeat timer itself (a scheduler whose fixed-delay timers it runs), holds the agent's event
 * thread with a task of its own, and the handshake at the control plane, to make the order
 * certain; nothing waits on time.
 */
class AgentHeartbeatTest {

    private static final int WAIT = 30;

    /** A scheduler whose fixed-delay timers (the heartbeat) run when the test says; the rest run as usual. */
    static final class ManualTimers extends ScheduledThreadPoolExecutor {
        final List<Runnable> timers = new CopyOnWriteArrayList<>();

        ManualTimers() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
            timers.add(command);
            return super.schedule(() -> { }, 1, TimeUnit.DAYS);
        }

        void fire() {
            timers.forEach(Runnable::run);
        }
    }

    @Test
    void aHeartbeatQueuedBeforeTheHelloLeavesTheNewConnectionAlone(@TempDir Path stateDir) throws Exception {
        ManualTimers scheduler = new ManualTimers();
        QosExecutor executor = QosExecutor.builder(SchedulerConfig.builder().defaultTasks().build()).workers(1).build();
        try (ScriptedControlPlane controlPlane = new ScriptedControlPlane()) {
            CountDownLatch handshake = new CountDownLatch(1);
            controlPlane.holdHandshakes(handshake);
            QosAgent agent = QosAgent.builder()
                    .controlPlane(URI.create("http://127.0.0.1:" + controlPlane.port()))
                    .nodeId(UUID.randomUUID())
                    .token("weir_node-token-of-the-test")
                    .stateDir(stateDir)
                    .executor(executor)
                    .scheduler(scheduler)
                    .build();
            try {
                agent.start(); // connecting: the handshake waits at the control plane
                AgentConnection opening = agent.current;
                CountDownLatch eventThread = new CountDownLatch(1);
                agent.events.execute(() -> {
                    try {
                        eventThread.await(WAIT, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                scheduler.fire(); // the heartbeat is queued first ...
                handshake.countDown();
                await().atMost(Duration.ofSeconds(WAIT)).until(() -> opening.ws != null); // ... the socket opens behind it
                eventThread.countDown();

                ScriptedControlPlane.Peer peer = controlPlane.nextPeer(WAIT);
                assertThat(peer).isNotNull();
                String hello = peer.next(WAIT);
                assertThat(hello).as("the connection said hello").isNotNull();
                assertThat(JsonMapper.builder().build().readTree(hello).get("type").asString()).isEqualTo("hello");
                await().atMost(Duration.ofSeconds(WAIT)).until(() -> agent.state().connected());
                assertThat(agent.state().lastError()).as("not dropped as half-open").isNull();
                assertThat(peer.closed).isEmpty();
                assertThat(agent.current).isSameAs(opening);
            } finally {
                agent.close();
                scheduler.shutdownNow();
                executor.close();
            }
        }
    }
}
