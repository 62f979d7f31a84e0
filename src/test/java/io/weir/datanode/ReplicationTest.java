package io.weir.datanode;

import static io.weir.support.Bytes.MiB;
import static io.weir.support.Patience.PATIENCE;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.datanode.NbdTestClient.Reply;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicated volumes between data nodes in this JVM, over real sockets on 127.0.0.1 (in clear:
 * these nodes have no cluster PKI), with configs applied as the control plane would push them.
 */
class ReplicationTest {

    private static final UUID A = TestConfigs.id("node-a");
    private static final UUID B = TestConfigs.id("node-b");
    private static final UUID C = TestConfigs.id("node-c");
    private static final UUID VOLUME = TestConfigs.volumeId("acme", "db");
    private static final long SIZE = 16 * MiB;

    @TempDir
    Path dir;

    private final List<DataNode> nodes = new ArrayList<>();

    @AfterEach
    void stop() {
        nodes.forEach(DataNode::close);
    }

    private DataNode start(String name) throws Exception {
        return start(name, new InetSocketAddress("127.0.0.1", 0));
    }

    /** A node on its files in {@code name}, its replication listener on {@code replication} (a restart keeps its address). */
    private DataNode start(String name, InetSocketAddress replication) throws Exception {
        return start(name, replication, false);
    }

    /** As {@link #start(String)}, in the config-file mode: no control plane. */
    private DataNode startConfigFileOnly(String name) throws Exception {
        return start(name, new InetSocketAddress("127.0.0.1", 0), true);
    }

    private DataNode start(String name, InetSocketAddress replication, boolean configFileOnly) throws Exception {
        DataNode n = DataNode.builder().dataDir(dir.resolve(name)).listen(new InetSocketAddress("127.0.0.1", 0))
                .replicationListen(replication).workers(2).configFileOnly(configFileOnly).build();
        nodes.add(n);
        return n;
    }

    /**
     * What a write in flight at a crash of the stopped node a leaves: 4 KiB at 3 MiB in its file,
     * never sent to a copy. Returns the bytes.
     */
    private byte[] aWriteInFlightAtAsStop(int seed) throws java.io.IOException {
        byte[] inFlight = NbdServerTest.bytes(4096, seed);
        try (var f = java.nio.channels.FileChannel.open(dir.resolve("a").resolve(VOLUME + ".img"),
                java.nio.file.StandardOpenOption.WRITE)) {
            f.write(ByteBuffer.wrap(inFlight), 3 * MiB);
        }
        return inFlight;
    }

    /** Where node a keeps the volume's in-sync set ({@link SyncState}). */
    private Path keptSetOfA() {
        return dir.resolve("a").resolve(VOLUME + SyncState.SUFFIX);
    }

    private void stop(DataNode n) {
        n.close();
        nodes.remove(n);
    }

    /** The cluster CA, when the test gives its nodes certificates. */
    private TestPki pki;

    private DesiredConfig configFor(UUID node, long revision, ReplicationConfig replication) {
        TestConfigs c = config().node(node).revision(revision).tenant("acme").volume("acme", "db", SIZE)
                .replicated(replication);
        if (pki != null) {
            c.tls(new TlsConfig(List.of(TestPki.pem(pki.certificate())), List.of(), List.of()));
        }
        return c.build();
    }

    private void certify(DataNode n, UUID named, long serial) {
        TestPki.Issued cert = pki.issueNode(named, serial);
        n.serverCertificate(new ServerCertificate(cert.keys().getPrivate(), cert.certificate(), List.of(pki.certificate())));
    }

    private static ReplicationConfig.Copy copy(UUID node, DataNode n, boolean inSync) {
        return new ReplicationConfig.Copy(node, n == null ? null : n.replicationAddress(), inSync);
    }

    /** Applies one replication config to every node named. */
    private void push(long revision, ReplicationConfig rc, Object... nodeAndId) throws Exception {
        for (int i = 0; i < nodeAndId.length; i += 2) {
            ((DataNode) nodeAndId[i]).apply(configFor((UUID) nodeAndId[i + 1], revision, rc));
        }
    }

    /** Nodes a (the primary) and b (its copy) of {@link #twoNodesInSync}, and the replication config they were pushed. */
    private record TwoNodes(DataNode a, DataNode b, ReplicationConfig config) {
    }

