package io.weir.datanode;

import static io.weir.support.Bytes.MiB;
import static io.weir.support.Patience.PATIENCE;
import static io.weir.support.TestConfigs.config;
import static org.awaitility.Awaitility.await;

import io.weir.protocol.AgentMessage;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.ReplicationConfig;
import io.weir.agent.ServerCertificate;
import io.weir.protocol.TlsConfig;
import io.weir.support.TcpProxy;
import io.weir.support.TestConfigs;
import io.weir.support.TestPki;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Data nodes in this JVM that replicate one volume ({@code acme/db}) over real sockets on
 * 127.0.0.1, in clear unless a test gives them certificates, with configs applied as the control
 * plane would push them; each test's nodes are on files in its own directory and are closed after
 * it. {@link ReplicationTest} and {@link ReplicationRestartTest} build on it.
 */
abstract class ReplicationFixture {

    static final UUID A = TestConfigs.id("node-a");
    static final UUID B = TestConfigs.id("node-b");
    static final UUID C = TestConfigs.id("node-c");
    static final UUID VOLUME = TestConfigs.volumeId("acme", "db");
    static final long SIZE = 16 * MiB;

    @TempDir
    Path dir;

    private final List<DataNode> nodes = new ArrayList<>();

    @AfterEach
    void stop() {
        nodes.forEach(DataNode::close);
    }

    DataNode start(String name) throws Exception {
        return start(name, new InetSocketAddress("127.0.0.1", 0));
    }

    /** A node on its files in {@code name}, its replication listener on {@code replication} (a restart keeps its address). */
    DataNode start(String name, InetSocketAddress replication) throws Exception {
        return start(name, replication, false);
    }

    /** As {@link #start(String)}, in the config-file mode: no control plane. */
    DataNode startConfigFileOnly(String name) throws Exception {
        return start(name, new InetSocketAddress("127.0.0.1", 0), true);
    }

    DataNode start(String name, InetSocketAddress replication, boolean configFileOnly) throws Exception {
        return closedAfterTheTest(DataNode.builder().dataDir(dir.resolve(name)).listen(new InetSocketAddress("127.0.0.1", 0))
                .replicationListen(replication).workers(2).configFileOnly(configFileOnly).build());
    }

    /**
     * As {@link #start(String)}, its store slowed by {@code serviceTime} before each transfer (a
     * {@link StoreGate} holds one, a recorder notes their sizes).
     */
    DataNode startServing(String name, VolumeStore.ServiceTime serviceTime) throws Exception {
        return closedAfterTheTest(DataNode.builder().dataDir(dir.resolve(name)).listen(new InetSocketAddress("127.0.0.1", 0))
                .replicationListen(new InetSocketAddress("127.0.0.1", 0)).workers(2).serviceTime(serviceTime).build());
    }

    /**
     * As {@link #start(String)}, with one worker whose store {@code gate} can hold, and a batch's
     * replies held to its end however slow ({@link ReplyBatch}): the requests behind a held one
     * queue, and then run as one batch.
     */
    DataNode startGated(String name, StoreGate gate) throws Exception {
        return closedAfterTheTest(gated(name, gate).build());
    }

    /** What {@link #startGated} builds, for a test to add to. */
    DataNode.Builder gated(String name, StoreGate gate) {
        return DataNode.builder().dataDir(dir.resolve(name)).listen(new InetSocketAddress("127.0.0.1", 0))
                .replicationListen(new InetSocketAddress("127.0.0.1", 0)).workers(1).replyHold(java.time.Duration.ofSeconds(10))
                .serviceTime(gate);
    }

    /** Where node a keeps the volume's in-sync set ({@link SyncState}). */
    Path keptSetOfA() {
        return dir.resolve("a").resolve(VOLUME + SyncState.SUFFIX);
    }

    /** {@code n}, to be closed after the test. */
    DataNode closedAfterTheTest(DataNode n) {
        nodes.add(n);
        return n;
    }

    void stop(DataNode n) {
        n.close();
        nodes.remove(n);
    }

