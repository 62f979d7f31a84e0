package io.weir.datanode;

import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.agent.QosAgent;
import io.weir.agent.support.ScriptedControlPlane;
import io.weir.agent.support.ScriptedControlPlane.Peer;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import io.weir.protocol.DesiredConfig;
import io.weir.scheduler.SchedulerConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data node with its embedded agent (wired as {@code weir datanode} wires it) against a scripted
 * control plane on 127.0.0.1, and real NBD clients: what the node acknowledges is what it serves.
 */
class DataNodeAgentTest {
    static final int WAIT = 30;

    @TempDir
    Path dir;
    ScriptedControlPlane controlPlane;
    DataNode node;
    QosAgent agent;
    final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void start() throws IOException {
        controlPlane = new ScriptedControlPlane();
        node = DataNode.builder().dataDir(dir.resolve("data")).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .build();
        agent = DataNodeCommand.agent(node, QosAgent.builder().controlPlane(URI.create("http://127.0.0.1:" + controlPlane.port()))
                .token("weir_node-token-of-the-test").stateDir(dir.resolve("agent-state")),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        agent.start();
    }

    @AfterEach
    void stop() {
        agent.close();
        node.close();
        controlPlane.close();
    }

    /** The next frame of the agent that is not a status report. */
    static AgentMessage next(Peer peer) throws InterruptedException {
        for (;;) {
            String frame = peer.next(WAIT);
            assertThat(frame).as("a frame from the agent").isNotNull();
            AgentMessage m = AgentMessages.decode(frame);
            if (!(m instanceof AgentMessage.NodeStatus)) {
                return m;
            }
        }
    }

    static void push(Peer peer, DesiredConfig config) {
        peer.send(AgentMessages.encode(new AgentMessage.ConfigPush(config)));
    }

    boolean enforces(String tenant, String volume) {
        String id = TestConfigs.volumeId(tenant, volume).toString();
        return node.executor().config().volumes().stream().map(SchedulerConfig.VolumeSpec::id).anyMatch(id::equals);
    }

    @Test
    void aSnapshotWhoseExportsCannotBeAppliedIsNackedWithTheReasonAndThePreviousOneStaysInForce() throws Exception {
        Peer peer = controlPlane.nextPeer(WAIT);
        assertThat(next(peer)).isInstanceOf(AgentMessage.Hello.class);
        push(peer, config().tenant("acme").volume("acme", "db1", 16 * MiB).revision(1).build());
        assertThat(next(peer)).isEqualTo(new AgentMessage.Ack(1));

        // the new volume's file cannot be created: a directory is in its way
        Files.createDirectories(dir.resolve("data").resolve(TestConfigs.volumeId("acme", "db2") + ".img"));
        push(peer, config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 16 * MiB).revision(2).build());

        AgentMessage answer = next(peer);
        assertThat(answer).isInstanceOfSatisfying(AgentMessage.Nack.class, nack -> {
            assertThat(nack.revision()).isEqualTo(2);
            assertThat(nack.reason()).contains(TestConfigs.volumeId("acme", "db2") + ".img");
        });
        assertThat(agent.state().appliedRevision()).isEqualTo(1);
        assertThat(agent.state().lastError()).contains("refused revision 2");
        assertThat(node.revision()).isEqualTo(1);
        assertThat(node.exports()).extracting(DataNode.ExportStatus::name).containsExactly("acme/db1");
        assertThat(enforces("acme", "db1")).isTrue();
        assertThat(enforces("acme", "db2")).as("the executor is back on revision 1").isFalse();
        try (NbdTestClient c = new NbdTestClient(node.listenAddress()).open("acme/db1")) {
            c.write(0, NbdServerTest.bytes(4096, 1));
            assertThat(c.read(0, 4096)).isEqualTo(NbdServerTest.bytes(4096, 1));
        }

        // once the way is clear, the same config is applied and acknowledged
        Files.delete(dir.resolve("data").resolve(TestConfigs.volumeId("acme", "db2") + ".img"));
        push(peer, config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 16 * MiB).revision(2).build());
        assertThat(next(peer)).isEqualTo(new AgentMessage.Ack(2));
        assertThat(node.exports()).extracting(DataNode.ExportStatus::name).containsExactly("acme/db1", "acme/db2");
        assertThat(enforces("acme", "db2")).isTrue();
    }

    /**
     * A snapshot the node refuses still takes away what it revokes: a revocation must not wait
     * for the rest of its snapshot to become applicable (a volume whose file cannot be made, a
     * replicated volume on a node without a replication listener), nor may the refused
     * snapshot's grants take effect. The node applied a refused snapshot's client certificates
     * only when it failed late, and none of its revocations when it failed early.
     */
    @Test
    void aRefusedSnapshotStillRevokesItsCertificatesAndGrantsNothing() throws Exception {
        io.weir.support.TestPki ca = io.weir.support.TestPki.create("weir test CA");
        io.weir.support.TestPki.Issued server = ca.issue("node", 0x99);
        node.serverCertificate(new io.weir.agent.ServerCertificate(server.keys().getPrivate(), server.certificate(),
                java.util.List.of(ca.certificate())));
        java.util.UUID acme = TestConfigs.id("tenant:acme");
        java.time.Instant later = java.time.Instant.now().plusSeconds(86_400);
        io.weir.protocol.ClientCertificateEntry first = new io.weir.protocol.ClientCertificateEntry("10", acme, later);
        io.weir.protocol.ClientCertificateEntry second = new io.weir.protocol.ClientCertificateEntry("20", acme, later);
        java.util.List<String> caPem = java.util.List.of(io.weir.support.TestPki.pem(ca.certificate()));
        Peer peer = controlPlane.nextPeer(WAIT);
        assertThat(next(peer)).isInstanceOf(AgentMessage.Hello.class);
        push(peer, config().tenant("acme").volume("acme", "db1", 16 * MiB).revision(1)
                .tls(new io.weir.protocol.TlsConfig(caPem, java.util.List.of(first), java.util.List.of())).build());
        assertThat(next(peer)).isEqualTo(new AgentMessage.Ack(1));

        try (NbdTestClient c = new NbdTestClient(node.listenAddress()).handshake()) {
            assertThat(c.startTls(ca.clientContext(ca.issue("client", 0x10))).type()).isEqualTo(Nbd.REP_ACK);
            c.negotiate("acme/db1");
            assertThat(c.read(0, 4096)).hasSize(4096);

            // revision 2 revokes the first certificate, issues a second, and adds a volume whose file cannot be made
            Files.createDirectories(dir.resolve("data").resolve(TestConfigs.volumeId("acme", "db2") + ".img"));
            push(peer, config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 16 * MiB).revision(2)
                    .tls(new io.weir.protocol.TlsConfig(caPem, java.util.List.of(second), java.util.List.of(first))).build());
            assertThat(next(peer)).isInstanceOf(AgentMessage.Nack.class);

            NbdTlsTest.awaitClosed(c); // the revoked certificate's connection
        }
        try (NbdTestClient c = new NbdTestClient(node.listenAddress()).handshake()) {
            assertThat(c.startTls(ca.clientContext(ca.issue("client", 0x20))).type()).isEqualTo(Nbd.REP_ACK);
            assertThat(c.option(Nbd.OPT_GO, NbdTestClient.goData("acme/db1")).get(0).type())
                    .as("the refused snapshot's new certificate").isEqualTo(Nbd.REP_ERR_UNKNOWN);
        }
    }

    @Test
    void stoppingRefusesNewClientsDrainsInFlightRequestsThenClosesTheAgentThenTheFiles() throws Exception {
        Peer peer = controlPlane.nextPeer(WAIT);
        assertThat(next(peer)).isInstanceOf(AgentMessage.Hello.class);
        push(peer, config().tenant("acme").volume("acme", "db1", 16 * MiB).revision(1).build());
        assertThat(next(peer)).isEqualTo(new AgentMessage.Ack(1));
        VolumeStore v = node.volume("acme/db1");
        InetSocketAddress address = node.listenAddress();
        try (NbdTestClient c = new NbdTestClient(address).open("acme/db1")) {
            Thread stopper;
            v.lockAll(); // holds a write on its worker: in flight when the node is told to stop
            try {
                c.request(Nbd.CMD_WRITE, 0, 9, 0, 4096, NbdServerTest.bytes(4096, 9));
                c.flushOut();
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(WAIT)).until(v::writersWaiting);
                stopper = new Thread(() -> DataNodeCommand.stop(node, agent, java.time.Duration.ofSeconds(WAIT),
                        new PrintStream(err, true, StandardCharsets.UTF_8)), "test-stop");
                stopper.start();
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(WAIT)).until(() -> refused(address));
                assertThat(peer.closed).as("the agent stays connected while requests drain").isEmpty();
                assertThat(v.filesClosed()).isFalse();
            } finally {
                v.unlockAll();
            }
            NbdTestClient.Reply reply = c.readReply();
            assertThat(reply.cookie()).isEqualTo(9);
            assertThat(reply.error()).as("the in-flight write is answered").isZero();
            assertThat(c.closedByServer()).isTrue();
            stopper.join(WAIT * 1000L);
            assertThat(stopper.isAlive()).isFalse();
        }
        assertThat(peer.closed.poll(WAIT, java.util.concurrent.TimeUnit.SECONDS)).as("then the agent closes").isNotNull();
        assertThat(v.filesClosed()).as("and last the files").isTrue();
    }

    /**
     * A planned stop reports the usage since the last report before the agent closes: with a
     * reporting interval of an hour, the writes clients made before the stop (and while the node
     * drained) were never reported, and no gap said so.
     */
    @Test
    void aPlannedStopReportsTheUsageSinceTheLastReport() throws Exception {
        Peer peer = controlPlane.nextPeer(WAIT);
        assertThat(next(peer)).isInstanceOf(AgentMessage.Hello.class);
        push(peer, config().tenant("acme").volume("acme", "db1", 16 * MiB).usageReportIntervalSeconds(3600).revision(1).build());
        assertThat(next(peer)).isEqualTo(new AgentMessage.Ack(1));
        try (NbdTestClient c = new NbdTestClient(node.listenAddress()).open("acme/db1")) {
            for (int i = 0; i < 5; i++) {
                c.write(i * 4096L, NbdServerTest.bytes(4096, i));
            }
        }
        DataNodeCommand.stop(node, agent, java.time.Duration.ofSeconds(WAIT), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(peer.closed.poll(WAIT, java.util.concurrent.TimeUnit.SECONDS)).as("the agent's close").isNotNull();
        long writes = 0;
        for (String frame; (frame = peer.next(0)) != null;) { // what the agent sent before its close
            if (AgentMessages.decode(frame) instanceof io.weir.protocol.UsageReport r) {
                writes += r.volumes().stream().filter(v -> v.volumeId().equals(TestConfigs.volumeId("acme", "db1")))
                        .mapToLong(io.weir.protocol.UsageReport.VolumeUsage::writeOps).sum();
            }
        }
        assertThat(writes).as("writes reported").isEqualTo(5);
    }

    @Test
    void aNodeRestartedWhileTheControlPlaneIsUnreachableServesTheVolumesOfItsCachedConfig() throws Exception {
        Peer peer = controlPlane.nextPeer(WAIT);
        assertThat(next(peer)).isInstanceOf(AgentMessage.Hello.class);
        push(peer, config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 32 * MiB).revision(3)
                .build());
        assertThat(next(peer)).isEqualTo(new AgentMessage.Ack(3));
        try (NbdTestClient c = new NbdTestClient(node.listenAddress()).open("acme/db2")) {
            c.write(5 * MiB, NbdServerTest.bytes(8192, 7));
            c.flush();
        }
        agent.close();
        node.close();

        // the same data dir and agent state dir; nothing listens where the control plane is now
        int closedPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        node = DataNode.builder().dataDir(dir.resolve("data")).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .build();
        agent = DataNodeCommand.agent(node, QosAgent.builder().controlPlane(URI.create("http://127.0.0.1:" + closedPort))
                .token("weir_node-token-of-the-test").stateDir(dir.resolve("agent-state")),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        agent.start();

        // start() returned: the cached revision is in force and its exports are served, no control plane asked
        assertThat(node.revision()).isEqualTo(3);
        assertThat(node.exports()).extracting(DataNode.ExportStatus::name, DataNode.ExportStatus::sizeBytes)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("acme/db1", 16 * MiB),
                        org.assertj.core.groups.Tuple.tuple("acme/db2", 32 * MiB));
        assertThat(enforces("acme", "db1")).isTrue();
        assertThat(enforces("acme", "db2")).isTrue();
        try (NbdTestClient c = new NbdTestClient(node.listenAddress()).open("acme/db2")) {
            assertThat(c.exportSize).isEqualTo(32 * MiB);
            assertThat(c.read(5 * MiB, 8192)).as("the data written before the restart").isEqualTo(NbdServerTest.bytes(8192, 7));
            c.write(0, NbdServerTest.bytes(4096, 8));
            assertThat(c.read(0, 4096)).isEqualTo(NbdServerTest.bytes(4096, 8));
        }
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(WAIT))
                .until(() -> agent.state().lastError() != null);
        assertThat(agent.state().connected()).isFalse();
        assertThat(agent.state().appliedRevision()).isEqualTo(3);
    }

    /** True if a new connection is refused or closed before any greeting. */
    static boolean refused(InetSocketAddress address) {
        try (java.net.Socket s = new java.net.Socket(address.getAddress(), address.getPort())) {
            s.setSoTimeout(WAIT * 1000);
            return s.getInputStream().read() < 0;
        } catch (IOException e) {
            return true;
        }
    }
}