    /**
     * Starts nodes a and b and pushes them revision 1: the volume replicated at epoch 1 and sync
     * sequence 0, a its primary, both copies in sync.
     */
    private TwoNodes twoNodesInSync() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        ReplicationConfig rc = new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true)));
        push(1, rc, b, B, a, A);
        return new TwoNodes(a, b, rc);
    }

    /** Nodes a (the primary), b and c of {@link #threeNodesInSync}, and the replication config they were pushed. */
    private record ThreeNodes(DataNode a, DataNode b, DataNode c, ReplicationConfig config) {
    }

    /** As {@link #twoNodesInSync}, with a third node c, in sync too. */
    private ThreeNodes threeNodesInSync() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        DataNode c = start("c");
        ReplicationConfig rc = new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true), copy(C, c, true)));
        push(1, rc, b, B, c, C, a, A);
        return new ThreeNodes(a, b, c, rc);
    }

    /**
     * Starts nodes a and b, pushes them revision 1 with b a new copy (out of sync) of a, and waits
     * until b has been copied whole and joined the in-sync set (sequence 1): a reported it, and no
     * config echoed it. The config returned is the one pushed, the one a keeps.
     */
    private TwoNodes copyJoinedUnechoed() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        ReplicationConfig rc = new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, false)));
        push(1, rc, b, B, a, A);
        await().atMost(PATIENCE).until(() -> copyStatus(a, B).state() == AgentMessage.CopyState.inSync);
        assertThat(sequence(a)).isEqualTo(1);
        return new TwoNodes(a, b, rc);
    }

    private static byte[] onCopy(DataNode n, long offset, int length) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(length);
        n.replication().volume(VOLUME).store.read(offset, b);
        return b.array();
    }

    private static AgentMessage.CopyStatus copyStatus(DataNode primary, UUID node) {
        return primary.replicationStatus().stream().flatMap(s -> s.copies().stream()).filter(c -> c.nodeId().equals(node))
                .findFirst().orElseThrow();
    }

    /**
     * The primary a takes a write and stops; the control plane promotes b (epoch 2, sync sequence
     * {@code sequence}, a out of sync), and b takes a write that a never sees.
     */
    private void bPromotedWhileAIsDown(DataNode a, DataNode b, long sequence) throws Exception {
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.write(0, NbdServerTest.bytes(4096, 14));
        }
        stop(a);
        b.apply(configFor(B, 2, new ReplicationConfig(2, B, sequence, List.of(copy(B, b, true), copy(A, null, false)))));
        try (NbdTestClient client = new NbdTestClient(b.listenAddress()).open("acme/db")) {
            client.write(0, NbdServerTest.bytes(4096, 15)); // the new primary takes a write
        }
    }

    /** Client requests the node holds until it is confirmed as the volume's primary (or deposed). */
    private static int held(DataNode n) {
        return n.replication().volume(VOLUME).heldRequests();
    }

    private static long sequence(DataNode primary) {
        return primary.replicationStatus().get(0).syncSequence();
    }

    @Test
    void aWriteIsOnTheInSyncCopyWhenItIsAcknowledgedAndOnlyThePrimaryServesTheExport() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode b = n.b();
        assertThat(b.exports()).as("a copy that is not the primary serves no export").isEmpty();

        byte[] data = NbdServerTest.bytes((int) MiB, 7);
        byte[] small = NbdServerTest.bytes(4096, 9);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            c.write(2 * MiB, data);
            assertThat(onCopy(b, 2 * MiB, data.length)).as("the copy holds the write once it is acknowledged").isEqualTo(data);
            Reply fua = c.call(Nbd.CMD_WRITE, Nbd.CMD_FLAG_FUA, 5 * MiB + 4096, small.length, small);
            assertThat(fua.error()).isZero();
            assertThat(onCopy(b, 5 * MiB + 4096, small.length)).isEqualTo(small);
            assertThat(c.call(Nbd.CMD_WRITE_ZEROES, 0, 2 * MiB, 65536, null).error()).isZero();
            assertThat(onCopy(b, 2 * MiB, 65536)).isEqualTo(new byte[65536]);
            c.flush();
        }
        assertThat(copyStatus(a, B).state()).isEqualTo(AgentMessage.CopyState.inSync);
        assertThat(sequence(a)).as("nothing left the in-sync set").isZero();
    }

    @Test
    void aDeposedPrimaryAcknowledgesNoWriteOnceTheNewPrimaryHasAHigherEpoch() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode b = n.b();
        byte[] before = NbdServerTest.bytes(4096, 1);
        byte[] after = NbdServerTest.bytes(4096, 2);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            c.write(0, before);
            // the control plane promotes b (a's agent is gone past its lease); a has not heard of it
            b.apply(configFor(B, 2, new ReplicationConfig(2, B, 1, List.of(copy(B, b, true), copy(A, a, false)))));
            Reply refused = c.call(Nbd.CMD_WRITE, 0, 0, after.length, after);
            assertThat(refused.error()).as("a write to the deposed primary").isEqualTo(Nbd.ESHUTDOWN);
            assertThat(c.call(Nbd.CMD_READ, 0, 0, 4096, null).error()).as("and a read after it").isEqualTo(Nbd.ESHUTDOWN);
        }
        try (NbdTestClient c = new NbdTestClient(b.listenAddress()).open("acme/db")) {
            assertThat(c.read(0, 4096)).as("the new primary has the acknowledged write, not the refused one")
                    .isEqualTo(before);
        }
    }

    @Test
    void aCopyThatFailsLeavesTheInSyncSetOnlyOnceAConfigEchoesItAndResyncsWhenItReturns() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode b = n.b();
        byte[] first = NbdServerTest.bytes((int) MiB, 3);
        byte[] second = NbdServerTest.bytes(8192, 4);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            c.write(0, first);
            b.close();
            nodes.remove(b);

            CompletableFuture<Reply> held = CompletableFuture.supplyAsync(() -> {
                try {
                    return c.call(Nbd.CMD_WRITE, 0, 8 * MiB, second.length, second);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            await().atMost(PATIENCE).until(() -> sequence(a) == 1);
            assertThat(copyStatus(a, B).state()).isEqualTo(AgentMessage.CopyState.outOfSync);
            assertThat(held).as("the write waits while the control plane may still promote the copy that lacks it")
                    .isNotDone();

            // the control plane stores the primary's report and echoes its sequence
            a.apply(configFor(A, 2, new ReplicationConfig(1, A, 1, List.of(copy(A, a, true), copy(B, null, false)))));
            assertThat(held.get().error()).isZero();
            c.write(9 * MiB, second); // degraded: answered at once

            DataNode back = start("b"); // same data dir, a new address
            ReplicationConfig returned = new ReplicationConfig(1, A, 1, List.of(copy(A, a, true), copy(B, back, false)));
            push(3, returned, back, B, a, A);
            await().atMost(PATIENCE).until(() -> copyStatus(a, B).state() == AgentMessage.CopyState.inSync);
            assertThat(sequence(a)).as("the copy rejoined").isEqualTo(2);
            assertThat(onCopy(back, 0, first.length)).isEqualTo(first);
            assertThat(onCopy(back, 8 * MiB, second.length)).isEqualTo(second);
            assertThat(onCopy(back, 9 * MiB, second.length)).isEqualTo(second);
        }
    }

    @Test
    void aNewCopyIsCopiedWholeByTheReplicationTaskWhileClientsWrite() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode b = n.b();
        DataNode c = start("c");
        byte[] data = NbdServerTest.bytes((int) (4 * MiB), 5);
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.write(MiB, data);
            push(2, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true), copy(C, c, false))), c, C,
                    b, B, a, A);
            byte[] during = NbdServerTest.bytes(65536, 6);
            for (int i = 0; i < 64; i++) { // writes while the copy runs, some into regions on their way
                client.write(MiB + i * 65536L, during);
            }
            await().atMost(PATIENCE).until(() -> copyStatus(a, C).state() == AgentMessage.CopyState.inSync);
            byte[] expected = client.read(0, (int) (8 * MiB));
            assertThat(onCopy(c, 0, (int) (8 * MiB))).isEqualTo(expected);
            assertThat(onCopy(b, 0, (int) (8 * MiB))).isEqualTo(expected);
        }
        assertThat(a.executor().snapshot().tasks().get(Replication.TASK).ops()).as("the copy ran as the replication task")
                .isPositive();
    }

    @Test
    void aNewCopyIsStillCopiedWholeAfterAConfigWithoutTheReplicationTaskIsApplied() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode b = n.b();
        DataNode c = start("c");
        assertThat(a.executor().config().tasks()).as("the default tasks").anyMatch(t -> t.name().equals(Replication.TASK));
        byte[] data = NbdServerTest.bytes((int) (4 * MiB), 16);
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.write(MiB, data);
            ReplicationConfig withC = new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true),
                    copy(C, c, false)));
            push(2, withC, c, C, b, B);
            a.apply(config().node(A).revision(2).tenant("acme").volume("acme", "db", SIZE).replicated(withC)
                    .task("foreground", 60).task("flush", 15).task("gc", 10).task("scrub", 5).build());
            assertThat(a.executor().config().tasks()).noneMatch(t -> t.name().equals(Replication.TASK));
            await().atMost(PATIENCE).until(() -> copyStatus(a, C).state() == AgentMessage.CopyState.inSync);
            byte[] expected = client.read(0, (int) (8 * MiB));
            assertThat(onCopy(c, 0, (int) (8 * MiB))).as("copied by the driver, with no task to run it").isEqualTo(expected);
        }
    }

    @Test
    void withNodeCertificatesTheCopiesSpeakMutualTlsAndTurnAwayAnyoneElse() throws Exception {
        pki = TestPki.create("weir test CA");
        DataNode a = start("a");
        DataNode b = start("b");
        certify(a, A, 0x41);
        certify(b, B, 0x42);
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        byte[] data = NbdServerTest.bytes(65536, 8);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            c.write(0, data);
        }
        assertThat(onCopy(b, 0, data.length)).as("sent over TLS between the two node certificates").isEqualTo(data);
        assertThat(sequence(a)).isZero();

        // a peer in clear, with a well-formed request of the current epoch, gets no reply and writes nothing
        String address = b.replicationAddress();
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", Integer.parseInt(address.substring(address.lastIndexOf(':') + 1)))) {
            s.setSoTimeout((int) PATIENCE.toMillis());
            ByteBuffer frame = ByteBuffer.allocate(ReplicationWire.REQUEST_BYTES + 4096);
            new ReplicationWire.Request(ReplicationWire.WRITE, (byte) 0, 1, VOLUME, 1, 0, 4096).encode(frame);
            frame.limit(frame.capacity());
            s.getOutputStream().write(frame.array());
            int first;
            try {
                first = s.getInputStream().read();
            } catch (java.net.SocketException reset) {
                first = -1;
            }
            assertThat(first).as("the connection is closed (or reset) unanswered").isEqualTo(-1);
        }
        assertThat(onCopy(b, 0, data.length)).isEqualTo(data);
    }

    @Test
    void aPrimaryRefusesACopyWhoseCertificateNamesAnotherNode() throws Exception {
        pki = TestPki.create("weir test CA");
        DataNode a = start("a");
        DataNode b = start("b");
        certify(a, A, 0x41);
        certify(b, C, 0x43); // b's certificate says it is node c
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            c.request(Nbd.CMD_WRITE, 0, 1, 0, 4096, new byte[4096]);
            c.flushOut();
            await().atMost(PATIENCE).until(() -> sequence(a) == 1);
            assertThat(copyStatus(a, B).state()).as("the impostor left the in-sync set").isEqualTo(AgentMessage.CopyState.outOfSync);
        }
        assertThat(onCopy(b, 0, 4096)).isEqualTo(new byte[4096]);
    }

    @Test
    void aPrimaryThatRestartsCopiesItsVolumeAgainSoAWriteInFlightAtItsStopLeavesNoDifference() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode b = n.b();
        ReplicationConfig rc = n.config();
        byte[] acknowledged = NbdServerTest.bytes(65536, 11);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            c.write(MiB, acknowledged);
        }
        a.close();
        nodes.remove(a);
        byte[] inFlight = aWriteInFlightAtAsStop(12);
        DataNode again = start("a");
        again.apply(configFor(A, 2, rc));
        await().atMost(PATIENCE).until(() -> java.util.Arrays.equals(onCopy(b, 3 * MiB, 4096), inFlight));
        assertThat(onCopy(b, MiB, acknowledged.length)).isEqualTo(acknowledged);
        assertThat(copyStatus(again, B).state()).as("the copy stayed in sync").isEqualTo(AgentMessage.CopyState.inSync);
        assertThat(sequence(again)).isZero();
    }

    /**
     * A client of a restarted primary waits, as for a slow disk, rather than failing: its request
     * is answered once the node is sure it still is the primary, and never with what it held before.
     */
    @Test
    void aRestartedPrimaryHoldsItsClientsRequestsUntilACopyOrTheControlPlaneConfirmsItIsStillThePrimary() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode b = n.b();
        ReplicationConfig rc = n.config();
        byte[] data = NbdServerTest.bytes(4096, 13);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            c.write(0, data);
        }
        a.close();
        b.close();
        nodes.remove(a);
        nodes.remove(b);

        // a restarts on the config it kept; its copy is unreachable, so a promotion cannot be ruled out
        DataNode again = start("a");
        again.apply(configFor(A, 1, rc));
        try (NbdTestClient c = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            c.request(Nbd.CMD_READ, 0, 1, 0, 4096, null);
            c.flushOut();
            await().atMost(PATIENCE).until(() -> held(again) == 1); // a read before it is confirmed
            await().atMost(PATIENCE).until(() -> sequence(again) == 1); // the unreachable copy left the set
            assertThat(held(again)).as("still held: only the control plane's echo can confirm it now").isEqualTo(1);
            // the control plane takes the report of the primary at the current epoch and echoes it
            again.apply(configFor(A, 2, new ReplicationConfig(1, A, 1, List.of(copy(A, again, true), copy(B, null, false)))));
            NbdTestClient.Reply r = c.readReply();
            assertThat(r.error()).as("confirmed: it serves the read it held").isZero();
            assertThat(r.data()).isEqualTo(data);
            assertThat(held(again)).isZero();
        }
    }

    @Test
    void aRestartedPrimaryWhoseCopyWasPromotedMeanwhileIsDeposedBeforeItServesARead() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode b = n.b();
        ReplicationConfig rc = n.config();
        bPromotedWhileAIsDown(a, b, 1);

        DataNode again = start("a"); // on the config it kept: primary at epoch 1
        again.apply(configFor(A, 1, rc));
        try (NbdTestClient c = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            assertThat(c.call(Nbd.CMD_READ, 0, 0, 4096, null).error()).as("the old data is never served")
                    .isEqualTo(Nbd.ESHUTDOWN);
        }
        await().atMost(PATIENCE).until(() -> again.replicationStatus().isEmpty()); // deposed by b's answer
    }

    /**
     * With two copies in sync, either may have been promoted while the primary was down: one that
     * answers the old epoch does not rule out the other. Here b was promoted (c not yet told), took
     * a write, and was lost; c alone must not confirm the restarted a.
     */
    @Test
    void aRestartedPrimaryWithTwoCopiesInSyncIsNotConfirmedByOneOfThem() throws Exception {
        ThreeNodes n = threeNodesInSync();
        DataNode a = n.a();
        DataNode b = n.b();
        DataNode c = n.c();
        ReplicationConfig rc = n.config();
        bPromotedWhileAIsDown(a, b, 1); // c not yet told
        stop(b);

        DataNode again = start("a"); // on the config it kept: primary at epoch 1, b and c in sync
        again.apply(configFor(A, 1, rc));
        await().atMost(PATIENCE).until(() -> again.replication().volume(VOLUME).announcedTo(C)); // c answered epoch 1
        try (NbdTestClient client = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            client.request(Nbd.CMD_READ, 0, 1, 0, 4096, null);
            client.flushOut();
            await().atMost(PATIENCE).until(() -> held(again) == 1); // c alone does not confirm it
            // the control plane, back, tells it of the epoch it promoted b at
            again.apply(configFor(A, 2, new ReplicationConfig(2, B, 1, List.of(copy(B, null, true), copy(A, again, false)))));
            assertThat(client.readReply().error()).as("the old data is never served").isEqualTo(Nbd.ESHUTDOWN);
        }
    }

    /**
     * A copy that joined the in-sync set after the last config its primary kept: the control
     * plane took the primary's report of it (so could promote it) but the echo never reached the
     * primary before it stopped. The restarted primary must ask that copy too before it serves.
     */
    @Test
    void aRestartedPrimaryAlsoAsksTheCopiesItReportedInSyncAfterTheConfigItKept() throws Exception {
        TwoNodes n = copyJoinedUnechoed();
        DataNode a = n.a();
        DataNode b = n.b();
        ReplicationConfig kept = n.config();
        // the control plane took a's report (sequence 1: b in sync), and b is promoted
        bPromotedWhileAIsDown(a, b, 2);

        DataNode again = start("a");
        again.apply(configFor(A, 1, kept)); // the config it kept: b out of sync
        try (NbdTestClient client = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            assertThat(client.call(Nbd.CMD_READ, 0, 0, 4096, null).error()).as("the old data is never served")
                    .isEqualTo(Nbd.ESHUTDOWN);
        }
        await().atMost(PATIENCE).until(() -> again.replicationStatus().isEmpty()); // deposed by b's answer
    }

    /**
     * The copy it reported in sync after the config it kept is in sync again after a restart, as
     * the control plane may hold it: not copied as if out of sync, which would let a write it
     * misses be acknowledged without first taking it out of the set.
     */
    @Test
    void aRestartedPrimaryKeepsInSyncTheCopiesItReportedInSyncAfterTheConfigItKept() throws Exception {
        TwoNodes n = copyJoinedUnechoed();
        DataNode a = n.a();
        ReplicationConfig kept = n.config();
        byte[] data = NbdServerTest.bytes(4096, 23);
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.write(0, data);
        }
        stop(a);

        DataNode again = start("a");
        again.apply(configFor(A, 1, kept)); // the config it kept: b out of sync
        try (NbdTestClient client = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            assertThat(client.read(0, 4096)).as("confirmed by b").isEqualTo(data);
        }
        assertThat(copyStatus(again, B).state()).isEqualTo(AgentMessage.CopyState.inSync);
        assertThat(sequence(again)).isEqualTo(1);
    }

    /** A client that gives up on a held request gets its buffers back at once, not when the node is confirmed. */
    @Test
    void theRequestsAConnectionHadHeldAreLetGoWhenItCloses() throws Exception {
        TwoNodes n = twoNodesInSync();
        stop(n.a());
        stop(n.b());
        BufferPool pool = new BufferPool(BufferPool.defaultBudget());
        DataNode again = DataNode.builder().dataDir(dir.resolve("a")).listen(new InetSocketAddress("127.0.0.1", 0))
                .replicationListen(new InetSocketAddress("127.0.0.1", 0)).workers(2).bufferPool(pool).build();
        nodes.add(again);
        again.apply(configFor(A, 1, n.config())); // its copy unreachable: unconfirmed
        NbdTestClient client = new NbdTestClient(again.listenAddress()).open("acme/db");
        client.request(Nbd.CMD_WRITE, 0, 1, 0, 65536, new byte[65536]);
        client.flushOut();
        await().atMost(PATIENCE).until(() -> held(again) == 1);
        assertThat(pool.held()).as("its payload").isGreaterThanOrEqualTo(65536);
        client.close();
        // its only client gone, the node holds no buffer (an option reply may still be on its way
        // back to the pool when the payload is taken, so nothing less is compared)
        await().atMost(PATIENCE).until(() -> held(again) == 0 && pool.held() == 0);
    }

    /**
     * With its kept in-sync set unreadable, a restarted primary cannot tell which copies the
     * control plane holds in sync: it asks every copy, and, with one out of sync in its config
     * (so perhaps held in sync, and missing writes here), acknowledges a write only once the
     * control plane has echoed its report.
     */
    @Test
    void aRestartedPrimaryWhoseKeptInSyncSetIsUnreadableAcknowledgesWritesOnlyOnceTheControlPlaneEchoesItsReport() throws Exception {
        TwoNodes n = copyJoinedUnechoed();
        DataNode again = restartWithTheKeptSetUnreadable(n.a(), n.config());
        try (NbdTestClient client = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            assertThat(client.call(Nbd.CMD_READ, 0, 0, 4096, null).error()).as("confirmed by b").isZero();
            writeWaitingForTheEcho(again, client, 24);
            long reported = sequence(again);
            assertThat(reported).as("above the config's").isPositive();
            again.apply(configFor(A, 2, new ReplicationConfig(1, A, reported, List.of(copy(A, again, true),
                    copy(B, n.b(), copyStatus(again, B).state() == AgentMessage.CopyState.inSync)))));
            assertThat(client.readReply().error()).as("acknowledged once echoed").isZero();
        }
    }

    /**
     * With its kept in-sync set unreadable, the config it kept may be older than the control
     * plane's set: a copy in sync there may have left the set since, and lack acknowledged writes.
     * So no copy counts as in sync before it has been copied whole (the node would otherwise report
     * it in sync above the control plane's sequence, and it could be promoted).
     */
    @Test
    void aRestartedPrimaryWhoseKeptInSyncSetIsUnreadableCopiesEveryCopyWholeBeforeItCountsAsInSync() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode again = restartWithTheKeptSetUnreadable(n.a(), n.config());
        bIsCopiedWholeAndRejoinsAt(again, 2); // above the sequence it restarted on
    }

    /** b is out of sync on {@code a} now, is copied whole, and rejoins the in-sync set at {@code sequence}. */
    private static void bIsCopiedWholeAndRejoinsAt(DataNode a, long sequence) {
        assertThat(copyStatus(a, B).state()).isNotEqualTo(AgentMessage.CopyState.inSync);
        await().atMost(PATIENCE).until(() -> copyStatus(a, B).state() == AgentMessage.CopyState.inSync);
        assertThat(sequence(a)).as("rejoined").isEqualTo(sequence);
    }

    /**
     * A restarted primary whose last report the control plane took, at a sync sequence above the
     * config it kept, and whose copy is unreachable: its report must rise above the control
     * plane's sequence, or the echo that confirms it never comes.
     */
    @Test
    void aRestartedPrimaryReportsASequenceAboveTheOnesItReportedBeforeItStopped() throws Exception {
        TwoNodes n = copyJoinedUnechoed();
        stop(n.a());
        stop(n.b());
        ReplicationConfig kept = n.config();

        DataNode again = start("a");
        again.apply(configFor(A, 1, kept));
        try (NbdTestClient client = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            client.request(Nbd.CMD_READ, 0, 1, 0, 4096, null);
            client.flushOut();
            await().atMost(PATIENCE).until(() -> held(again) == 1); // b may have been promoted
            await().atMost(PATIENCE).until(() -> sequence(again) > 1); // b unreachable: it leaves the set again
            long reported = sequence(again);
            again.apply(configFor(A, 2, new ReplicationConfig(1, A, reported, List.of(copy(A, again, true),
                    copy(B, null, false)))));
            assertThat(client.readReply().error()).as("the echo confirmed it").isZero();
        }
    }

    /**
     * The control plane down: a restarted primary whose copy was not reachable at first drops it
     * from the in-sync set (for the control plane's echo to confirm it), but the copy answering its
     * epoch later confirms it as well, since it was in sync and so the only one that could have been
     * promoted.
     */
    @Test
    void aRestartedPrimaryIsConfirmedByItsCopyAnsweringAfterItWasDroppedAsUnreachable() throws Exception {
        TwoNodes n = twoNodesInSync();
        byte[] data = NbdServerTest.bytes(4096, 18);
        try (NbdTestClient client = new NbdTestClient(n.a().listenAddress()).open("acme/db")) {
            client.write(0, data);
        }
        InetSocketAddress copyAt = HostPort.parse(n.b().replicationAddress());
        stop(n.a());
        stop(n.b());

        DataNode again = start("a");
        again.apply(configFor(A, 1, n.config()));
        await().atMost(PATIENCE).until(() -> sequence(again) == 1); // the unreachable copy left the set
        DataNode copyAgain = start("b", copyAt);
        copyAgain.apply(configFor(B, 1, n.config()));
        try (NbdTestClient client = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            await().atMost(PATIENCE).until(() -> client.call(Nbd.CMD_READ, 0, 0, 4096, null).error() == 0);
            assertThat(client.read(0, 4096)).as("confirmed by the copy, no control plane needed").isEqualTo(data);
        }
    }

    /**
     * b joined the in-sync set after the config a kept (a reported it, unechoed) and then left it
     * (a reported that too): the control plane may hold either report, so b could have been
     * promoted, and the restarted a must ask b although neither its config nor its last report
     * has b in sync.
     */
    @Test
    void aRestartedPrimaryAsksACopyItReportedInSyncSinceTheConfigItKeptEvenIfTheCopyLeftAgain() throws Exception {
        TwoNodes n = copyJoinedUnechoed();
        DataNode a = n.a();
        InetSocketAddress copyAt = HostPort.parse(n.b().replicationAddress());
        stop(n.b());
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.request(Nbd.CMD_WRITE, 0, 1, 0, 4096, NbdServerTest.bytes(4096, 25));
            client.flushOut();
            await().atMost(PATIENCE).until(() -> sequence(a) == 2); // b left the set; the write waits for the echo
        }
        stop(a);
        // the control plane took the report of sequence 1 (b in sync) and promotes b
        DataNode b = start("b", copyAt);
        b.apply(configFor(B, 2, new ReplicationConfig(2, B, 1, List.of(copy(B, b, true), copy(A, null, false)))));

        DataNode again = start("a");
        again.apply(configFor(A, 1, n.config())); // the config it kept: b out of sync
        try (NbdTestClient client = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            assertThat(client.call(Nbd.CMD_READ, 0, 0, 4096, null).error()).as("the old data is never served")
                    .isEqualTo(Nbd.ESHUTDOWN);
        }
    }

    /**
     * Restarts a on {@code kept} with its kept in-sync set unreadable: it cannot tell which copies
     * the control plane holds in sync.
     */
    private DataNode restartWithTheKeptSetUnreadable(DataNode a, ReplicationConfig kept) throws Exception {
        stop(a);
        Files.writeString(keptSetOfA(), "epoch=1\n");
        DataNode again = start("a");
        again.apply(configFor(A, 1, kept));
        return again;
    }

    /** Sends a write to {@code node} and waits until it is done here and waits for an echo. */
    private static void writeWaitingForTheEcho(DataNode node, NbdTestClient client, int seed) throws Exception {
        client.request(Nbd.CMD_WRITE, 0, 1, 0, 4096, NbdServerTest.bytes(4096, seed));
        client.flushOut();
        await().atMost(PATIENCE).until(() -> node.replication().volume(VOLUME).waitingWrites() == 1);
    }

    /**
     * Restarted with its kept set unreadable, and b out of sync in the config it kept (and
     * unreachable), a cannot tell whether the control plane holds b in sync. Restarted again before
     * any echo, it still cannot: what it kept at the first restart says so, and it serves only once
     * the control plane has echoed its report.
     */
    @Test
    void aRestartedPrimaryThatCouldNotTellTheInSyncSetStillWaitsForTheEchoAfterASecondRestart() throws Exception {
        TwoNodes n = copyJoinedUnechoed();
        stop(n.b());
        DataNode once = restartWithTheKeptSetUnreadable(n.a(), n.config());
        await().atMost(PATIENCE).until(() -> sequence(once) == 2); // b unreachable: left the set it was not in
        stop(once);
        DataNode twice = start("a");
        twice.apply(configFor(A, 1, n.config()));
        aWriteIsHeldUntilTheEchoOf(twice, 3, 27);
    }

    /**
     * A write to the restarted {@code a} is held (b, which may have been promoted, is unreachable)
     * until the control plane echoes {@code sequence} (b out of sync), the one a reports.
     */
    private void aWriteIsHeldUntilTheEchoOf(DataNode a, long sequence, int seed) throws Exception {
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.request(Nbd.CMD_WRITE, 0, 1, 0, 4096, NbdServerTest.bytes(4096, seed));
            client.flushOut();
            await().atMost(PATIENCE).until(() -> held(a) == 1);
            await().atMost(PATIENCE).until(() -> sequence(a) == sequence);
            a.apply(configFor(A, 2, new ReplicationConfig(1, A, sequence, List.of(copy(A, a, true), copy(B, null, false)))));
            assertThat(client.readReply().error()).as("acknowledged once echoed").isZero();
        }
    }

    /**
     * Before a stopped, the control plane took its report of sequence 2 with b in sync (b left and
     * joined again after the config a kept). Restarted with its kept set unreadable on a config of
     * sequence 0 (b out of sync), b unreachable, a reports b out of sync at sequence 2 too; the
     * control plane keeps what it holds and echoes sequence 2 with b in sync. That echo is not of
     * a's report: a write b lacks must wait until a's own set is echoed.
     */
    @Test
    void anEchoOfAnotherInSyncSetAtTheNodesSequenceReleasesNoWrite() throws Exception {
        TwoNodes n = copyJoinedUnechoed();
        stop(n.b());
        DataNode again = restartWithTheKeptSetUnreadable(n.a(), n.config());
        await().atMost(PATIENCE).until(() -> sequence(again) == 2); // b unreachable: only an echo confirms a
        try (NbdTestClient client = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            client.request(Nbd.CMD_WRITE, 0, 1, 0, 4096, NbdServerTest.bytes(4096, 28));
            client.flushOut();
            await().atMost(PATIENCE).until(() -> held(again) == 1);
            again.apply(configFor(A, 2, new ReplicationConfig(1, A, 2, List.of(copy(A, again, true), copy(B, null, true)))));
            assertThat(sequence(again)).as("its set, reported above the control plane's").isEqualTo(3);
            await().atMost(PATIENCE).until(() -> held(again) + again.replication().volume(VOLUME).waitingWrites() == 1);
            again.apply(configFor(A, 3, new ReplicationConfig(1, A, 3, List.of(copy(A, again, true), copy(B, null, false)))));
            assertThat(client.readReply().error()).as("acknowledged once its own set is echoed").isZero();
        }
    }

    /**
     * Rule 8 for a write already on its way: b has made it and its OK is on the wire when a config
     * at a's sequence holds b out of sync. b leaves the set and a reports above; the write, though
     * every copy answered OK, is acknowledged only once that report is echoed (the control plane
     * could otherwise promote from a set that does not hold it, unknown to a).
     */
    @Test
    void aWriteInFlightWhenAConfigHoldsItsCopyOutOfSyncWaitsForTheEchoOfTheNewSet() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        try (TcpProxy toB = new TcpProxy(HostPort.parse(b.replicationAddress()).getPort())) {
            ReplicationConfig.Copy bViaProxy = new ReplicationConfig.Copy(B, toB.address(), true);
            push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), bViaProxy)), b, B, a, A);
            try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
                client.write(0, NbdServerTest.bytes(4096, 40)); // the link to b is up
                toB.holdDownstream();
                byte[] data = NbdServerTest.bytes(4096, 41);
                client.request(Nbd.CMD_WRITE, 0, 1, 0, 4096, data);
                client.flushOut();
                await().atMost(PATIENCE).until(() -> java.util.Arrays.equals(onCopy(b, 0, data.length), data));
                await().atMost(PATIENCE).until(() -> toB.heldDownstreamBytes() > 0); // b made it; its OK is held back

                a.apply(configFor(A, 2, new ReplicationConfig(1, A, 0,
                        List.of(copy(A, a, true), new ReplicationConfig.Copy(B, toB.address(), false)))));
                assertThat(sequence(a)).as("its set, reported above the control plane's").isOne();
                toB.releaseDownstream();
                await().atMost(PATIENCE).until(() -> a.replication().volume(VOLUME).waitingWrites() == 1);

                a.apply(configFor(A, 3, new ReplicationConfig(1, A, 1,
                        List.of(copy(A, a, true), new ReplicationConfig.Copy(B, toB.address(), false)))));
                assertThat(client.readReply().error()).as("acknowledged once its set is echoed").isZero();
            }
        }
    }

    /**
     * A kept in-sync set at the sequence of the config it kept but not the config's set (it should
     * not happen: each set has its own sequence) makes a restarted primary take the copies the
     * config holds out of sync out of the set, copy them whole, and report above.
     */
    @Test
    void aCopyTheControlPlaneHoldsOutOfSyncAtTheNodesSequenceIsCopiedWholeBeforeTheNodeReportsItInSync() throws Exception {
        TwoNodes n = twoNodesInSync();
        stop(n.a());
        new SyncState(1, 1, java.util.Set.of(B), java.util.Set.of(B)).write(keptSetOfA());
        DataNode again = start("a");
        again.apply(configFor(A, 2, new ReplicationConfig(1, A, 1, List.of(copy(A, again, true), copy(B, n.b(), false)))));
        assertThat(sequence(again)).as("reported above the control plane's").isEqualTo(2);
        bIsCopiedWholeAndRejoinsAt(again, 3);
    }

    /**
     * A failed write of the kept in-sync set: the node reports the sequence it kept, not the new
     * one (a restart would not know of a report it made), and tries again at the next report.
     */
    @Test
    void aSequenceWhoseInSyncSetCouldNotBeKeptIsNotReportedUntilItIs() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        Path blocker = keptSetOfA().resolveSibling(VOLUME + SyncState.SUFFIX + ".tmp");
        Files.createDirectory(blocker); // the temporary file cannot be written
        stop(n.b());
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            writeWaitingForTheEcho(a, client, 29); // b failed it and left the in-sync set
            assertThat(sequence(a)).as("the sequence it kept").isZero();
            assertThat(copyStatus(a, B).state()).as("in sync as last kept").isEqualTo(AgentMessage.CopyState.inSync);
            Files.delete(blocker);
            assertThat(sequence(a)).as("kept at the next report").isOne();
            assertThat(copyStatus(a, B).state()).isEqualTo(AgentMessage.CopyState.outOfSync);
            assertThat(SyncState.read(keptSetOfA()).sequence()).isOne();
        }
    }

    /**
     * A restarted primary copies nothing to its copies before it is confirmed: a copy not yet told
     * that another was promoted would take the old data, and the new primary holds it in sync.
     */
    @Test
    void aRestartedPrimaryCopiesNothingToItsCopiesUntilConfirmed() throws Exception {
        ThreeNodes n = threeNodesInSync();
        DataNode c = n.c();
        stop(n.a());
        stop(n.b()); // unreachable: a cannot be confirmed
        aWriteInFlightAtAsStop(30);
        DataNode again = start("a");
        again.apply(configFor(A, 1, n.config()));
        await().atMost(PATIENCE).until(() -> again.replication().volume(VOLUME).announcedTo(C));
        await().atMost(PATIENCE).until(() -> sequence(again) == 1); // b unreachable: only an echo can confirm
        again.apply(configFor(A, 2, new ReplicationConfig(2, B, 1, List.of(copy(B, null, true), copy(A, again, false),
                copy(C, c, true)))));
        assertThat(again.replication().volume(VOLUME).serves()).isFalse();
        assertThat(onCopy(c, 3 * MiB, 4096)).as("c never got the unconfirmed primary's data").isEqualTo(new byte[4096]);
    }

    /**
     * c was added and joined the in-sync set after the config a kept, which does not name it; the
     * control plane may have promoted c. The restarted a cannot ask c (it has no address for it),
     * so only the control plane can confirm or depose it.
     */
    @Test
    void aRestartedPrimaryWaitsForACopyItReportedInSyncThatTheConfigItKeptDoesNotName() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode c = start("c");
        ReplicationConfig withC = new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, n.b(), true),
                copy(C, c, false)));
        push(2, withC, c, C, n.b(), B, a, A);
        await().atMost(PATIENCE).until(() -> copyStatus(a, C).state() == AgentMessage.CopyState.inSync);
        stop(a);

        DataNode again = start("a");
        again.apply(configFor(A, 1, n.config())); // the config it kept: no c
        await().atMost(PATIENCE).until(() -> again.replication().volume(VOLUME).announcedTo(B));
        try (NbdTestClient client = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            client.request(Nbd.CMD_READ, 0, 1, 0, 4096, null);
            client.flushOut();
            await().atMost(PATIENCE).until(() -> held(again) == 1); // b alone does not confirm it
            // the control plane, back, tells it of the epoch it promoted c at
            again.apply(configFor(A, 3, new ReplicationConfig(2, C, 2, List.of(copy(C, c, true), copy(A, again, false),
                    copy(B, n.b(), true)))));
            assertThat(client.readReply().error()).as("the old data is never served").isEqualTo(Nbd.ESHUTDOWN);
        }
    }

    /**
     * The config-file mode (no control plane, so no echo ever comes): c joined the in-sync set,
     * then the file dropped c, and the primary restarts. Nothing can promote c, and the file is
     * the truth: the primary serves, and acknowledges writes, without asking c or waiting.
     */
    @Test
    void inTheConfigFileModeARestartedPrimaryGoesByTheFileAlone() throws Exception {
        DataNode a = startConfigFileOnly("a");
        DataNode b = start("b");
        DataNode c = start("c");
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true), copy(C, c, false))), b, B, c, C,
                a, A);
        await().atMost(PATIENCE).until(() -> copyStatus(a, C).state() == AgentMessage.CopyState.inSync);
        ReplicationConfig withoutC = new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true)));
        push(2, withoutC, b, B, a, A);
        stop(a);
        DataNode again = startConfigFileOnly("a");
        again.apply(configFor(A, 2, withoutC));
        byte[] data = NbdServerTest.bytes(4096, 32);
        try (NbdTestClient client = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            client.write(0, data);
        }
        assertThat(onCopy(b, 0, 4096)).isEqualTo(data);
    }

    /** The config-file mode: nothing promotes a copy, so a copy that fails does not hold writes for an echo. */
    @Test
    void inTheConfigFileModeACopyThatFailsHoldsNoWrite() throws Exception {
        DataNode a = startConfigFileOnly("a");
        DataNode b = start("b");
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        stop(b);
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.write(0, NbdServerTest.bytes(4096, 33));
        }
        assertThat(copyStatus(a, B).state()).isEqualTo(AgentMessage.CopyState.outOfSync);
    }

    /**
     * A kept set from the version before, which kept no copies that may be held in sync: any may
     * be (b could have joined and left again, unechoed, and been promoted): a restarted primary
     * asks b, out of sync in it and in the config, and with b unreachable serves once echoed.
     */
    @Test
    void aRestartedPrimaryWithAKeptSetOfTheVersionBeforeWaitsForTheEchoWhileACopyIsOutOfSync() throws Exception {
        TwoNodes n = copyJoinedUnechoed();
        stop(n.a());
        stop(n.b());
        // as the version before left it had b joined (sequence 1) and left again (2), both reports unechoed
        Files.writeString(keptSetOfA(), "epoch=1\nsequence=2\ninSync=\n");
        DataNode again = start("a");
        again.apply(configFor(A, 1, n.config()));
        aWriteIsHeldUntilTheEchoOf(again, 3, 34); // b, which may be held in sync, is asked
    }
}