    /** The cluster CA, when the test gives its nodes certificates. */
    TestPki pki;

    /** The volume's size in the configs {@link #configFor} makes (a sparse file). */
    long volumeSize = SIZE;

    DesiredConfig configFor(UUID node, long revision, ReplicationConfig replication) {
        TestConfigs c = config().node(node).revision(revision).tenant("acme").volume("acme", "db", volumeSize)
                .replicated(replication);
        if (pki != null) {
            c.tls(new TlsConfig(List.of(TestPki.pem(pki.certificate())), List.of(), List.of()));
        }
        return c.build();
    }

    void certify(DataNode n, UUID named, long serial) {
        TestPki.Issued cert = pki.issueNode(named, serial);
        n.serverCertificate(new ServerCertificate(cert.keys().getPrivate(), cert.certificate(), List.of(pki.certificate())));
    }

    static ReplicationConfig.Copy copy(UUID node, DataNode n, boolean inSync) {
        return new ReplicationConfig.Copy(node, n == null ? null : n.replicationAddress(), inSync);
    }

    /** Applies one replication config to every node named. */
    void push(long revision, ReplicationConfig rc, Object... nodeAndId) throws Exception {
        for (int i = 0; i < nodeAndId.length; i += 2) {
            ((DataNode) nodeAndId[i]).apply(configFor((UUID) nodeAndId[i + 1], revision, rc));
        }
    }

    /**
     * Pushes a and b revision 1: the volume replicated at epoch 1, a its primary, both copies in
     * sync, a reaching b's copy through {@code toB} (which the test holds, cuts or freezes).
     */
    void pushThrough(TcpProxy toB, DataNode a, DataNode b) throws Exception {
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), new ReplicationConfig.Copy(B, toB.address(), true))),
                b, B, a, A);
        awaitAnnounced(a, B);
    }

    /**
     * Waits until primary {@code a} has told {@code copy} its epoch (a PING answered OK): its link
     * is up, and no PING of the driver's is left to cross what the test does next.
     */
    static void awaitAnnounced(DataNode a, UUID copy) {
        await().atMost(PATIENCE).until(() -> a.replication().volume(VOLUME).announcedTo(copy));
    }

    /** Nodes a (the primary) and b (its copy) of {@link #twoNodesInSync}, and the replication config they were pushed. */
    record TwoNodes(DataNode a, DataNode b, ReplicationConfig config) {
    }

    /**
     * Starts nodes a and b and pushes them revision 1: the volume replicated at epoch 1 and sync
     * sequence 0, a its primary, both copies in sync.
     */
    TwoNodes twoNodesInSync() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        ReplicationConfig rc = new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true)));
        push(1, rc, b, B, a, A);
        awaitAnnounced(a, B);
        return new TwoNodes(a, b, rc);
    }

    static byte[] onCopy(DataNode n, long offset, int length) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(length);
        n.replication().volume(VOLUME).store.read(offset, b);
        return b.array();
    }

    static AgentMessage.CopyStatus copyStatus(DataNode primary, UUID node) {
        return primary.replicationStatus().stream().flatMap(s -> s.copies().stream()).filter(c -> c.nodeId().equals(node))
                .findFirst().orElseThrow();
    }

    /** Client requests the node holds until it is confirmed as the volume's primary (or deposed). */
    static int held(DataNode n) {
        return n.replication().volume(VOLUME).hold.heldRequests();
    }

    static long sequence(DataNode primary) {
        return primary.replicationStatus().get(0).syncSequence();
    }

    /** Sends a write to {@code node} and waits until it is done here and waits for an echo. */
    static void writeWaitingForTheEcho(DataNode node, NbdTestClient client, int seed) throws Exception {
        client.request(Nbd.CMD_WRITE, 0, 1, 0, 4096, NbdServerTest.bytes(4096, seed));
        client.flushOut();
        await().atMost(PATIENCE).until(() -> node.replication().volume(VOLUME).forwarded.waitingWrites() == 1);
    }
}
