package io.weir.datanode;

import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.datanode.NbdServerTest.bytes;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile clients against a fresh node, with real sockets on 127.0.0.1 (issue 23): a client that
 * pipelines options or requests and never reads its replies is not read from once its unread
 * replies reach the bounds, is dropped after the write-stall timeout, and costs the other clients
 * nothing. The node runs with its defaults except a write-stall timeout of 3 s (30 s by default),
 * so that the drop is seen in seconds.
 */
class NbdHostileClientTest {
    static final Duration WAIT = Duration.ofSeconds(60);
    static final Duration STALL = Duration.ofSeconds(3);
    /** How long the flood waits for the node to take more bytes before it concludes the node stopped reading. */
    static final Duration QUIET = Duration.ofSeconds(1);
    /** The flood stops here if the node never stops reading: far more than any bound lets through. */
    static final long FLOOD_CAP = 16 * MiB;

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
        node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 16 * MiB).build());
    }

    NbdTestClient client() throws IOException {
        return new NbdTestClient(node.listenAddress());
    }

    /** The most replies any connection may have unwritten: the in-flight limit, plus the replies of one option. */
    static int replyBound(int exports) {
        return NbdServer.Limits.defaults().maxInFlight() + exports + 1;
    }

    /**
     * Sends {@code unit} over and over on {@code ch} (made non-blocking) and reads nothing, until
     * {@link #FLOOD_CAP} bytes are sent, the node takes no byte for {@link #QUIET}, or the node
     * closes the connection. Returns the bytes sent.
     */
    static long flood(SocketChannel ch, byte[] unit) throws IOException {
        ch.configureBlocking(false);
        ByteBuffer src = ByteBuffer.allocate(unit.length * 4096);
        while (src.hasRemaining()) {
            src.put(unit);
        }
        src.flip();
        long sent = 0;
        try (Selector selector = Selector.open()) {
            ch.register(selector, SelectionKey.OP_WRITE);
            while (sent < FLOOD_CAP) {
                if (!src.hasRemaining()) {
                    src.rewind();
                }
                int n;
                try {
                    n = ch.write(src);
                } catch (IOException closed) {
                    return sent;
                }
                if (n > 0) {
                    sent += n;
                    continue;
                }
                selector.selectedKeys().clear();
                if (selector.select(QUIET.toMillis()) == 0) {
                    return sent; // the node took nothing for QUIET: it stopped reading
                }
            }
        }
        return sent;
    }

    static byte[] option(int option) {
        return ByteBuffer.allocate(16).putLong(Nbd.IHAVEOPT).putInt(option).putInt(0).array();
    }

    static byte[] request(int type, long offset, int length) {
        return ByteBuffer.allocate(Nbd.REQUEST_HEADER_BYTES).putInt(Nbd.REQUEST_MAGIC).putShort((short) 0)
                .putShort((short) type).putLong(7).putLong(offset).putInt(length).array();
    }

    @Test
    void aClientThatPipelinesListOptionsAndNeverReadsIsNoLongerReadThenDroppedAndOthersAreServed() throws Exception {
        start(DataNode.builder().writeStallTimeout(STALL));
        try (NbdTestClient honest = client().open("acme/db2"); SocketChannel flooder = SocketChannel.open()) {
            honest.write(0, bytes(4096, 1));
            flooder.setOption(StandardSocketOptions.SO_SNDBUF, 64 << 10);
            flooder.connect(node.listenAddress());
            flooder.write(ByteBuffer.allocate(4).putInt(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES).flip());
            // the greeting stays unread; each LIST asks for 3 replies (2 exports and the ACK)
            long sent = flood(flooder, option(Nbd.OPT_LIST));

            assertThat(node.server().peakQueuedReplies()).as("replies the node queued for one connection (sent %d"
                    + " bytes of options)", sent).isLessThanOrEqualTo(replyBound(2));
            await().atMost(WAIT).until(() -> node.connectionCount() == 1);
            assertThat(honest.read(0, 4096)).as("the other client is still served").isEqualTo(bytes(4096, 1));
            try (NbdTestClient newcomer = client().handshake()) {
                assertThat(newcomer.option(Nbd.OPT_LIST, new byte[0])).hasSize(3);
            }
        }
    }

    @Test
    void aClientThatPipelinesInvalidRequestsAndNeverReadsIsNoLongerReadThenDroppedAndOthersAreServed() throws Exception {
        start(DataNode.builder().writeStallTimeout(STALL));
        try (NbdTestClient honest = client().open("acme/db2"); NbdTestClient flooder = NbdTestClient.overChannel(
                node.listenAddress()).open("acme/db1")) {
            honest.write(0, bytes(4096, 2));
            SocketChannel ch = flooder.socket.getChannel();
            // READs of length 0: each answered at once with EINVAL, without reaching the scheduler
            CompletableFuture<Long> flood = CompletableFuture.supplyAsync(() -> {
                try {
                    return flood(ch, request(Nbd.CMD_READ, 0, 0));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            int reads = 0;
            long slowestNanos = 0;
            while (!flood.isDone() || reads < 100) {
                long t0 = System.nanoTime();
                assertThat(honest.read((reads % 16) * 4096L, 4096)).hasSize(4096);
                slowestNanos = Math.max(slowestNanos, System.nanoTime() - t0);
                reads++;
            }
            long sent = flood.get(WAIT.toSeconds(), TimeUnit.SECONDS);

            assertThat(node.server().peakQueuedReplies()).as("replies the node queued for one connection (sent %d"
                    + " bytes of requests)", sent).isLessThanOrEqualTo(replyBound(0));
            await().atMost(WAIT).until(() -> node.connectionCount() == 1);
            assertThat(honest.read(0, 4096)).as("the other client is still served after %d reads during the flood,"
                    + " the slowest %d ms", reads, slowestNanos / 1_000_000).isEqualTo(bytes(4096, 2));
        }
    }

    /** Reads until the node closes the connection; fails if it stays open for the client's socket timeout (20 s). */
    static void assertClosedByNode(NbdTestClient c) throws IOException {
        while (c.in.read() >= 0) {
            // replies still on their way
        }
    }

    @Test
    void idleConnectionsHoldingTheNodesCapMakeRoomForANewClientAndBusyOnesStay() throws Exception {
        // the global cap of 4 is full of idle connections; idle 300 ms is enough to be evicted (10 s by default)
        start(DataNode.builder().maxConnections(4).idleEvictAfter(Duration.ofMillis(300)));
        List<NbdTestClient> idle = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                idle.add(client().open("acme/db1"));
            }
            long idleSince = System.nanoTime();
            await().atMost(WAIT).until(() -> System.nanoTime() - idleSince > TimeUnit.MILLISECONDS.toNanos(400));
            try (NbdTestClient newcomer = client().open("acme/db2")) {
                newcomer.write(0, bytes(4096, 3));
                assertThat(newcomer.read(0, 4096)).isEqualTo(bytes(4096, 3));
                assertClosedByNode(idle.get(0)); // the one idle longest
                for (NbdTestClient c : idle.subList(1, 4)) {
                    assertThat(c.read(0, 4096)).as("the other idle connections are kept").hasSize(4096);
                }
            }
        } finally {
            for (NbdTestClient c : idle) {
                c.close();
            }
        }
    }

    @Test
    void oneSourceIsCappedUnderTheGlobalCapAndItsOwnIdleConnectionsMakeRoom() throws Exception {
        // every test client comes from 127.0.0.1: one source; a cap of 3 for it, 1024 in all; idle 5 s to be evicted
        Duration evictAfter = Duration.ofSeconds(5);
        start(DataNode.builder().maxConnectionsPerSource(3).idleEvictAfter(evictAfter));
        List<NbdTestClient> open = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                open.add(client().open("acme/db1"));
            }
            try (NbdTestClient refused = client()) {
                assertClosedByNode(refused); // no greeting: its connections have not been idle for 5 s
            }
            assertThat(node.connectionCount()).isEqualTo(3);
            open.get(0).write(0, bytes(4096, 4)); // the first is the most recently busy now
            long busy = System.nanoTime();
            await().atMost(WAIT).until(() -> System.nanoTime() - busy > evictAfter.toNanos() + 100_000_000L);
            try (NbdTestClient newcomer = client().open("acme/db2")) {
                assertThat(newcomer.read(0, 4096)).hasSize(4096);
                assertClosedByNode(open.get(1)); // its source's connection idle longest
                assertThat(open.get(0).read(0, 4096)).isEqualTo(bytes(4096, 4));
                assertThat(open.get(2).read(0, 4096)).hasSize(4096);
            }
        } finally {
            for (NbdTestClient c : open) {
                c.close();
            }
        }
    }

    @Test
    void aRequestBegunMustFinishArrivingWithinTheRequestTimeoutButAnIdleConnectionStays() throws Exception {
        start(DataNode.builder().requestTimeout(Duration.ofSeconds(1)));
        try (NbdTestClient idle = client().open("acme/db2"); NbdTestClient header = client().open("acme/db1");
                NbdTestClient payload = client().open("acme/db1"); NbdTestClient tooBig = client().open("acme/db1")) {
            // 10 of a header's 28 bytes, then nothing
            header.out.write(request(Nbd.CMD_READ, 0, 4096), 0, 10);
            header.flushOut();
            // a whole WRITE header, then 1 KiB of its 64 KiB payload, then nothing
            payload.out.write(request(Nbd.CMD_WRITE, 0, 64 << 10));
            payload.out.write(new byte[1024]);
            payload.flushOut();
            // a WRITE above the largest payload (its payload is read and dropped, then refused), 1 KiB of it, then nothing
            tooBig.out.write(request(Nbd.CMD_WRITE, 0, NbdConnection.MAX_PAYLOAD + 4096));
            tooBig.out.write(new byte[1024]);
            tooBig.flushOut();
            long t0 = System.nanoTime();
            assertClosedByNode(header);
            assertClosedByNode(payload);
            assertClosedByNode(tooBig);
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            assertThat(idle.read(0, 4096)).as("an idle connection is not closed (the dripping ones took %s)", took)
                    .hasSize(4096);
            assertThat(node.connectionCount()).isEqualTo(1);
        }
    }
}
