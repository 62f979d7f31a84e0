package io.weir.agent;

import io.weir.support.TestConfigs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.agent.support.ScriptedControlPlane;
import io.weir.agent.support.ScriptedControlPlane.Peer;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import io.weir.protocol.ConfigDigest;
import io.weir.protocol.DesiredConfig;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The agent's side of the wire, against a scripted control plane that sends what the real one
 * never does: frames that are garbage, too large, or of another protocol version. (The control
 * plane's refusal of such frames from agents is tested with the endpoint.)
 */
class AgentProtocolTest {

    private static final int WAIT = 30;
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path stateDir;

    private final UUID nodeId = UUID.randomUUID();
    private final UUID volumeId = UUID.randomUUID();
    private ScriptedControlPlane controlPlane;
    private QosExecutor executor;
    private QosAgent agent;

    @BeforeEach
    void start() throws Exception {
        controlPlane = new ScriptedControlPlane();
        executor = QosExecutor.builder(SchedulerConfig.builder().defaultTasks().build()).workers(1).build();
        agent = QosAgent.builder()
                .controlPlane(URI.create("http://127.0.0.1:" + controlPlane.port()))
                .nodeId(nodeId)
                .token("weir_node-token-of-the-test")
                .stateDir(stateDir)
                .executor(executor)
                .backoff(Duration.ofMillis(20), Duration.ofMillis(200))
                .build();
        agent.start();
    }

    @AfterEach
    void stop() {
        agent.close();
        executor.close();
        controlPlane.close();
    }

    private DesiredConfig snapshot(UUID node, long revision, long maxIops) {
        return TestConfigs.config().node(node).revision(revision).task("foreground", 800).tenant("acme")
                .volume(volumeId, "acme", "vol", 1 << 20, 100, null, maxIops).build();
    }

    private static JsonNode json(String frame) {
        assertThat(frame).as("a frame from the agent").isNotNull();
        return JSON.readTree(frame);
    }

    private Peer connectedPeer() throws InterruptedException {
        Peer peer = controlPlane.nextPeer(WAIT);
        assertThat(peer).as("the agent connected").isNotNull();
        JsonNode hello = json(peer.next(WAIT));
        assertThat(hello.get("type").asString()).isEqualTo("hello");
        return peer;
    }

    private long enforcedMaxIops() {
        return executor.config().volumes().stream().filter(v -> v.id().equals(volumeId.toString()))
                .mapToLong(SchedulerConfig.VolumeSpec::maxIops).findFirst().orElse(-1);
    }

    /**
     * A listener may ask the agent for the config in force: it runs on the agent's event thread,
     * where a question queued behind the running task would wait for itself. The cached config
     * is applied inside {@code start()}, so a hang there would hold the caller of start for good.
     */
    /**
     * An agent of this test's node and executor, its state in {@code stateDir}, on a control plane
     * of its own at {@code port} (reconnecting quickly).
     */
    private QosAgent.Builder agentOn(Path stateDir, int port) {
        return agentOn(stateDir).controlPlane(URI.create("http://127.0.0.1:" + port))
                .backoff(Duration.ofMillis(20), Duration.ofMillis(200));
    }

    /** An agent of this test's node, control plane and executor, its state in {@code stateDir}. */
    private QosAgent.Builder agentOn(Path stateDir) {
        return QosAgent.builder()
                .controlPlane(URI.create("http://127.0.0.1:" + controlPlane.port()))
                .nodeId(nodeId)
                .token("weir_node-token-of-the-test")
                .stateDir(stateDir)
                .executor(executor);
    }

    @Test
    void aListenerAskingForTheAppliedConfigGetsItWithoutHangingTheAgent(@TempDir Path otherDir) throws Exception {
        DesiredConfig cached = snapshot(nodeId, 5, 500);
        new StateStore(otherDir, java.time.Clock.systemUTC()).save(cached);
        AtomicReference<DesiredConfig> seen = new AtomicReference<>();
        AtomicReference<QosAgent> self = new AtomicReference<>();
        QosAgent asking = agentOn(otherDir)
                .listener(new AgentListener() {
                    @Override
                    public void applied(DesiredConfig config) {
                        seen.set(self.get().appliedConfig());
                    }
                })
                .build();
        self.set(asking);
        try {
            CompletableFuture.runAsync(() -> {
                try {
                    asking.start();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).get(WAIT, TimeUnit.SECONDS);
            assertThat(seen.get()).isEqualTo(cached);
            assertThat(asking.appliedConfig()).isEqualTo(cached);
        } finally {
            asking.close();
        }
    }

    /**
     * A listener may close its own agent (a node shutting down on a config it cannot serve): the
     * close runs on the agent's event thread, where it queued its work behind the listener's and
     * waited twice {@link QosAgent#CLOSE_WAIT} for itself, holding the caller of start that long.
     * Closed while start applies the cached config, the agent starts no timers afterwards, and
     * start returns normally.
     */
    @Test
    void aListenerThatClosesItsAgentDoesNotWaitForItself(@TempDir Path otherDir) throws Exception {
        new StateStore(otherDir, java.time.Clock.systemUTC()).save(snapshot(nodeId, 5, 500));
        AtomicReference<QosAgent> self = new AtomicReference<>();
        java.util.concurrent.CountDownLatch closeReturned = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.ScheduledThreadPoolExecutor pool = new java.util.concurrent.ScheduledThreadPoolExecutor(1);
        pool.setRemoveOnCancelPolicy(true);
        QosAgent closing = agentOn(otherDir)
                .scheduler(pool)
                .listener(new AgentListener() {
                    @Override
                    public void applied(DesiredConfig config) {
                        self.get().close();
                        closeReturned.countDown();
                    }
                })
                .build();
        self.set(closing);
        try {
            CompletableFuture<Void> started = CompletableFuture.runAsync(() -> {
                try {
                    closing.start(); // applies the cached config: the listener closes the agent
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            assertThat(closeReturned.await(QosAgent.CLOSE_WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("close returned before the wait it would spend on itself").isTrue();
            started.get(WAIT, TimeUnit.SECONDS);
            assertThat(pool.getQueue()).as("timers of the closed agent (heartbeat, usage ticks)").isEmpty();
        } finally {
            closing.close();
            pool.shutdownNow();
        }
    }

    @Test
    void helloCarriesTheNodeTheAppliedRevisionAndTheVersionAndTheTokenGoesInTheUpgrade() throws Exception {
        Peer peer = controlPlane.nextPeer(WAIT);
        JsonNode hello = json(peer.next(WAIT));

        assertThat(peer.authorization).isEqualTo("Bearer weir_node-token-of-the-test");
        assertThat(hello.get("type").asString()).isEqualTo("hello");
        assertThat(hello.get("protocolVersion").asInt()).isEqualTo(AgentMessages.PROTOCOL_VERSION);
        assertThat(hello.get("nodeId").asString()).isEqualTo(nodeId.toString());
        assertThat(hello.get("appliedRevision").asLong()).isZero();
        assertThat(hello.get("agentVersion").asString()).isEqualTo(QosAgent.AGENT_VERSION);
        assertThat(hello.has("configDigest")).as("nothing applied, nothing to name").isFalse();
    }

    @Test
    void aPushIsAppliedAckedAndSavedAndTheNextHelloCarriesItsRevision() throws Exception {
        Peer peer = connectedPeer();

        peer.send(AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(nodeId, 7, 700))));

        JsonNode ack = json(peer.next(WAIT));
        assertThat(ack.get("type").asString()).isEqualTo("ack");
        assertThat(ack.get("revision").asLong()).isEqualTo(7);
        assertThat(enforcedMaxIops()).isEqualTo(700);
        assertThat(new StateStore(stateDir, java.time.Clock.systemUTC()).load().config().revision()).isEqualTo(7);

        peer.send("not json"); // the agent drops this connection and connects again

        Peer again = controlPlane.nextPeer(WAIT);
        JsonNode hello = json(again.next(WAIT));
        assertThat(hello.get("type").asString()).isEqualTo("hello");
        assertThat(hello.get("appliedRevision").asLong()).isEqualTo(7);
        // The digest names the content: a revision alone may name another node's snapshot, or one from before a restore.
        assertThat(hello.get("configDigest").asString()).isEqualTo(ConfigDigest.of(agent.appliedConfig()));
    }

    /**
     * After a reconnect the agent sends its unacknowledged usage again; a status supplier that
     * throws must not keep it from doing so. It left the rest of the connection's opening undone
     * (the resend, the certificate check, the listener): reports made while the control plane was
     * away waited for the next reconnect, and were lost as a gap past the buffer's hour.
     */
    @Test
    void aStatusThatCannotBeMadeDoesNotKeepUnacknowledgedUsageFromBeingSentAgainOnReconnect() throws Exception {
        Path dir = stateDir.resolve("throwing-status");
        try (ScriptedControlPlane cp = new ScriptedControlPlane();
                QosAgent throwing = QosAgent.builder().controlPlane(URI.create("http://127.0.0.1:" + cp.port()))
                        .nodeId(nodeId).token("weir_node-token-of-the-test").stateDir(dir).executor(executor)
                        .backoff(Duration.ofMillis(20), Duration.ofMillis(200))
                        .status(() -> {
                            throw new IllegalStateException("no status today");
                        }).build()) {
            throwing.start();
            Peer first = cp.nextPeer(WAIT);
            assertThat(json(first.next(WAIT)).get("type").asString()).isEqualTo("hello");
            long sequence = throwing.reportUsageNow().sequence();
            JsonNode usage = json(first.next(WAIT));
            assertThat(usage.get("type").asString()).isEqualTo("usage");
            first.send("not json"); // not acknowledged; the agent drops this connection and connects again

            Peer again = cp.nextPeer(WAIT);
            assertThat(json(again.next(WAIT)).get("type").asString()).isEqualTo("hello");
            java.util.List<Long> sent = new java.util.ArrayList<>();
            for (String frame; !sent.contains(sequence) && (frame = again.next(5)) != null; ) {
                JsonNode f = json(frame);
                if (f.get("type").asString().equals("usage")) {
                    sent.add(f.get("sequence").asLong()); // a report of the periodic tick may come too
                }
            }
            assertThat(sent).as("usage sent on the new connection").contains(sequence);
        }
    }

    /**
     * Applying a config may take longer than the heartbeat timeout (hundreds of new volume files on
     * a slow disk); the agent reads nothing meanwhile, so that time is not the control plane's
     * silence. It took it for a half-open connection and dropped a healthy one. The agent's clock
     * is one the test moves: the apply takes 40 s of it, past the 30 s timeout.
     */
    @Test
    void anApplyLongerThanTheHeartbeatTimeoutKeepsTheConnection() throws Exception {
        Path dir = stateDir.resolve("slow-apply");
        io.weir.support.ManualClock clock = new io.weir.support.ManualClock(java.time.Instant.parse("2026-06-01T00:00:00Z"));
        java.util.concurrent.atomic.AtomicInteger lost = new java.util.concurrent.atomic.AtomicInteger();
        try (ScriptedControlPlane cp = new ScriptedControlPlane();
                QosAgent slow = QosAgent.builder().controlPlane(URI.create("http://127.0.0.1:" + cp.port()))
                        .nodeId(nodeId).token("weir_node-token-of-the-test").stateDir(dir).executor(executor)
                        .backoff(Duration.ofMillis(20), Duration.ofMillis(200)).clock(clock)
                        .heartbeatInterval(Duration.ofMillis(100)).heartbeatTimeout(Duration.ofSeconds(30))
                        .listener(new AgentListener() {
                            @Override
                            public void applying(DesiredConfig config) {
                                clock.advance(Duration.ofSeconds(40)); // a slow apply, on the agent's clock
                            }

                            @Override
                            public void disconnected(String reason) {
                                lost.incrementAndGet();
                            }
                        }).build()) {
            slow.start();
            Peer peer = cp.nextPeer(WAIT);
            assertThat(json(peer.next(WAIT)).get("type").asString()).isEqualTo("hello");
            peer.send(AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(nodeId, 3, 300))));
            assertThat(json(peer.next(WAIT)).get("type").asString()).isEqualTo("ack");
            // heartbeats every 100 ms: the ten or so of the next second must find the connection alive, not 40 s silent
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> lost.get() == 0);
            assertThat(cp.nextPeer(0)).as("no reconnect").isNull();
        }
    }

    /**
     * A config in force that could not be saved (a full disk, an IO error) is saved again until it
     * is: it was saved once or never, and the control plane, told by the hello's digest that the
     * node is up to date, never pushed it again, so a restart while the control plane was away came
     * up on an older config, or on none.
     */
    @Test
    void aConfigThatCouldNotBeSavedIsSavedOnceTheDiskAllowsIt() throws Exception {
        Path dir = stateDir.resolve("unsaved");
        Path inTheWay = dir.resolve(StateStore.TEMP_NAME);
        Files.createDirectories(inTheWay); // the snapshot cannot be written
        try (ScriptedControlPlane cp = new ScriptedControlPlane();
                QosAgent unsaved = agentOn(dir, cp.port()).heartbeatInterval(Duration.ofMillis(100))
                        .build()) {
            unsaved.start();
            Peer peer = cp.nextPeer(WAIT);
            assertThat(json(peer.next(WAIT)).get("type").asString()).isEqualTo("hello");
            peer.send(AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(nodeId, 3, 300))));
            assertThat(json(peer.next(WAIT)).get("type").asString()).as("in force: acknowledged").isEqualTo("ack");
            assertThat(Files.exists(dir.resolve(StateStore.FILE_NAME))).as("not saved").isFalse();
            assertThat(unsaved.state().lastError()).contains("could not be saved");

            Files.delete(inTheWay); // the disk allows it again
            await().atMost(Duration.ofSeconds(WAIT)).until(() -> Files.exists(dir.resolve(StateStore.FILE_NAME)));
            assertThat(new StateStore(dir, java.time.Clock.systemUTC()).load().config()).isEqualTo(unsaved.appliedConfig());
        }
    }

    /**
     * An apply may take longer than the control plane's idle timeout (30 s: thousands of new
     * volume files on a slow disk). The heartbeat's pings waited on the agent's event thread
     * behind the apply, so the control plane heard nothing, closed the session and could fail the
     * node's replicated volumes over. While an apply runs, they go out from the timer.
     */
    @Test
    void whileAnApplyRunsTheAgentStillPingsTheControlPlane() throws Exception {
        Path dir = stateDir.resolve("pinging");
        java.util.concurrent.CountDownLatch inApply = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        try (ScriptedControlPlane cp = new ScriptedControlPlane(); io.weir.support.TcpProxy proxy = new io.weir.support.TcpProxy(cp.port());
                QosAgent slow = agentOn(dir, proxy.port()).heartbeatInterval(Duration.ofMillis(100))
                        .listener(new AgentListener() {
                            @Override
                            public void applying(DesiredConfig config) {
                                inApply.countDown();
                                try {
                                    release.await(WAIT, java.util.concurrent.TimeUnit.SECONDS); // a slow apply, until the test saw enough
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                            }
                        }).build()) {
            slow.start();
            Peer peer = cp.nextPeer(WAIT);
            assertThat(json(peer.next(WAIT)).get("type").asString()).isEqualTo("hello");
            peer.send(AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(nodeId, 3, 300))));
            assertThat(inApply.await(WAIT, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            long before = proxy.upstreamBytes();
            try {
                // heartbeats every 100 ms: three pings (6 bytes each from a client) within 10 s
                await().atMost(Duration.ofSeconds(10)).until(() -> proxy.upstreamBytes() - before >= 3 * 6);
            } finally {
                release.countDown();
            }
            assertThat(json(peer.next(WAIT)).get("type").asString()).isEqualTo("ack");
        }
    }

    @Test
    void aSnapshotForAnotherNodeIsNackedAndTheOldConfigStays() throws Exception {
        Peer peer = connectedPeer();
        peer.send(AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(nodeId, 3, 300))));
        assertThat(json(peer.next(WAIT)).get("type").asString()).isEqualTo("ack");

        peer.send(AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(UUID.randomUUID(), 4, 400))));

        JsonNode nack = json(peer.next(WAIT));
        assertThat(nack.get("type").asString()).isEqualTo("nack");
        assertThat(nack.get("revision").asLong()).isEqualTo(4);
        assertThat(nack.get("reason").asString()).contains("this agent runs node " + nodeId);
        assertThat(enforcedMaxIops()).isEqualTo(300);
        assertThat(agent.state().appliedRevision()).isEqualTo(3);
    }

    /**
     * A listener that fails with an Error (an AssertionError, a class that cannot be loaded) vetoes
     * the snapshot as one that throws an exception does: the snapshot was left in force in the
     * scheduler, unanswered, and the agent read nothing more from the connection.
     */
    @Test
    void aListenerThatFailsWithAnErrorVetoesTheSnapshot() throws Exception {
        Path dir = stateDir.resolve("error-listener");
        try (ScriptedControlPlane cp = new ScriptedControlPlane();
                QosAgent failing = agentOn(dir, cp.port()).listener(new AgentListener() {
                            @Override
                            public void applying(DesiredConfig config) {
                                if (config.revision() == 4) {
                                    throw new AssertionError("a bug in the listener");
                                }
                            }
                        }).build()) {
            failing.start();
            Peer peer = cp.nextPeer(WAIT);
            assertThat(json(peer.next(WAIT)).get("type").asString()).isEqualTo("hello");
            peer.send(AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(nodeId, 3, 300))));
            assertThat(json(peer.next(WAIT)).get("type").asString()).isEqualTo("ack");

            peer.send(AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(nodeId, 4, 400))));
            JsonNode nack = json(peer.next(WAIT));
            assertThat(nack.get("type").asString()).isEqualTo("nack");
            assertThat(nack.get("reason").asString()).contains("a bug in the listener");
            assertThat(enforcedMaxIops()).as("the scheduler is back on revision 3").isEqualTo(300);

            peer.send(AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(nodeId, 5, 500))));
            assertThat(json(peer.next(WAIT)).get("type").asString()).as("the connection is still read").isEqualTo("ack");
            assertThat(enforcedMaxIops()).isEqualTo(500);
        }
    }

    @Test
    void garbageFromTheControlPlaneIsAnsweredWithAnErrorAndAClose() throws Exception {
        Peer peer = connectedPeer();

        peer.send("this is not json {");

        JsonNode error = json(peer.next(WAIT));
        assertThat(error.get("type").asString()).isEqualTo("error");
        assertThat(error.get("code").asString()).isEqualTo("malformed");
        assertThat(peer.closed.poll(WAIT, java.util.concurrent.TimeUnit.SECONDS)).isNotNull();
        await().atMost(Duration.ofSeconds(WAIT)).untilAsserted(() -> assertThat(agent.state().lastError()).contains("unreadable"));
        assertThat(connectedPeer()).as("the agent connects again after a backoff").isNotNull();
    }

    @Test
    void aFrameOfAnotherProtocolVersionIsRefusedAndNotApplied() throws Exception {
        Peer peer = connectedPeer();
        String push = AgentMessages.encode(new AgentMessage.ConfigPush(snapshot(nodeId, 9, 900)));

        peer.send(push.replace("\"protocolVersion\":1", "\"protocolVersion\":2"));

        JsonNode error = json(peer.next(WAIT));
        assertThat(error.get("code").asString()).isEqualTo("unsupported-version");
        assertThat(peer.closed.poll(WAIT, java.util.concurrent.TimeUnit.SECONDS)).isNotNull();
        assertThat(enforcedMaxIops()).isEqualTo(-1);
        assertThat(agent.state().appliedRevision()).isZero();
    }

    @Test
    void anOversizedFrameIsRefusedWithTooLarge() throws Exception {
        Peer peer = connectedPeer();

        peer.send("{\"type\":\"config\",\"protocolVersion\":1,\"padding\":\"" + "x".repeat(AgentMessages.MAX_CONFIG_FRAME_BYTES) + "\"}");

        JsonNode error = json(peer.next(WAIT));
        assertThat(error.get("code").asString()).isEqualTo("too-large");
        assertThat(peer.closed.poll(WAIT, java.util.concurrent.TimeUnit.SECONDS)).isNotNull();
        await().atMost(Duration.ofSeconds(WAIT)).untilAsserted(() -> assertThat(agent.state().lastError())
                .contains("over " + AgentMessages.MAX_CONFIG_FRAME_BYTES + " bytes"));
    }
}
