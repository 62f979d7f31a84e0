package io.weir.datanode;

import static io.weir.support.Bytes.MiB;
import static io.weir.support.Patience.PATIENCE;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.datanode.NbdTestClient.Reply;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.ReplicationConfig;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A primary that restarts on the config and in-sync set it kept: it holds its clients' requests
 * until a copy or the control plane confirms it is still the primary, copies its volume again,
 * reports above every sequence it reported before, and acknowledges writes only once the control
 * plane has echoed the in-sync set they depend on.
 */
class ReplicationRestartTest extends ReplicationFixture {

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
        stop(a);
        byte[] inFlight = aWriteInFlightAtAsStop(12);
        DataNode again = start("a");
        again.apply(configFor(A, 2, rc));
        await().atMost(PATIENCE).until(() -> java.util.Arrays.equals(onCopy(b, 3 * MiB, 4096), inFlight));
        assertThat(onCopy(b, MiB, acknowledged.length)).isEqualTo(acknowledged);
        assertThat(copyStatus(again, B).state()).as("the copy stayed in sync").isEqualTo(AgentMessage.CopyState.inSync);
        assertThat(sequence(again)).isZero();
    }

    /**
     * A client write into a region that a resync step is copying to an in-sync copy is sent to
     * that copy only once the step is answered, and acknowledged after that: the step read the
     * region before the write, and landing after it would leave the copy, still in sync, without
     * a write its client was told is done, until the region is copied again (a primary dying
     * meanwhile would lose it). A restarted primary copies its volume again whole to its copy in
     * sync (rule 6); b's store holds the first step, over the first MiB, while a client writes
     * into it. Before, the write went to b beside the held step and was acknowledged at once.
     */
    @Test
    void aWriteIntoARegionAStepIsCopyingToAnInSyncCopyIsAcknowledgedOnlyOnceItLandsAfterTheStep() throws Exception {
        StoreGate gate = new StoreGate();
        DataNode a = start("a");
        DataNode b = startServing("b", gate);
        ReplicationConfig rc = new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true)));
        push(1, rc, b, B, a, A);
        awaitAnnounced(a, B);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            c.write(0, NbdServerTest.bytes(65536, 21)); // the first step carries data, not zeroes
        }
        stop(a);
        DataNode again = start("a");
        gate.arm(); // b's store holds the first transfer: the re-copy's first step
        again.apply(configFor(A, 2, rc));
        byte[] written = NbdServerTest.bytes(4096, 22);
        try (NbdTestClient c = new NbdTestClient(again.listenAddress()).open("acme/db")) {
            CompletableFuture<NbdTestClient.Reply> ack;
            try {
                assertThat(gate.entered(PATIENCE.toSeconds())).as("the re-copy's first step reached b's store").isTrue();
                c.request(Nbd.CMD_WRITE, 0, 1, 4096, written.length, written);
                c.flushOut();
                ack = CompletableFuture.supplyAsync(() -> {
                    try {
                        return c.readReply();
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                ReplicatedVolume rv = again.replication().volume(VOLUME);
                await().atMost(PATIENCE).until(() -> ack.isDone() || rv.forwarded.heldForwards(B) == 1);
                assertThat(ack).as("acknowledged while the step that read the region before it is still to land").isNotDone();
            } finally {
                gate.release();
            }
            assertThat(ack.get(PATIENCE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS).error()).isZero();
        }
        stop(again); // the primary dies: the copy must hold every write acknowledged
        assertThat(onCopy(b, 4096, written.length)).isEqualTo(written);
        assertThat(onCopy(b, 0, 4096)).isEqualTo(java.util.Arrays.copyOfRange(NbdServerTest.bytes(65536, 21), 0, 4096));
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
        stop(a);
        stop(b);

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
        refusesToServeTheOldData(again);
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
        refusesToServeTheOldData(again);
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
        DataNode again = closedAfterTheTest(DataNode.builder().dataDir(dir.resolve("a")).listen(new InetSocketAddress("127.0.0.1", 0))
                .replicationListen(new InetSocketAddress("127.0.0.1", 0)).workers(2).bufferPool(pool).build());
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
     * A copy in sync whose data file is lost while it is down (its disk replaced) comes back with
     * a new, empty file. It stayed in sync: its link had dropped with nothing outstanding, and
     * reconnected; the control plane could promote it and serve zeroes for acknowledged data.
     * Rule 8: its primary asks it, on the new connection, for the token it gave its file; the new
     * file holds none, so it leaves the set and is copied whole before it joins again.
     */
    @Test
    void aCopyThatComesBackWithANewFileLeavesTheSetAndIsCopiedWhole() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        byte[] data = NbdServerTest.bytes(65536, 31);
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.write(0, data);
        }
        assertThat(onCopy(n.b(), 0, data.length)).isEqualTo(data);
        long before = sequence(a);
        long connection = a.replication().linkConnection(B);
        InetSocketAddress copyAt = HostPort.parse(n.b().replicationAddress());
        Path file = n.b().replication().volume(VOLUME).store.dataFile();
        stop(n.b());
        Files.delete(file); // its disk replaced: the volume's file is gone

        DataNode b = start("b", copyAt);
        // a's link connects again before b has its config (b answers its PING NOT_A_COPY until then)
        await().atMost(PATIENCE).until(() -> a.replication().linkConnection(B) > connection);
        b.apply(configFor(B, 1, n.config())); // no write follows: only a's PINGs can tell
        await().atMost(PATIENCE).until(() -> java.util.Arrays.equals(onCopy(b, 0, data.length), data));
        await().atMost(PATIENCE).until(() -> copyStatus(a, B).state() == AgentMessage.CopyState.inSync);
        assertThat(sequence(a)).as("b left the set, and joined it again once copied").isGreaterThanOrEqualTo(before + 2);
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
        refusesToServeTheOldData(again);
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
            await().atMost(PATIENCE).until(() -> held(again) + again.replication().volume(VOLUME).forwarded.waitingWrites() == 1);
            again.apply(configFor(A, 3, new ReplicationConfig(1, A, 3, List.of(copy(A, again, true), copy(B, null, false)))));
            assertThat(client.readReply().error()).as("acknowledged once its own set is echoed").isZero();
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

    /** A read from {@code node}, a restarted primary a copy was promoted over, is refused: its old data is never served. */
    private static void refusesToServeTheOldData(DataNode node) throws Exception {
        try (NbdTestClient client = new NbdTestClient(node.listenAddress()).open("acme/db")) {
            assertThat(client.call(Nbd.CMD_READ, 0, 0, 4096, null).error()).as("the old data is never served")
                    .isEqualTo(Nbd.ESHUTDOWN);
        }
    }
}
