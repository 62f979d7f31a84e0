package io.weir.datanode;

import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.datanode.NbdServerTest.bytes;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The data node out of direct memory, with real clients on 127.0.0.1: the node-wide budget of
 * request buffers holds write-heavy clients back instead of failing, and an allocation that fails
 * anyway (OutOfMemoryError) costs one connection or one request, never the server.
 */
class NbdDirectMemoryTest {
    static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;
    DataNode node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
    }

    void start(DataNode.Builder builder) throws IOException {
        node = builder.dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2).build();
        // "slow" is capped at 20 IOPS: its writes pile up in the node, as on a throttled volume
        node.apply(config().tenant("acme").volume("acme", "slow", 64 * MiB, 100, null, 20L)
                .volume("acme", "fast", 16 * MiB).build());
    }

    NbdTestClient client() throws IOException {
        return new NbdTestClient(node.listenAddress());
    }

    /**
     * A pool that fails once, as an exhausted JVM does, to allocate a new buffer of a capacity
     * that {@code fails} matches.
     */
    static final class FailingPool extends BufferPool {
        final IntPredicate fails;
        final AtomicBoolean armed = new AtomicBoolean(true);

        FailingPool(IntPredicate fails) {
            super(256 * MiB);
            this.fails = fails;
        }

        @Override
        ByteBuffer newBuffer(int capacity) {
            if (fails.test(capacity) && armed.compareAndSet(true, false)) {
                throw new OutOfMemoryError("Cannot reserve " + capacity + " bytes of direct buffer memory (test)");
            }
            return super.newBuffer(capacity);
        }
    }

    @Test
    void writeHeavyClientsBeyondTheBudgetAreHeldBackNotFailedAndOthersAreStillServed() throws Exception {
        long budget = 4 * MiB;
        start(DataNode.builder().bufferBudget(budget));
        // one capped volume per writer: a volume alone holds at most half the budget (its share)
        node.apply(config().tenant("acme").volume("acme", "slow", 64 * MiB, 100, null, 20L)
                .volume("acme", "slow1", 64 * MiB, 100, null, 20L).volume("acme", "slow2", 64 * MiB, 100, null, 20L)
                .volume("acme", "slow3", 64 * MiB, 100, null, 20L).volume("acme", "fast", 16 * MiB).revision(2).build());
        BufferPool pool = node.server().pool;
        int clients = 4;
        int writesEach = 4;
        int size = (int) MiB;
        List<CompletableFuture<List<Integer>>> writers = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int client = c;
            writers.add(CompletableFuture.supplyAsync(() -> {
                try (NbdTestClient w = client().open(client == 0 ? "acme/slow" : "acme/slow" + client)) {
                    for (int i = 0; i < writesEach; i++) {
                        long offset = (long) (client * writesEach + i) * size;
                        w.request(Nbd.CMD_WRITE, 0, i, offset, size, bytes(size, client * writesEach + i));
                    }
                    w.flushOut(); // blocks while the node holds this client back
                    List<Integer> errors = new ArrayList<>();
                    for (int i = 0; i < writesEach; i++) {
                        errors.add(w.readReply().error());
                    }
                    return errors;
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }));
        }
        // the budget is taken: a newcomer still gets its greeting and is served meanwhile
        await().atMost(WAIT).until(() -> pool.held() >= budget - MiB);
        try (NbdTestClient newcomer = client().open("acme/fast")) {
            newcomer.write(0, bytes(4096, 7));
            assertThat(newcomer.read(0, 4096)).isEqualTo(bytes(4096, 7));
        }
        for (CompletableFuture<List<Integer>> w : writers) {
            assertThat(w.get(WAIT.toSeconds(), TimeUnit.SECONDS)).as("every write answered, without error")
                    .containsOnly(0);
        }
        assertThat(pool.maxHeld()).as("buffers held never exceed the budget and one request")
                .isLessThanOrEqualTo(budget + size + 64 * 1024);
        try (NbdTestClient reader = client().open("acme/slow2")) { // client 2's
            assertThat(reader.read((long) (2 * writesEach + 3) * size, 4096)).isEqualTo(
                    java.util.Arrays.copyOf(bytes(size, 2 * writesEach + 3), 4096));
        }
    }

    /**
     * Requests hold their buffers from the moment they are read until they are answered, also
     * while a volume's limit parks them in the scheduler. A client of a capped volume that kept
     * writing filled the node's whole budget with parked writes, and every other tenant's large
     * requests waited for that volume's limit: here a minute per write. A volume that holds
     * buffers may take another only while it would hold no more than the budget leaves free
     * (dynamic threshold), so it never holds more than half, and others find room.
     */
    @Test
    void aCappedVolumesParkedWritesLeaveRoomInTheBudgetForOtherVolumes() throws Exception {
        start(DataNode.builder().bufferBudget(4 * MiB));
        node.apply(config().tenant("acme").tenant("capped", 100, null, 16 * 1024L).volume("acme", "slow", 64 * MiB)
                .volume("acme", "fast", 16 * MiB).volume("capped", "hog", 16 * MiB).revision(2).build());
        String hog = TestConfigs.volumeId("capped", "hog").toString();
        try (NbdTestClient writer = client().open("capped/hog"); NbdTestClient other = client().open("acme/fast")) {
            // 1 MiB / 16 KiB/s: after the first, one a minute; sent from another thread, which
            // blocks once the node, holding the volume to its share, stops reading them
            CompletableFuture.runAsync(() -> {
                try {
                    for (int i = 0; i < 6; i++) {
                        writer.request(Nbd.CMD_WRITE, 0, i, (long) i * MiB, MiB, bytes((int) MiB, i));
                    }
                    writer.flushOut();
                } catch (IOException e) {
                    // the test closed the connection while this still sent
                }
            });
            await().atMost(WAIT).until(() -> node.executor().queueDepths().getOrDefault(hog, 0L) >= 1);

            long started = System.nanoTime();
            assertThat(other.read(0, (int) MiB)).as("another tenant's 1 MiB read").hasSize((int) MiB);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).as("it waited for a parked write before, a minute")
                    .isLessThan(Duration.ofSeconds(30));
            assertThat(node.executor().queueDepths().getOrDefault(hog, 0L)).as("the capped volume's writes still wait")
                    .isGreaterThanOrEqualTo(1);
            assertThat(node.volume("capped/hog").requestBytes.get()).as("the capped volume's share of the budget")
                    .isPositive().isLessThanOrEqualTo(2 * MiB);
        }
    }

    @Test
    void aRequestLargerThanTheWholeBudgetStillGoesThroughWhenNothingElseIsHeld() throws Exception {
        start(DataNode.builder().bufferBudget(MiB));
        try (NbdTestClient c = client().open("acme/fast")) {
            c.write(0, bytes((int) (4 * MiB), 3));
            assertThat(c.read(0, (int) (4 * MiB))).isEqualTo(bytes((int) (4 * MiB), 3));
        }
    }

    @Test
    void anOutOfMemoryErrorOnTheSelectorThreadClosesThatConnectionOnly() throws Exception {
        int marker = 3 * (int) MiB + 512; // the victim's write payload, the only buffer of 4 MiB
        start(DataNode.builder().bufferPool(new FailingPool(capacity -> capacity == 4 * MiB + BufferPool.HEADROOM)));
        try (NbdTestClient bystander = client().open("acme/fast"); NbdTestClient victim = client().open("acme/fast")) {
            bystander.write(0, bytes(4096, 1));
            try {
                victim.request(Nbd.CMD_WRITE, 0, 1, 0, marker, bytes(marker, 2));
                victim.flushOut();
            } catch (IOException e) {
                // closed while its payload was still on its way
            }
            assertThat(victim.closedByServer()).as("the connection whose buffer failed is closed").isTrue();
            assertThat(bystander.read(0, 4096)).isEqualTo(bytes(4096, 1));
            try (NbdTestClient newcomer = client().open("acme/fast")) {
                assertThat(newcomer.read(0, 4096)).isEqualTo(bytes(4096, 1));
            }
            await().atMost(WAIT).until(() -> node.connectionCount() == 1);
        }
    }

    @Test
    void anOutOfMemoryErrorBuildingAReadReplyStillAnswersTheRequest() throws Exception {
        // the first read reply buffer of 16 KiB, then (re-armed) the first of 64 KiB, fails
        int structuredLen = 12 << 10;
        int simpleLen = 40 << 10;
        FailingPool pool = new FailingPool(capacity -> capacity == (16 << 10) + BufferPool.HEADROOM);
        start(DataNode.builder().bufferPool(pool));
        try (NbdTestClient structured = client().open("acme/fast")) {
            NbdTestClient.Reply r = structured.call(Nbd.CMD_READ, 0, 0, structuredLen, null);
            assertThat(r.error()).as("an error chunk, not silence").isIn(Nbd.ENOMEM, Nbd.EIO);
            assertThat(structured.read(0, structuredLen)).as("the connection goes on").hasSize(structuredLen);
        }
        FailingPool simplePool = new FailingPool(capacity -> capacity == (64 << 10) + BufferPool.HEADROOM);
        node.close();
        start(DataNode.builder().bufferPool(simplePool));
        try (NbdTestClient simple = client().openSimple("acme/fast")) {
            NbdTestClient.Reply r = simple.call(Nbd.CMD_READ, 0, 0, simpleLen, null);
            assertThat(r.error()).as("a simple error reply, not silence").isIn(Nbd.ENOMEM, Nbd.EIO);
            assertThat(simple.read(0, simpleLen)).hasSize(simpleLen);
        }
    }
}
