package io.weir.datanode;

import static io.weir.support.Bytes.GiB;
import static io.weir.support.Bytes.MiB;
import static io.weir.support.Patience.PATIENCE;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.datanode.NbdTestClient.Reply;
import io.weir.agent.ServerCertificate;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.ReplicationConfig;
import io.weir.support.TcpProxy;
import io.weir.support.TestPki;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Replicated volumes while their nodes run: every acknowledged write is on the in-sync copies, a
 * deposed primary takes no write, a failed copy leaves the in-sync set only once the control plane
 * echoes it and is resynced when it returns, a new copy is copied whole, and the copies speak
 * mutual TLS when they have certificates.
 */
class ReplicationTest extends ReplicationFixture {

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

    /**
     * A replicated volume's usage counts each client request once over its nodes: the primary
     * counts what its clients asked, and the copy counts what it applied for the primary apart
     * (as replica ops and bytes), so that the sum the usage API makes over the nodes is the
     * client's view. It used to count each write twice, once on each node.
     */
    @Test
    void eachClientRequestCountsOnceOverTheVolumesNodesAndWhatTheCopyAppliedCountsApart() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode b = n.b();
        a.replication().flushEvery(Duration.ofHours(1)); // no FLUSH of a's own is counted on b
        String id = VOLUME.toString();
        io.weir.scheduler.Stats beforeA = a.executor().snapshot().volumes().get(id);
        io.weir.scheduler.Stats beforeB = b.executor().snapshot().volumes().get(id);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            for (int i = 0; i < 5; i++) {
                c.write(i * 65536L, NbdServerTest.bytes(4096, 40 + i));
            }
            assertThat(c.call(Nbd.CMD_WRITE_ZEROES, 0, MiB, 8192, null).error()).isZero();
            c.flush();
            c.read(0, 4096);
            c.read(65536, 4096);
        }
        await().atMost(PATIENCE).untilAsserted(() -> {
            io.weir.scheduler.Stats onA = a.executor().snapshot().volumes().get(id);
            io.weir.scheduler.Stats onB = b.executor().snapshot().volumes().get(id);
            assertThat(onA.writeOps() - beforeA.writeOps()).as("writes, zeroes and the flush counted on the primary")
                    .isEqualTo(7);
            assertThat(onA.readOps() - beforeA.readOps()).as("reads counted on the primary").isEqualTo(2);
            assertThat(onA.writeBytes() - beforeA.writeBytes()).as("zeroes that punch a hole move no bytes").isEqualTo(5 * 4096);
            assertThat(onB.writeOps() - beforeB.writeOps()).as("client writes counted on the copy").isZero();
            assertThat(onB.readOps() - beforeB.readOps()).as("client reads counted on the copy").isZero();
            assertThat(onB.replicaOps() - beforeB.replicaOps()).as("what the copy applied for its primary").isEqualTo(7);
            assertThat(onB.replicaBytes() - beforeB.replicaBytes()).isEqualTo(5 * 4096);
            assertThat(onA.replicaOps() - beforeA.replicaOps()).as("the primary applies nothing for another").isZero();
        });
    }

    /**
     * A replicated write whose copies are all out is answered on the worker that forwarded it.
     * When the buffer of its reply cannot be had (out of direct memory, once), it is answered
     * once, with ENOMEM, and counted done once: the connection's count of requests in flight
     * goes back to 0 (it went to -1), and the next request is served.
     */
    @Test
    void aForwardedWriteWhoseReplyFindsNoMemoryIsAnsweredOnceAndEndsOnce() throws Exception {
        AtomicBoolean failReply = new AtomicBoolean();
        BufferPool pool = new BufferPool(64 * MiB) {
            @Override
            ByteBuffer acquire(int size) {
                if (size == Nbd.SIMPLE_REPLY_BYTES && failReply.compareAndSet(true, false)) {
                    throw new OutOfMemoryError("Cannot reserve 16 bytes of direct buffer memory (test)");
                }
                return super.acquire(size);
            }
        };
        DataNode a = closedAfterTheTest(DataNode.builder().dataDir(dir.resolve("a")).listen(new InetSocketAddress("127.0.0.1", 0))
                .replicationListen(new InetSocketAddress("127.0.0.1", 0)).workers(2).bufferPool(pool).build());
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, null, false))), a, A);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            NbdConnection conn = a.volume("acme/db").clients.iterator().next();
            failReply.set(true);
            assertThat(c.call(Nbd.CMD_WRITE, 0, 0, 4096, NbdServerTest.bytes(4096, 1)).error()).isEqualTo(Nbd.ENOMEM);
            assertThat(failReply).as("the reply's buffer was refused").isFalse();
            // the worker has returned from the request (a request counts in flight until just after its reply)
            await().atMost(PATIENCE).until(() -> a.server().executor.pending() == 0);
            assertThat(conn.inFlightCount()).as("requests in flight").isZero();
            assertThat(c.call(Nbd.CMD_WRITE, 0, 4096, 4096, NbdServerTest.bytes(4096, 2)).error()).isZero();
            await().atMost(PATIENCE).until(() -> a.server().executor.pending() == 0);
            assertThat(conn.inFlightCount()).as("requests in flight once both are answered").isZero();
        }
    }

    /**
     * NBD lengths are 32 bits unsigned: a WRITE_ZEROES may cover up to 4 GiB - 1 bytes, and the
     * copy zeroes all of it before the client is answered, not the first 2 GiB (a 4 GiB sparse
     * volume; the zeroes punch a hole on both nodes).
     */
    @Test
    void zeroesOfMoreThan2GiBAreOnTheCopyWholeWhenAcknowledged() throws Exception {
        volumeSize = 4 * GiB;
        TwoNodes n = twoNodesInSync();
        long beyond2GiB = 5 * GiB / 2;
        byte[] data = NbdServerTest.bytes(4096, 5);
        try (NbdTestClient c = new NbdTestClient(n.a().listenAddress()).open("acme/db")) {
            c.write(beyond2GiB, data);
            assertThat(onCopy(n.b(), beyond2GiB, data.length)).isEqualTo(data);
            assertThat(c.call(Nbd.CMD_WRITE_ZEROES, 0, 0, 3 * GiB, null).error()).isZero();
            assertThat(onCopy(n.b(), beyond2GiB, data.length)).as("the copy's data 2.5 GiB in, under 3 GiB of zeroes")
                    .isEqualTo(new byte[data.length]);
            assertThat(onCopy(n.a(), beyond2GiB, data.length)).isEqualTo(new byte[data.length]);
        }
        assertThat(copyStatus(n.a(), B).state()).isEqualTo(AgentMessage.CopyState.inSync);
    }

    /**
     * A WRITE, or a WRITE_ZEROES with NO_HOLE, of more than {@link NbdRequest#PIECE_BYTES} is
     * applied on the copy a piece at a time, split where the primary split it: the copy's store
     * never takes more than a piece at once (a worker and the copy's epoch lock are held for a
     * piece, not for up to 4 GiB), the data is exact across the pieces' boundaries, and the copy's
     * volume counts each request once, with all its bytes.
     */
    @Test
    void aRequestOfMoreThanAPieceIsAppliedOnTheCopyAPieceAtATimeAndCountsOnce() throws Exception {
        List<Long> transfers = new java.util.concurrent.CopyOnWriteArrayList<>();
        DataNode a = start("a");
        DataNode b = startServing("b", transfers::add);
        a.replication().flushEvery(Duration.ofHours(1)); // no FLUSH of a's own is counted on b among the writes
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        int piece = NbdRequest.PIECE_BYTES;
        byte[] data = NbdServerTest.bytes(3 * piece + 5000, 7);
        long at = piece - 4096 + 17;
        long zeroesAt = 8 * MiB + 512;
        long zeroes = 5 * MiB + 512;
        String id = VOLUME.toString();
        io.weir.scheduler.Stats before = b.executor().snapshot().volumes().get(id);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            c.write(zeroesAt - 4096, NbdServerTest.bytes((int) zeroes + 8192, 3));
            transfers.clear();
            assertThat(c.call(Nbd.CMD_WRITE, Nbd.CMD_FLAG_FUA, at, data.length, data).error()).isZero();
            assertThat(c.call(Nbd.CMD_WRITE_ZEROES, Nbd.CMD_FLAG_NO_HOLE, zeroesAt, zeroes, null).error()).isZero();
        }
        List<Long> applied = List.copyOf(transfers);
        // and reads of the partial blocks at the write's ends, for their checksums
        assertThat(applied.stream().mapToLong(Long::longValue).sum()).as("bytes the copy's store took")
                .isGreaterThanOrEqualTo(data.length + zeroes);
        assertThat(applied).as("the copy's store took at most a piece at once").allMatch(n -> n <= piece);
        String written = java.util.Arrays.equals(onCopy(b, at, data.length), data) ? "exact" : "different";
        assertThat(written).as("the write on the copy").isEqualTo("exact");
        assertThat(onCopy(b, zeroesAt, (int) zeroes)).as("the zeroes on the copy").isEqualTo(new byte[(int) zeroes]);
        assertThat(onCopy(b, zeroesAt - 4096, 4096)).as("the bytes before the zeroes")
                .isEqualTo(java.util.Arrays.copyOf(NbdServerTest.bytes((int) zeroes + 8192, 3), 4096));
        await().atMost(PATIENCE).untilAsserted(() -> {
            io.weir.scheduler.Stats s = b.executor().snapshot().volumes().get(id);
            assertThat(s.replicaOps() - before.replicaOps()).as("writes the copy applied for its primary").isEqualTo(3);
            assertThat(s.replicaBytes() - before.replicaBytes()).isEqualTo(zeroes + 8192 + data.length + zeroes);
            assertThat(s.writeOps() - before.writeOps()).as("client writes counted on the copy").isZero();
        });
    }

    /**
     * Sends a WRITE of four pieces at offset 0 through {@code c} (its answer not read) and waits
     * until the copy applies the first piece, which its store holds at {@code gate}.
     */
    static void sendFourPiecesHeldAtTheFirst(NbdTestClient c, StoreGate gate, int seed) throws Exception {
        int piece = NbdRequest.PIECE_BYTES;
        gate.arm();
        c.request(Nbd.CMD_WRITE, 0, 1, 0, 4 * piece, NbdServerTest.bytes(4 * piece, seed));
        c.flushOut();
        assertThat(gate.entered(PATIENCE.toSeconds())).as("the copy applies the first piece; its store holds it").isTrue();
    }

    /** What the copy {@code n} holds after the first piece of such a write: "zeroes" or "written". */
    static String afterTheFirstPiece(DataNode n) throws Exception {
        int piece = NbdRequest.PIECE_BYTES;
        return java.util.Arrays.equals(onCopy(n, piece, 3 * piece), new byte[3 * piece]) ? "zeroes" : "written";
    }

    /**
     * A copy promoted while it applies a request of several pieces waits for the piece being
     * applied, not for the whole request: the pieces after it are refused, and the old primary
     * acknowledges none of it. The copy's store holds the first piece until the promotion waits.
     */
    @Test
    void aPromotionWaitsForThePieceBeingAppliedNotTheWholeRequest() throws Exception {
        StoreGate gate = new StoreGate();
        DataNode a = start("a");
        DataNode b = startServing("b", gate);
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            sendFourPiecesHeldAtTheFirst(c, gate, 62);
            CompletableFuture<Void> promoted = CompletableFuture.runAsync(() -> {
                try {
                    b.apply(configFor(B, 2, new ReplicationConfig(2, B, 1, List.of(copy(B, b, true), copy(A, a, false)))));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            await().atMost(PATIENCE).until(() -> b.replication().volume(VOLUME).epochChangeWaiting());
            gate.release();
            promoted.get(PATIENCE.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            assertThat(c.readReply().error()).as("the old primary's answer to its write").isNotZero();
        }
        assertThat(afterTheFirstPiece(b)).as("the pieces after the promotion").isEqualTo("zeroes");
    }

    /**
     * A copy's connection that ends admits nothing more, with or without certificates (without,
     * nothing tells the copy which node connects): the pieces of a request not yet applied are
     * dropped, since its primary answered it LINK_DOWN and will resync its regions. They went on
     * being applied, and could land after the resync had copied newer data there. The copy's store
     * holds the first piece until the connection has ended; the primary cannot reconnect, so no
     * resync copies the write either.
     */
    @Test
    void aCopysConnectionThatEndsAppliesNoMorePiecesOfItsRequests() throws Exception {
        StoreGate gate = new StoreGate();
        DataNode a = start("a");
        DataNode b = startServing("b", gate);
        try (TcpProxy toB = new TcpProxy(HostPort.parse(b.replicationAddress()).getPort())) {
            pushThrough(toB, a, b);
            try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
                sendFourPiecesHeldAtTheFirst(c, gate, 64);
                long ended = b.replication().connectionsEnded();
                toB.refuse(true);
                toB.cut();
                await().atMost(PATIENCE).until(() -> b.replication().connectionsEnded() > ended);
                gate.release();
                await().atMost(PATIENCE).until(() -> b.server().executor.pending() == 0);
            }
        }
        assertThat(afterTheFirstPiece(b)).as("the copy after the first piece").isEqualTo("zeroes");
    }

    /**
     * A copy whose volume is no longer replicated there (a config without its replication) takes
     * no more of its old primary's writes: the pieces of a request after the config are refused,
     * and the primary acknowledges none of it. The copy's store holds the first piece until the
     * config is applied.
     */
    @Test
    void aVolumeNoLongerReplicatedOnACopyAppliesNoMorePiecesOfItsOldPrimarysRequest() throws Exception {
        StoreGate gate = new StoreGate();
        DataNode a = start("a");
        DataNode b = startServing("b", gate);
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        int piece = NbdRequest.PIECE_BYTES;
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            sendFourPiecesHeldAtTheFirst(c, gate, 65);
            b.apply(configFor(B, 2, null));
            gate.release();
            // b refused the rest: a's write waits for the control plane to echo b's departure
            await().atMost(PATIENCE).until(() -> a.replication().volume(VOLUME).forwarded.waitingWrites() == 1);
            await().atMost(PATIENCE).until(() -> b.server().executor.pending() == 0);
        }
        try (NbdTestClient d = new NbdTestClient(b.listenAddress()).open("acme/db")) {
            String after = java.util.Arrays.equals(d.read(piece, 3 * piece), new byte[3 * piece]) ? "zeroes" : "written";
            assertThat(after).as("b's volume after the first piece").isEqualTo("zeroes");
        }
    }

    /**
     * Reads of a replicated volume are served from the primary's own copy and wait for no other
     * node, so a worker that runs several of them holds their replies and writes them together
     * ({@link ReplyBatch}), as for a volume of one copy. One worker on the primary: the first read
     * holds it in the store until the other seven are queued, and then it runs those as one batch.
     */
    @Test
    void readsOfAReplicatedVolumeRunAsABatchHaveTheirRepliesWrittenTogether() throws Exception {
        StoreGate gate = new StoreGate();
        DataNode a = startGated("a", gate);
        DataNode b = start("b");
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        int n = 8;
        byte[] data = NbdServerTest.bytes(n * 4096, 3);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            c.write(0, data);
            gate.arm();
            for (int i = 0; i < n; i++) {
                c.request(Nbd.CMD_READ, 0, 100 + i, 4096L * i, 4096, null);
            }
            c.flushOut();
            assertThat(gate.entered(20)).as("the first read reached the store").isTrue();
            await().atMost(PATIENCE).until(() -> a.executor().pending() == n);
            long gathered = a.server().gatheredReplies();
            gate.release();
            assertThat(NbdServerTest.readReplies(c, data, n)).hasSize(n);
            assertThat(a.server().gatheredReplies() - gathered).as("replies of the batch written together")
                    .isGreaterThan(1);
        }
    }

    /**
     * Most nodes hold no replicated volume: their replication driver waits instead of ticking.
     * The first replicated volume wakes it, and it connects the link the volume's writes need.
     */
    @Test
    void theReplicationDriverWaitsWhileTheNodeHasNoReplicatedVolumeAndTheFirstOneWakesIt() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        a.apply(config().node(A).revision(1).tenant("acme").volume("acme", "db", SIZE).build());
        await().atMost(PATIENCE).until(() -> a.replication().driverWaiting());

        push(2, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        byte[] data = NbdServerTest.bytes(4096, 5);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            c.write(0, data);
        }
        assertThat(onCopy(b, 0, data.length)).as("the write went over the link the driver connected").isEqualTo(data);
        assertThat(a.replication().driverWaiting()).isFalse();
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

    /**
     * A write the copy admitted at epoch 1 and is still applying when the control plane promotes
     * that copy (epoch 2) lands before the promotion takes effect, never on top of the new
     * primary's own writes: the promotion waits for it. The copy's store holds the write until the
     * promotion has begun.
     */
    @Test
    void aWriteTheCopyAdmittedBeforeItsPromotionNeverLandsAfterTheNewPrimarysWrites() throws Exception {
        StoreGate gate = new StoreGate();
        DataNode a = start("a");
        DataNode b = startServing("b", gate);
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        byte[] old = NbdServerTest.bytes(4096, 60);
        byte[] newer = NbdServerTest.bytes(4096, 61);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            gate.arm();
            c.request(Nbd.CMD_WRITE, 0, 1, 0, 4096, old);
            c.flushOut();
            assertThat(gate.entered(PATIENCE.toSeconds())).as("the copy applies the write; its store holds it").isTrue();
            CompletableFuture<Void> promoted = CompletableFuture.runAsync(() -> {
                try {
                    b.apply(configFor(B, 2, new ReplicationConfig(2, B, 1, List.of(copy(B, b, true), copy(A, a, false)))));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            CompletableFuture<Void> newWrite = promoted.thenRun(() -> {
                try (NbdTestClient d = new NbdTestClient(b.listenAddress()).open("acme/db")) {
                    d.write(0, newer);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            await().atMost(PATIENCE).until(() -> newWrite.isDone() || b.replication().volume(VOLUME).epochChangeWaiting());
            gate.release();
            newWrite.get(PATIENCE.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
        }
        try (NbdTestClient d = new NbdTestClient(b.listenAddress()).open("acme/db")) {
            byte[] now = d.read(0, 4096);
            String which = java.util.Arrays.equals(now, newer) ? "the new primary's" : java.util.Arrays.equals(now, old)
                    ? "the old primary's" : "neither";
            assertThat(which).as("whose write the volume holds").isEqualTo("the new primary's");
        }
    }

    /**
     * A write the copy admitted on a connection that then failed, still held up in the copy's
     * store, never lands after the resync that the next connection starts: the primary answered it
     * LINK_DOWN and marked its region, and a newer write to the same place is what the resync
     * copies. The copy's new connection from that node waits for the old one's requests before it
     * reads anything. (Node certificates, as in production: they tell the copy who connects.)
     */
    @Test
    void aWriteHeldUpOnAFailedConnectionNeverLandsAfterTheResyncOfTheNextOne() throws Exception {
        heldUpOnAFailedConnectionThenResynced(true);
    }

    /**
     * The same in clear (a node without certificates, as in the config-file mode): no certificate
     * tells the copy who connects, the primary's hello does.
     */
    @Test
    void inClearTooAWriteHeldUpOnAFailedConnectionNeverLandsAfterTheResyncOfTheNextOne() throws Exception {
        heldUpOnAFailedConnectionThenResynced(false);
    }

    private void heldUpOnAFailedConnectionThenResynced(boolean certificates) throws Exception {
        StoreGate gate = new StoreGate();
        DataNode a = start("a");
        DataNode b = startServing("b", gate);
        if (certificates) {
            pki = TestPki.create("weir test CA");
            certify(a, A, 0x61);
            certify(b, B, 0x62);
        }
        byte[] held = NbdServerTest.bytes(4096, 70);
        byte[] newer = NbdServerTest.bytes(4096, 71);
        try (TcpProxy toB = new TcpProxy(HostPort.parse(b.replicationAddress()).getPort())) {
            pushThrough(toB, a, b);
            try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
                client.write(0, NbdServerTest.bytes(4096, 69)); // the link to b is up
                gate.arm();
                client.request(Nbd.CMD_WRITE, 0, 1, 0, 4096, held);
                client.flushOut();
                assertThat(gate.entered(PATIENCE.toSeconds())).as("b applies the write; its store holds it").isTrue();
                toB.cut(); // the link fails: the write is answered LINK_DOWN, b leaves the set with the region dirty
                await().atMost(PATIENCE).until(() -> a.replication().volume(VOLUME).forwarded.waitingWrites() == 1);
                a.apply(configFor(A, 2, new ReplicationConfig(1, A, 1,
                        List.of(copy(A, a, true), new ReplicationConfig.Copy(B, toB.address(), false)))));
                assertThat(client.readReply().error()).isZero();
                client.write(0, newer); // b is out: the region is dirty
                await().atMost(PATIENCE).until(() -> copyStatus(a, B).state() == AgentMessage.CopyState.inSync
                        || b.replication().waitingForAnOlderConnection());
                gate.release();
                await().atMost(PATIENCE).until(() -> copyStatus(a, B).state() == AgentMessage.CopyState.inSync);
                byte[] onB = onCopy(b, 0, 4096);
                String which = java.util.Arrays.equals(onB, newer) ? "the newer write" : java.util.Arrays.equals(onB, held)
                        ? "the write held up on the failed connection" : "neither";
                assertThat(which).as("what b, back in sync, holds").isEqualTo("the newer write");
            }
        }
    }

    /**
     * Three copies: the primary dies with a write on b and not on c (never acknowledged), and b is
     * promoted with c in sync. b copies itself whole to c, which stays in sync meanwhile, as a
     * restarted primary does (rule 6): otherwise a read on b returns the write, and after a
     * promotion of c it is gone.
     */
    @Test
    void aPromotedPrimaryCopiesItselfWholeToTheCopiesInSyncSoThatTheyAgree() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        DataNode c = start("c");
        byte[] onlyOnB = NbdServerTest.bytes(4096, 80);
        try (TcpProxy toC = new TcpProxy(HostPort.parse(c.replicationAddress()).getPort())) {
            push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true),
                    new ReplicationConfig.Copy(C, toC.address(), true))), c, C, b, B, a, A);
            try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
                client.write(0, NbdServerTest.bytes(4096, 79)); // the links are up
                toC.freeze(); // what a sends c from now on is lost
                client.request(Nbd.CMD_WRITE, 0, 1, 0, 4096, onlyOnB);
                client.flushOut();
                await().atMost(PATIENCE).until(() -> java.util.Arrays.equals(onCopy(b, 0, 4096), onlyOnB));
            }
            stop(a); // a dies; the control plane promotes b with c in sync
            push(2, new ReplicationConfig(2, B, 1, List.of(copy(B, b, true), copy(C, c, true), copy(A, null, false))), c, C, b, B);
            await().atMost(PATIENCE).until(() -> java.util.Arrays.equals(onCopy(c, 0, 4096), onlyOnB));
            assertThat(copyStatus(b, C).state()).as("c, while b copies itself to it").isEqualTo(AgentMessage.CopyState.inSync);
        }
    }

    /**
     * A resync step that fails on the primary itself (here its read of the volume, as a failing
     * disk or a full memory would) is not the copy's failure: a copy in sync that a promoted
     * primary copies itself to stays in the set (the set's sequence stays), and the step's regions
     * are copied again a moment later. It was taken out of the set, so that every write waited for
     * the control plane's echo, and copied again whole.
     */
    @Test
    void aResyncStepThatFailsOnThePrimaryItselfLeavesTheCopyInTheSetAndIsTriedAgain() throws Exception {
        java.util.concurrent.atomic.AtomicInteger failures = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
        VolumeStore.ServiceTime failOneStepRead = bytes -> {
            if (bytes >= MiB && armed.compareAndSet(true, false)) { // only a resync step reads a whole MiB here
                failures.incrementAndGet();
                throw new java.io.UncheckedIOException(new java.io.IOException("injected read error"));
            }
        };
        DataNode a = start("a");
        DataNode b = startServing("b", failOneStepRead);
        DataNode c = start("c");
        byte[] data = NbdServerTest.bytes((int) (2 * MiB), 81);
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true), copy(C, c, true))), c, C, b, B,
                a, A);
        awaitAnnounced(a, B);
        awaitAnnounced(a, C);
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.write(0, data);
        }
        stop(a); // a dies; the control plane promotes b with c in sync, and b copies itself whole to c
        armed.set(true);
        push(2, new ReplicationConfig(2, B, 1, List.of(copy(B, b, true), copy(C, c, true), copy(A, null, false))), c, C, b, B);
        await().atMost(PATIENCE).until(() -> failures.get() == 1 && copyStatus(b, C).resyncRemainingBytes() == 0);
        assertThat(copyStatus(b, C).state()).as("c, whose copy failed on b's side").isEqualTo(AgentMessage.CopyState.inSync);
        assertThat(sequence(b)).as("the in-sync set never changed").isEqualTo(1);
        assertThat(onCopy(c, 0, (int) (2 * MiB))).isEqualTo(data);
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
            stop(b);

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

    /**
     * A primary holding writes until the control plane echoes its report sends the report again
     * while no echo comes, not only when it changes: the control plane that took the first one
     * may have failed to store it (a database error costs that report only), and the writes
     * waited for as long as nothing else in the node's status changed, for ever on a quiet node.
     */
    @Test
    void aPrimaryWaitingForAnEchoSendsItsReportAgainUntilTheEchoComes() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        java.util.concurrent.BlockingQueue<AgentMessage.NodeStatus> sent = new java.util.concurrent.LinkedBlockingQueue<>();
        Thread reporter = DataNodeCommand.statusReporter(a, sent::add, Duration.ofMillis(200));
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            stop(n.b());
            writeWaitingForTheEcho(a, c, 7); // b failed it and left the in-sync set
            await().atMost(PATIENCE).until(() -> sequence(a) == 1);
            AgentMessage.NodeStatus report = await().atMost(PATIENCE).until(sent::take,
                    s -> s.replication().stream().anyMatch(r -> r.syncSequence() == 1));
            // that report is lost on the control plane's side; the node's status does not change
            AgentMessage.NodeStatus again = sent.poll(PATIENCE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            assertThat(again).as("a report sent again while the write waits for its echo").isNotNull();
            assertThat(again.replication()).isEqualTo(report.replication());
            assertThat(a.replication().volume(VOLUME).forwarded.waitingWrites()).as("the write still waits").isEqualTo(1);
            assertThat(a.replicationAwaitingEcho()).isTrue();

            a.apply(configFor(A, 2, new ReplicationConfig(1, A, 1, List.of(copy(A, a, true), copy(B, null, false)))));
            assertThat(c.readReply().error()).isZero();
            assertThat(a.replicationAwaitingEcho()).as("echoed: nothing to send again").isFalse();
        } finally {
            reporter.interrupt();
            reporter.join();
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

    /**
     * A volume whose size is not a whole number of 8-byte words (a config file may say so) is
     * copied whole with its last bytes: a step whose data is zero but for them is sent as data,
     * not as zeroes.
     */
    @Test
    void aNewCopyGetsTheLastBytesOfAVolumeWhoseSizeIsNotAWholeWord() throws Exception {
        volumeSize = SIZE + 4;
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode c = start("c");
        byte[] tail = {1, 2, 3, 4};
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.write(SIZE, tail);
        }
        push(2, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, n.b(), true), copy(C, c, false))), c, C,
                n.b(), B, a, A);
        await().atMost(PATIENCE).until(() -> copyStatus(a, C).state() == AgentMessage.CopyState.inSync);
        assertThat(onCopy(c, SIZE, 4)).isEqualTo(tail);
    }

    /**
     * A copy joins the in-sync set only once what the resync sent it is durable there: the data
     * was durable on the primary (its clients may have flushed it), and a copy in sync may be
     * promoted. No client FLUSH or FUA while the copy runs, so the copy is forced by the join alone.
     */
    @Test
    void aResyncedCopyJoinsTheInSyncSetOnlyOnceWhatItWasSentIsDurableThere() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        a.replication().flushEvery(Duration.ofHours(1)); // nor a FLUSH of a's own: only the join forces c
        DataNode c = start("c");
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.write(MiB, NbdServerTest.bytes((int) (4 * MiB), 7));
            ReplicationConfig withC = new ReplicationConfig(1, A, 0,
                    List.of(copy(A, a, true), copy(B, n.b(), true), copy(C, c, false)));
            push(2, withC, c, C);
            long forcedBefore = c.replication().volume(VOLUME).store.forced();
            push(2, withC, n.b(), B, a, A); // a starts the copy
            await().atMost(PATIENCE).until(() -> copyStatus(a, C).state() == AgentMessage.CopyState.inSync);
            assertThat(c.replication().volume(VOLUME).store.forced() - forcedBefore)
                    .as("the copy's volume forced to its disk before it joined").isPositive();
        }
    }

    /**
     * A copy whose link fails while only a FLUSH is on its way may have lost what that FLUSH was
     * to force (its node lost power): that is copied again before it rejoins, as everything it
     * held unforced, and no more (the whole volume was). Here b loses the write the client
     * flushed; when the link is back, b is copied it again and rejoins holding it (it stayed
     * resyncing for ever, and then rejoined without it).
     */
    @Test
    void aCopyWhoseLinkFailsWithAFlushOnItsWayIsCopiedAgainWhatTheFlushCovered() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        a.replication().flushEvery(Duration.ofHours(1)); // the client's FLUSH is the only one b is sent
        try (TcpProxy toB = new TcpProxy(HostPort.parse(b.replicationAddress()).getPort())) {
            pushThrough(toB, a, b);
            try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
                byte[] flushed = NbdServerTest.bytes(4096, 50);
                client.write(0, flushed); // the link to b is up
                VolumeStore onB = b.replication().volume(VOLUME).store;
                long forced = onB.forced();
                toB.holdDownstream();
                client.request(Nbd.CMD_FLUSH, 0, 1, 0, 0, null);
                client.flushOut();
                // the FLUSH reached b over this connection, and b's answer is held back
                await().atMost(PATIENCE).until(() -> onB.forced() > forced && toB.heldDownstreamBytes() > 0);
                onB.write(0, ByteBuffer.wrap(new byte[4096]), true); // b lost it (before the cut: nothing resyncs it yet)
                toB.refuse(true); // the link stays down until the dirty map is read
                toB.cut(); // the link fails: the FLUSH is answered LINK_DOWN, b leaves the set
                await().atMost(PATIENCE).until(() -> a.replication().volume(VOLUME).forwarded.waitingWrites() == 1);
                assertThat(copyStatus(a, B).resyncRemainingBytes()).as("to copy to b: the region the FLUSH covered")
                        .isEqualTo(ReplicaCopy.REGION_BYTES);
                toB.refuse(false);
                a.apply(configFor(A, 2, new ReplicationConfig(1, A, 1,
                        List.of(copy(A, a, true), new ReplicationConfig.Copy(B, toB.address(), false)))));
                assertThat(client.readReply().error()).as("the FLUSH, once its set is echoed").isZero();
                await().atMost(PATIENCE).untilAsserted(() -> assertThat(copyStatus(a, B).state()).as("b, with the link back")
                        .isEqualTo(AgentMessage.CopyState.inSync));
                assertThat(java.util.Arrays.equals(onCopy(b, 0, 4096), flushed)).as("b holds the flushed write again").isTrue();
            }
        }
    }

    /**
     * A copy that answers a FLUSH with an error (its disk failed the fsync, or it holds the volume
     * no more) is copied whole before it rejoins: what its disk still holds is not known.
     */
    @Test
    void aCopyThatAnswersAFlushWithAnErrorIsCopiedWhole() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        DataNode b = n.b();
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            client.write(0, NbdServerTest.bytes(4096, 51));
            b.apply(config().node(B).revision(2).tenant("acme").volume("acme", "db", SIZE).build()); // not a copy any more
            client.request(Nbd.CMD_FLUSH, 0, 1, 0, 0, null);
            client.flushOut();
            await().atMost(PATIENCE).until(() -> a.replication().volume(VOLUME).forwarded.waitingWrites() == 1); // b left
            assertThat(copyStatus(a, B).resyncRemainingBytes()).as("to copy to b").isEqualTo(SIZE);
        }
    }

    /**
     * A copy whose link fails may have lost what it had not forced (its node lost power): the
     * regions it answered writes to since the last FLUSH it answered are copied again before it
     * rejoins. Here b loses a write it answered and had not forced; when the link is back, b is
     * copied that region again and rejoins holding it (it rejoined without it: only the region of
     * the request that failed was dirty).
     */
    /**
     * A write forwarded to a copy, its answer not back (the link hung), when the control plane's
     * config deposes this primary (it promoted the copy, epoch 2): when the link fails, the write
     * is not acknowledged, since this node cannot know that the new primary has it (a write lost
     * on the way looks the same). It was answered OK: the config had reset the volume's state, and
     * the failed copy was no longer one of its copies, so nothing marked the request as lost
     * (found by review).
     */
    @Test
    void aWriteInFlightWhenAConfigDeposesThePrimaryIsNotAcknowledged() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        try (TcpProxy toB = new TcpProxy(HostPort.parse(b.replicationAddress()).getPort())) {
            pushThrough(toB, a, b);
            try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
                client.write(0, NbdServerTest.bytes(4096, 90)); // the link to b is up
                toB.holdDownstream(); // b's answers are held back
                client.request(Nbd.CMD_WRITE, 0, 1, 4 * MiB, 4096, NbdServerTest.bytes(4096, 91));
                client.flushOut();
                await().atMost(PATIENCE).until(() -> toB.heldDownstreamBytes() > 0);
                a.apply(configFor(A, 2, new ReplicationConfig(2, B, 1, List.of(copy(B, b, true), copy(A, a, false)))));
                toB.cut(); // the write is answered LINK_DOWN
                assertThat(client.readReply().error()).as("the write whose answer never came").isEqualTo(Nbd.ESHUTDOWN);
            }
        }
    }

    @Test
    void aCopyWhoseLinkFailsIsCopiedAgainWhatItHadNotForced() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        a.replication().flushEvery(Duration.ofHours(1)); // no FLUSH of a's own forces the write before the cut
        try (TcpProxy toB = new TcpProxy(HostPort.parse(b.replicationAddress()).getPort())) {
            pushThrough(toB, a, b);
            try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
                byte[] unforced = NbdServerTest.bytes(4096, 71);
                client.write(MiB, unforced); // b answered it, and has not forced it
                VolumeStore onB = b.replication().volume(VOLUME).store;
                onB.write(MiB, ByteBuffer.wrap(new byte[4096]), true); // b lost it (before the cut: nothing resyncs it yet)
                toB.holdDownstream();
                client.request(Nbd.CMD_WRITE, 0, 1, 4 * MiB, 4096, NbdServerTest.bytes(4096, 72));
                client.flushOut();
                await().atMost(PATIENCE).until(() -> toB.heldDownstreamBytes() > 0); // b's answer is held back
                toB.cut(); // the link fails: the write is answered LINK_DOWN, b leaves the set
                await().atMost(PATIENCE).until(() -> a.replication().volume(VOLUME).forwarded.waitingWrites() == 1);
                a.apply(configFor(A, 2, new ReplicationConfig(1, A, 1,
                        List.of(copy(A, a, true), new ReplicationConfig.Copy(B, toB.address(), false)))));
                assertThat(client.readReply().error()).as("the write, once its set is echoed").isZero();
                await().atMost(PATIENCE).untilAsserted(() -> assertThat(copyStatus(a, B).state()).as("b, with the link back")
                        .isEqualTo(AgentMessage.CopyState.inSync));
                assertThat(java.util.Arrays.equals(onCopy(b, MiB, 4096), unforced)).as("b holds the unforced write again")
                        .isTrue();
            }
        }
    }

    /**
     * Clients that never flush: the primary sends its copies a FLUSH of its own once what they
     * hold unforced is {@code flushEvery} old, so a copy that fails later is copied again where it
     * was written since, not wherever it was ever written.
     */
    @Test
    void aCopyWhoseClientsNeverFlushIsFlushedByItsPrimaryAndAFailureRecopiesOnlyWhatCameAfter() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        a.replication().flushEvery(Duration.ofMillis(100)); // 5 s by default: shortened, so the test waits less
        try (TcpProxy toB = new TcpProxy(HostPort.parse(b.replicationAddress()).getPort())) {
            pushThrough(toB, a, b);
            try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
                client.write(0, NbdServerTest.bytes(4096, 81)); // b answered it, unforced
                await().atMost(PATIENCE).until(() -> a.replication().volume(VOLUME).resync.unforcedRegions(B) == 0);
                toB.refuse(true); // b's link does not come back
                toB.cut();
                client.request(Nbd.CMD_WRITE, 0, 1, 4 * MiB, 4096, NbdServerTest.bytes(4096, 82));
                client.flushOut();
                await().atMost(PATIENCE).until(() -> a.replication().volume(VOLUME).forwarded.waitingWrites() == 1); // b left
                assertThat(copyStatus(a, B).resyncRemainingBytes()).as("b is to be copied the failed write's region only")
                        .isEqualTo(ReplicaCopy.REGION_BYTES);
            }
        }
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

        // a peer in clear, with a hello naming a and a well-formed request of the current epoch,
        // gets no reply and writes nothing
        String address = b.replicationAddress();
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", HostPort.parse(address).getPort())) {
            s.setSoTimeout((int) PATIENCE.toMillis());
            ByteBuffer frame = ByteBuffer.allocate(ReplicationWire.REQUEST_BYTES + 4096);
            new ReplicationWire.Request(ReplicationWire.WRITE, (byte) 0, 1, VOLUME, 1, 0, 4096).encode(frame);
            frame.limit(frame.capacity());
            s.getOutputStream().write(ReplicationWire.hello(A).array());
            s.getOutputStream().write(frame.array());
            assertThat(firstByte(s)).as("the connection is closed (or reset) unanswered").isEqualTo(-1);
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

    /**
     * Over TLS the hello must name the node of the sender's certificate: a's certificate with a
     * hello that says node c is closed unanswered (it would supersede c's connections), the same
     * link saying node a is answered.
     */
    @Test
    void aHelloThatNamesAnotherNodeThanTheCertificateIsTurnedAway() throws Exception {
        pki = TestPki.create("weir test CA");
        DataNode b = start("b");
        certify(b, B, 0x42);
        b.apply(configFor(B, 1, new ReplicationConfig(1, A, 0, List.of(new ReplicationConfig.Copy(A, null, true),
                copy(B, b, true)))));
        TestPki.Issued ofA = pki.issueNode(A, 0x41);
        NbdTls tls = new NbdTls(false);
        tls.serverCertificate(new ServerCertificate(ofA.keys().getPrivate(), ofA.certificate(), List.of(pki.certificate())));
        assertThat(ping(new ReplicaLink(C, B, b.replicationAddress(), new ReplicationTls(tls)))).as("a hello naming c")
                .isEqualTo(ReplicationWire.LINK_DOWN);
        assertThat(ping(new ReplicaLink(A, B, b.replicationAddress(), new ReplicationTls(tls)))).as("a hello naming a")
                .isEqualTo(ReplicationWire.OK);
    }

    /**
     * A copy takes requests for a volume only from the nodes its config names for that volume:
     * node c, with a certificate of the cluster CA but neither primary nor copy of the volume,
     * wrote to b's copy and, with a higher epoch, fenced it (a node deleted from the cluster keeps
     * a valid certificate until it expires). Its PING and its WRITE are refused and nothing lands;
     * b's epoch stays.
     */
    @Test
    void aNodeThatIsNeitherPrimaryNorCopyOfTheVolumeIsRefused() throws Exception {
        pki = TestPki.create("weir test CA");
        DataNode b = start("b");
        certify(b, B, 0x42);
        b.apply(configFor(B, 1, new ReplicationConfig(1, A, 0, List.of(new ReplicationConfig.Copy(A, null, true),
                copy(B, b, true)))));
        TestPki.Issued ofC = pki.issueNode(C, 0x43);
        NbdTls tls = new NbdTls(false);
        tls.serverCertificate(new ServerCertificate(ofC.keys().getPrivate(), ofC.certificate(), List.of(pki.certificate())));
        try (ReplicaLink link = new ReplicaLink(C, B, b.replicationAddress(), new ReplicationTls(tls))) {
            link.connect();
            CompletableFuture<Integer> ping = new CompletableFuture<>();
            link.send(ReplicationWire.PING, (byte) 0, VOLUME, Long.MAX_VALUE, 0, 0, null, (status, epoch) -> ping.complete(status));
            assertThat(ping.get(PATIENCE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)).as("c's PING")
                    .isEqualTo(ReplicationWire.NOT_A_COPY);
            CompletableFuture<Integer> write = new CompletableFuture<>();
            link.send(ReplicationWire.WRITE, (byte) 0, VOLUME, Long.MAX_VALUE, 0, 4096,
                    ByteBuffer.wrap(NbdServerTest.bytes(4096, 9)), (status, epoch) -> write.complete(status));
            assertThat(write.get(PATIENCE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)).as("c's WRITE")
                    .isEqualTo(ReplicationWire.NOT_A_COPY);
        }
        assertThat(onCopy(b, 0, 4096)).as("b's copy").isEqualTo(new byte[4096]);
        assertThat(b.replication().volume(VOLUME).epoch).isEqualTo(1);
    }

    /**
     * A peer that connects to the replication listener and never finishes its greeting (half a
     * hello in clear, nothing at all where the node speaks TLS) held a thread of the copy's node
     * for ever: it is closed once the greeting timeout has passed.
     */
    @Test
    void aPeerThatNeverFinishesItsGreetingIsClosed() throws Exception {
        DataNode clear = start("b");
        DataNode withTls = start("c");
        pki = TestPki.create("weir test CA");
        certify(withTls, C, 0x43);
        for (DataNode n : List.of(clear, withTls)) {
            n.replication().greetingTimeout(Duration.ofMillis(200)); // 10 s by default: shortened, so the test waits less
            String address = n.replicationAddress();
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", HostPort.parse(address).getPort())) {
                s.setSoTimeout((int) PATIENCE.toMillis());
                if (n == clear) {
                    s.getOutputStream().write(java.util.Arrays.copyOf(ReplicationWire.hello(A).array(), 10));
                }
                assertThat(firstByte(s)).as(n == clear ? "in clear" : "over TLS").isEqualTo(-1);
            }
        }
    }

    /**
     * Connections that have not greeted yet are bounded: past
     * {@link ReplicationServer#MAX_GREETING} of them, a new one is closed at once (each held a
     * thread until its greeting timeout, so a flood of silent connections took a thread each),
     * and a primary's link still comes up once they are gone.
     */
    @Test
    void connectionsThatHaveNotGreetedAreBoundedAndAPrimaryGetsInOnceTheyAreGone() throws Exception {
        DataNode a = start("a");
        DataNode b = start("b");
        b.replication().greetingTimeout(Duration.ofHours(1)); // the silent ones stay until the test closes them
        String address = b.replicationAddress();
        int port = HostPort.parse(address).getPort();
        List<java.net.Socket> silent = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < ReplicationServer.MAX_GREETING; i++) {
                silent.add(new java.net.Socket("127.0.0.1", port));
            }
            await().atMost(PATIENCE).until(() -> b.replication().connectionsGreeting() == ReplicationServer.MAX_GREETING);
            try (java.net.Socket one = new java.net.Socket("127.0.0.1", port)) {
                one.setSoTimeout((int) PATIENCE.toMillis());
                assertThat(firstByte(one)).as("one more, closed at once").isEqualTo(-1);
            }
        } finally {
            for (java.net.Socket s : silent) {
                s.close();
            }
        }
        await().atMost(PATIENCE).until(() -> b.replication().connectionsGreeting() == 0);
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        awaitAnnounced(a, B);
    }

    /**
     * The replies a copy's worker makes while it runs a batch of its primary's writes go out
     * together ({@link ReplyBatch}), as a client's would: one write for the batch, not one each
     * (a system call, and a wake-up of the primary's link, per reply). One worker: the first write
     * holds it in the store until the other seven are queued, and it then runs what is queued
     * behind the first in batches.
     */
    @Test
    void aCopysRepliesToABatchOfItsPrimarysWritesGoOutTogether() throws Exception {
        StoreGate gate = new StoreGate();
        DataNode b = startGated("b", gate);
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, null, true), copy(B, b, true))), b, B);
        int n = 8;
        ByteBuffer out = helloAndWrites(n);
        long writes = b.replication().replyWrites();
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", HostPort.parse(b.replicationAddress()).getPort())) {
            s.setSoTimeout((int) PATIENCE.toMillis());
            gate.arm();
            s.getOutputStream().write(out.array(), 0, out.position());
            assertThat(gate.entered(PATIENCE.toSeconds())).as("the first write reached the store").isTrue();
            await().atMost(PATIENCE).until(() -> b.executor().pending() == n);
            gate.release();
            assertThat(handlesOfOkReplies(s, n)).containsExactlyInAnyOrder(100L, 101L, 102L, 103L, 104L, 105L, 106L, 107L);
            // each write is counted as it begins, before the bytes it sends can be read here
            assertThat(b.replication().replyWrites() - writes)
                    .as("writes of the eight replies: the batch's, and the first's if the worker took it alone")
                    .isBetween(1L, 2L);
        }
        // every request counted answered: its node is forgotten once its connection ends
        await().atMost(PATIENCE).until(() -> b.replication().sendingNodes() == 0);
        assertThat(onCopy(b, 7 * 4096, 4096)).isEqualTo(NbdServerTest.bytes(4096, 7));
    }

    /**
     * The client replies that one read of a copy's answers completes go out together: the
     * primary's link reader holds them ({@link ReplyBatch#startHolding}) and writes them per
     * connection in one write, not one each. The copy has one worker, its first write held in the
     * store until the other seven are queued behind it, so that it answers those seven in one
     * write, which the primary reads at once.
     */
    @Test
    void theClientRepliesOneReadOfTheCopysAnswersCompletesGoOutTogether() throws Exception {
        DataNode a = start("a");
        StoreGate gate = new StoreGate();
        DataNode b = startGated("b", gate);
        a.replication().flushEvery(Duration.ofHours(1)); // no FLUSH of a's own among the writes
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        awaitAnnounced(a, B);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            assertThat(eightWritesBehindTheGate(c, gate, b, a.server()::gatheredReplies))
                    .as("client replies written together with others").isGreaterThan(1);
        }
    }

    /**
     * The forwards of a batch of client writes go to the copy together: a worker running a batch
     * holds them as it holds the batch's replies and writes them in one write, not one each. The
     * primary has one worker, its first write held in the store until the other seven are queued
     * behind it, so that it runs those seven as a batch.
     */
    @Test
    void theForwardsOfABatchOfClientWritesGoToTheCopyTogether() throws Exception {
        StoreGate gate = new StoreGate();
        DataNode a = startGated("a", gate);
        DataNode b = start("b");
        a.replication().flushEvery(Duration.ofHours(1)); // no FLUSH of a's own among the writes
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        awaitAnnounced(a, B);
        try (NbdTestClient c = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            assertThat(eightWritesBehindTheGate(c, gate, a, a.replication()::forwardWrites))
                    .as("writes of the eight forwards: the batch's, and the first's if the worker took it alone")
                    .isBetween(1L, 2L);
        }
        assertThat(onCopy(b, 7 * 4096, 4096)).isEqualTo(NbdServerTest.bytes(4096, 7));
    }

    /**
     * Pipelines eight 4 KiB writes (cookies 100 to 107) through {@code c}, the first held by
     * {@code gate} in {@code gated}'s store (a node of one worker) until all eight are queued
     * there, so that its worker runs the other seven as a batch, and checks that each is answered
     * OK. Answers how far {@code count} rose from just before the gate let go.
     */
    private static long eightWritesBehindTheGate(NbdTestClient c, StoreGate gate, DataNode gated,
            java.util.function.LongSupplier count) throws Exception {
        int n = 8;
        gate.arm();
        for (int i = 0; i < n; i++) {
            c.request(Nbd.CMD_WRITE, 0, 100 + i, 4096L * i, 4096, NbdServerTest.bytes(4096, i));
        }
        c.flushOut();
        assertThat(gate.entered(PATIENCE.toSeconds())).as("the first write reached the gated node's store").isTrue();
        await().atMost(PATIENCE).until(() -> gated.executor().pending() == n);
        long before = count.getAsLong();
        gate.release();
        List<Long> cookies = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            Reply r = c.readReply();
            assertThat(r.error()).isZero();
            cookies.add(r.cookie());
        }
        assertThat(cookies).containsExactlyInAnyOrder(100L, 101L, 102L, 103L, 104L, 105L, 106L, 107L);
        return count.getAsLong() - before;
    }

    /**
     * A copy forgets a sending node once its last connection has ended with every request
     * answered: in clear a hello may name any node, and a peer that named a new one on each
     * connection left an entry behind for each, without bound.
     */
    @Test
    void aSendingNodeIsForgottenOnceItsLastConnectionEnds() throws Exception {
        DataNode b = start("b");
        int port = HostPort.parse(b.replicationAddress()).getPort();
        int connections = 50;
        for (int i = 0; i < connections; i++) {
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
                s.getOutputStream().write(ReplicationWire.hello(java.util.UUID.randomUUID()).array());
            }
        }
        await().atMost(PATIENCE).until(() -> b.replication().connectionsEnded() == connections);
        assertThat(b.replication().sendingNodes()).as("nodes the copy keeps connections of").isZero();
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.getOutputStream().write(ReplicationWire.hello(A).array());
            await().atMost(PATIENCE).until(() -> b.replication().sendingNodes() == 1); // while it is open
        }
        await().atMost(PATIENCE).until(() -> b.replication().connectionsEnded() == connections + 1);
        assertThat(b.replication().sendingNodes()).isZero();
    }

    /**
     * A sending node is forgotten too when its connection ends while a request of it is still
     * being applied, once that request is answered: the check at the connection's end found it
     * unanswered and nothing looked again (a full local CI run met it in
     * {@link #aCopysRepliesToABatchOfItsPrimarysWritesGoOutTogether}, whose batch's ends were
     * counted just after their replies went out).
     */
    @Test
    void aSendingNodeIsForgottenOnceTheLastRequestOfItsEndedConnectionIsAnswered() throws Exception {
        StoreGate gate = new StoreGate();
        DataNode b = startGated("b", gate);
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, null, true), copy(B, b, true))), b, B);
        ByteBuffer out = helloAndWrites(1);
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", HostPort.parse(b.replicationAddress()).getPort())) {
            gate.arm();
            s.getOutputStream().write(out.array(), 0, out.position());
            assertThat(gate.entered(PATIENCE.toSeconds())).as("the write reached the store").isTrue();
        }
        await().atMost(PATIENCE).until(() -> b.replication().connectionsEnded() == 1);
        assertThat(b.replication().sendingNodes()).as("kept while its request is applied").isEqualTo(1);
        gate.release();
        await().atMost(PATIENCE).until(() -> b.replication().sendingNodes() == 0);
    }

    /**
     * A copy takes in at most its receive budget of its primaries' write payloads
     * ({@link DataNode.Builder#replicationReceiveBudget}): while its store holds them, the
     * connection's reader stops reading, and the sending node waits on TCP's window instead of the
     * copy's heap filling with writes it cannot apply yet (a few primaries sending large writes
     * to a slow copy took its heap without bound). A budget of 4 MiB, twelve 1 MiB writes, one
     * worker whose first write is held in the store: four are taken in, the other eight wait in
     * the network; once the store goes on, all twelve are applied and answered.
     */
    @Test
    void aCopyTakesInNoMoreOfItsPrimarysWritesThanItsReceiveBudgetWhileItsStoreHoldsThem() throws Exception {
        StoreGate gate = new StoreGate();
        DataNode b = closedAfterTheTest(gated("b", gate).replicationReceiveBudget(4 * MiB).build());
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, null, true), copy(B, b, true))), b, B);
        int n = 12;
        int size = (int) MiB;
        sendWhileTheStoreHoldsTheFirst(b, gate, helloAndWrites(n, size), n, () -> {
            assertThat(b.executor().pending()).as("writes taken in: one in the store, three queued").isEqualTo(4);
            assertThat(b.replication().receiveHeld()).isEqualTo(4 * MiB);
        });
        await().atMost(PATIENCE).until(() -> b.replication().sendingNodes() == 0);
        assertThat(b.replication().receiveHeld()).as("every payload given back once applied").isZero();
        assertThat(onCopy(b, (n - 1) * MiB, size)).isEqualTo(NbdServerTest.bytes(size, n - 1));
    }

    /**
     * A copy's volume queue holds {@link io.weir.scheduler.SchedulerConfig#DEFAULT_QUEUE_CAPACITY}
     * requests; a primary whose clients have more small writes in flight than that (many
     * connections at a deep queue) must not see the ones past it refused, which would put the copy
     * out of sync and copy it again: the copy reads no more of them while it holds that many.
     */
    @Test
    void aCopyTakesInNoMoreRequestsThanAVolumesQueueHoldsSoThatNoneOfASmallWriteFloodIsRefused() throws Exception {
        StoreGate gate = new StoreGate();
        DataNode b = closedAfterTheTest(gated("b", gate).build());
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, null, true), copy(B, b, true))), b, B);
        int n = io.weir.scheduler.SchedulerConfig.DEFAULT_QUEUE_CAPACITY + 100; // 4 KiB each: far within the byte budget
        sendWhileTheStoreHoldsTheFirst(b, gate, helloAndWrites(n), n, () -> assertThat(b.executor().pending())
                .as("requests taken in: one in the store, the rest queued").isEqualTo(io.weir.scheduler.SchedulerConfig.DEFAULT_QUEUE_CAPACITY));
        await().atMost(PATIENCE).until(() -> b.replication().sendingNodes() == 0);
        assertThat(b.replication().receiveHeld()).as("every payload given back once applied").isZero();
        assertThat(b.replication().receiveRequests()).as("every request given back once answered").isZero();
        assertThat(onCopy(b, (n - 1) * 4096L, 4096)).isEqualTo(NbdServerTest.bytes(4096, n - 1));
    }

    /**
     * Sends {@code out} (a hello and {@code n} writes, {@link #helloAndWrites}) to copy {@code b}
     * while its store holds the first write: once the copy stops reading (its receive budget full),
     * runs {@code whileHeld}, lets the store go on, and checks that every write is answered OK.
     */
    private static void sendWhileTheStoreHoldsTheFirst(DataNode b, StoreGate gate, ByteBuffer out, int n, Runnable whileHeld)
            throws Exception {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", HostPort.parse(b.replicationAddress()).getPort())) {
            s.setSoTimeout((int) PATIENCE.toMillis());
            gate.arm();
            // the copy stops reading: this write waits on the window until the store goes on
            CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
                try {
                    s.getOutputStream().write(out.array(), 0, out.position());
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            try {
                assertThat(gate.entered(PATIENCE.toSeconds())).as("the first write reached the store").isTrue();
                await().atMost(Duration.ofSeconds(30)).until(() -> b.replication().receiveWaiting() == 1);
                whileHeld.run();
            } finally {
                gate.release(); // else the node's worker stays in the store, and closing it waits for ever
            }
            assertThat(handlesOfOkReplies(s, n)).containsExactlyInAnyOrderElementsOf(java.util.stream.LongStream.range(100, 100 + n).boxed().toList());
            sent.get(PATIENCE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    /** The handles of the next {@code n} replies on {@code s}, each of which must be OK. */
    private static List<Long> handlesOfOkReplies(java.net.Socket s, int n) throws java.io.IOException {
        java.util.Map<Long, Integer> statuses = statusesByHandle(s, n);
        assertThat(statuses.values()).as("status").containsOnly(ReplicationWire.OK);
        return List.copyOf(statuses.keySet());
    }

    /**
     * What node A sends a copy on a new connection: its hello, then {@code n} 4 KiB WRITEs at
     * epoch 1 (handles 100 on, block i holding {@code bytes(4096, i)}); written up to its position.
     */
    private static ByteBuffer helloAndWrites(int n) {
        return helloAndWrites(n, 4096);
    }

    /** As {@link #helloAndWrites(int)}, with WRITEs of {@code size} bytes (write i at {@code i * size}). */
    private static ByteBuffer helloAndWrites(int n, int size) {
        ByteBuffer out = ByteBuffer.allocate(ReplicationWire.HELLO_BYTES + n * (ReplicationWire.REQUEST_BYTES + size));
        out.put(ReplicationWire.hello(A));
        ByteBuffer header = ByteBuffer.allocate(ReplicationWire.REQUEST_BYTES);
        for (int i = 0; i < n; i++) {
            new ReplicationWire.Request(ReplicationWire.WRITE, (byte) 0, 100 + i, VOLUME, 1, (long) size * i, size).encode(header);
            out.put(header).put(NbdServerTest.bytes(size, i));
        }
        return out;
    }

    /**
     * Rule 8 at the copy: a data file holds the token its primary gave it, and one that holds none
     * (made since: the copy's disk replaced, its file lost) refuses, as {@code NEW_COPY}, the
     * requests of a primary that gave it one, and a PING expecting another; an adopting PING gives
     * it one. A primary that gave it none is served as before (a new volume's first writes).
     */
    @Test
    void aCopyWhoseFileHoldsNotTheTokenItsPrimaryGaveItAnswersNewCopy() throws Exception {
        DataNode b = start("b");
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, null, true), copy(B, b, true))), b, B);
        ByteBuffer out = ByteBuffer.allocate(ReplicationWire.HELLO_BYTES + 8 * (ReplicationWire.REQUEST_BYTES + 4096));
        out.put(ReplicationWire.hello(A));
        java.util.function.BiConsumer<ReplicationWire.Request, byte[]> send = (q, data) -> {
            ByteBuffer header = ByteBuffer.allocate(ReplicationWire.REQUEST_BYTES);
            q.encode(header);
            out.put(header);
            if (data != null) {
                out.put(data);
            }
        };
        byte tokened = ReplicationWire.FLAG_TOKENED;
        send.accept(new ReplicationWire.Request(ReplicationWire.WRITE, tokened, 1, VOLUME, 1, 0, 4096), new byte[4096]);
        send.accept(new ReplicationWire.Request(ReplicationWire.WRITE, (byte) 0, 2, VOLUME, 1, 0, 4096), new byte[4096]);
        send.accept(new ReplicationWire.Request(ReplicationWire.PING, (byte) 0, 3, VOLUME, 1, 42, 0), null);
        send.accept(new ReplicationWire.Request(ReplicationWire.PING, ReplicationWire.FLAG_ADOPT, 4, VOLUME, 1, 42, 0), null);
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", HostPort.parse(b.replicationAddress()).getPort())) {
            s.setSoTimeout((int) PATIENCE.toMillis());
            s.getOutputStream().write(out.array(), 0, out.position());
            assertThat(statusesByHandle(s, 4)).as("status by handle").containsExactlyInAnyOrderEntriesOf(java.util.Map.of(
                    1L, ReplicationWire.NEW_COPY, 2L, ReplicationWire.OK, 3L, ReplicationWire.NEW_COPY, 4L, ReplicationWire.ADOPTED));

            out.clear();
            send.accept(new ReplicationWire.Request(ReplicationWire.WRITE, tokened, 5, VOLUME, 1, 0, 4096), new byte[4096]);
            send.accept(new ReplicationWire.Request(ReplicationWire.PING, (byte) 0, 6, VOLUME, 1, 42, 0), null);
            send.accept(new ReplicationWire.Request(ReplicationWire.PING, (byte) 0, 7, VOLUME, 1, 43, 0), null);
            s.getOutputStream().write(out.array(), 0, out.position());
            assertThat(statusesByHandle(s, 3)).as("status by handle, the token 42 kept").containsExactlyInAnyOrderEntriesOf(
                    java.util.Map.of(5L, ReplicationWire.OK, 6L, ReplicationWire.OK, 7L, ReplicationWire.NEW_COPY));
        }
        assertThat(b.replication().volume(VOLUME).store.copyToken()).isEqualTo(42);
    }

    /** The statuses of the next {@code n} replies on {@code s}, by handle (each handle once). */
    private static java.util.Map<Long, Integer> statusesByHandle(java.net.Socket s, int n) throws java.io.IOException {
        java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
        java.util.Map<Long, Integer> statuses = new java.util.LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            assertThat(in.readInt()).isEqualTo(ReplicationWire.REPLY_MAGIC);
            int status = in.readInt();
            long handle = in.readLong();
            assertThat(statuses.put(handle, status)).as("a second reply to handle %d", handle).isNull();
            in.readLong(); // epoch
        }
        return statuses;
    }

    /** A copy learns from the primary's hello who sends: a config of replicated volumes must name its node. */
    @Test
    void aConfigOfReplicatedVolumesThatNamesNoNodeIsRefused() throws Exception {
        DataNode b = start("b");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> b.apply(configFor(null, 1,
                new ReplicationConfig(1, A, 0, List.of(new ReplicationConfig.Copy(A, null, true), copy(B, b, true))))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names no node");
    }

    /** The first byte the peer sends on {@code s}, or -1 once it closed (or reset) it. */
    private static int firstByte(java.net.Socket s) throws java.io.IOException {
        try {
            return s.getInputStream().read();
        } catch (java.net.SocketException reset) {
            return -1;
        }
    }

    /** The answer to one PING of epoch 1 sent on {@code link}, which it then closes. */
    private static int ping(ReplicaLink link) throws Exception {
        try (link) {
            CompletableFuture<Integer> answer = new CompletableFuture<>();
            link.connect();
            link.send(ReplicationWire.PING, (byte) 0, VOLUME, 1, 0, 0, null, (status, epoch) -> answer.complete(status));
            return answer.get(PATIENCE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
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
            pushThrough(toB, a, b);
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
                await().atMost(PATIENCE).until(() -> a.replication().volume(VOLUME).forwarded.waitingWrites() == 1);

                a.apply(configFor(A, 3, new ReplicationConfig(1, A, 1,
                        List.of(copy(A, a, true), new ReplicationConfig.Copy(B, toB.address(), false)))));
                assertThat(client.readReply().error()).as("acknowledged once its set is echoed").isZero();
            }
        }
    }

    /**
     * A write waits for the control plane's echo (its copy failed it), and a peer then shows a
     * higher epoch: the node is deposed, and the write is answered ESHUTDOWN at once. A deposed
     * primary has usually lost the control plane, so the config that would fail it may never come.
     */
    @Test
    void aWriteWaitingForTheEchoIsAnsweredWhenAPeerDeposesThePrimary() throws Exception {
        TwoNodes n = twoNodesInSync();
        DataNode a = n.a();
        stop(n.b());
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            writeWaitingForTheEcho(a, client, 30); // b failed it and left the in-sync set
            assertThat(a.replication().volume(VOLUME).admit(B, 2)).as("b's request at epoch 2").isEqualTo(ReplicationWire.OK);
            assertThat(client.readReply().error()).as("the write, answered without a config").isEqualTo(Nbd.ESHUTDOWN);
            assertThat(a.replication().volume(VOLUME).forwarded.waitingWrites()).isZero();
        }
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

    /** The config-file mode: nothing promotes a copy, so a copy that fails does not hold writes for an echo. */
    @Test
    void inTheConfigFileModeACopyThatFailsHoldsNoWrite() throws Exception {
        DataNode a = startConfigFileOnly("a");
        DataNode b = start("b");
        push(1, new ReplicationConfig(1, A, 0, List.of(copy(A, a, true), copy(B, b, true))), b, B, a, A);
        try (NbdTestClient client = new NbdTestClient(a.listenAddress()).open("acme/db")) {
            // on b too, over the link the driver connected: were b stopped while that link was still
            // coming up, b's answer to a's first announcement could start a resync, and the state
            // read below would be resyncing
            client.write(0, NbdServerTest.bytes(4096, 32));
            stop(b);
            client.write(0, NbdServerTest.bytes(4096, 33));
        }
        assertThat(copyStatus(a, B).state()).isEqualTo(AgentMessage.CopyState.outOfSync);
    }
}
