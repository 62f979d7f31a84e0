package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The socket under a TLS session, on a real socket pair on 127.0.0.1: the records written in a
 * batch reach the peer together at the flush, in order with writes made outside it; a full socket
 * leaves them staged for the next flush; no room in the budget sends them one by one.
 */
class RecordBatchingChannelTest {

    private ServerSocketChannel listener;
    private SocketChannel sender;
    /** The peer, blocking: what the other end of the connection receives. */
    private SocketChannel peer;
    private BufferPool pool;
    private RecordBatchingChannel channel;

    @BeforeEach
    void connect() throws IOException {
        listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        sender = SocketChannel.open(listener.getLocalAddress());
        peer = listener.accept();
        sender.configureBlocking(false);
        peer.configureBlocking(false);
        pool = new BufferPool(64L << 20);
        channel = new RecordBatchingChannel(sender, pool);
    }

    @AfterEach
    void close() throws IOException {
        channel.close();
        peer.close();
        listener.close();
    }

    private static ByteBuffer record(int size, int seed) {
        ByteBuffer b = ByteBuffer.allocate(size);
        for (int i = 0; i < size; i++) {
            b.put((byte) (seed + i));
        }
        return b.flip();
    }

    /** What the peer can read now, without waiting. */
    private byte[] peerReadsNow() throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        ByteBuffer b = ByteBuffer.allocate(64 << 10);
        int n;
        while ((n = peer.read(b)) > 0) {
            got.write(b.array(), 0, n);
            b.clear();
        }
        return got.toByteArray();
    }

    /** Reads from the peer until {@code n} bytes have arrived. */
    private byte[] peerReads(int n) throws IOException {
        peer.configureBlocking(true);
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (peer.read(b) < 0) {
                break;
            }
        }
        peer.configureBlocking(false);
        return b.array();
    }

    private static byte[] concat(ByteBuffer... parts) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (ByteBuffer p : parts) {
            all.write(p.array(), 0, p.limit());
        }
        return all.toByteArray();
    }

    @Test
    void theRecordsOfABatchReachThePeerTogetherAtTheFlushAndTheBufferGoesBack() throws IOException {
        ByteBuffer a = record(16_406, 1);
        ByteBuffer b = record(16_406, 2);
        ByteBuffer c = record(3_000, 3);
        byte[] expected = concat(a.duplicate(), b.duplicate(), c.duplicate());

        channel.batch();
        assertThat(channel.write(a)).isEqualTo(16_406);
        assertThat(channel.write(b)).isEqualTo(16_406);
        assertThat(channel.write(c)).isEqualTo(3_000);
        assertThat(peerReadsNow()).as("nothing is sent before the flush").isEmpty();
        assertThat(pool.held()).isEqualTo(RecordBatchingChannel.BATCH_BYTES + BufferPool.HEADROOM);

        assertThat(channel.flush()).isEqualTo(expected.length);
        assertThat(channel.hasStaged()).isFalse();
        assertThat(pool.held()).as("the batch buffer is back in the pool").isZero();
        assertThat(peerReads(expected.length)).isEqualTo(expected);
    }

    @Test
    void aWriteOutsideTheBatchIsSentAtOnceWhenNothingIsStagedAndQueuesBehindStagedRecords() throws Exception {
        ByteBuffer handshake = record(500, 4);
        ByteBuffer staged = record(8_000, 5);
        ByteBuffer closeNotify = record(24, 6);

        // from another thread, with nothing staged: straight to the socket
        CompletableFuture.runAsync(() -> write(handshake)).get();
        assertThat(peerReads(500)).isEqualTo(concat(handshake.duplicate().rewind()));

        channel.batch();
        channel.write(staged);
        CompletableFuture.runAsync(() -> write(closeNotify)).get();
        assertThat(peerReadsNow()).as("not sent ahead of the staged record").isEmpty();
        channel.flush();
        assertThat(peerReads(8_024)).isEqualTo(concat(staged.duplicate().rewind(), closeNotify.duplicate().rewind()));
    }

    private void write(ByteBuffer b) {
        try {
            channel.write(b);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aFullSocketLeavesTheRestStagedUntilAFlushFindsRoomAndNothingIsLostOrReordered() throws IOException {
        sender.setOption(StandardSocketOptions.SO_SNDBUF, 16 << 10);
        ByteArrayOutputStream sent = new ByteArrayOutputStream();
        channel.batch();
        int seed = 0;
        int refused = 0;
        // the peer reads nothing: the socket fills, then the staging buffer
        while (refused == 0) {
            ByteBuffer r = record(16_406, seed++);
            ByteBuffer copy = r.duplicate();
            int n = channel.write(r);
            if (n == 0) {
                refused++;
                assertThat(r.remaining()).as("a refused record is left whole with its writer").isEqualTo(16_406);
            } else {
                sent.write(copy.array(), 0, n);
            }
        }
        channel.flush();
        assertThat(channel.hasStaged()).as("the peer has read nothing yet").isTrue();

        byte[] expected = sent.toByteArray();
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        while (got.size() < expected.length) {
            got.write(peerReadsNow());
            channel.flush();
        }
        assertThat(got.toByteArray()).isEqualTo(expected);
        assertThat(channel.hasStaged()).isFalse();
        assertThat(pool.held()).isZero();
    }

    @Test
    void withNoRoomInTheNodesBudgetRecordsGoStraightToTheSocket() throws IOException {
        pool = new BufferPool(64 << 10);
        channel = new RecordBatchingChannel(sender, pool);
        ByteBuffer held = pool.acquire(32 << 10); // another connection's reply
        ByteBuffer r = record(16_406, 7);
        channel.batch();
        assertThat(channel.write(r)).isEqualTo(16_406);
        assertThat(channel.hasStaged()).isFalse();
        assertThat(peerReads(16_406)).isEqualTo(concat(r.rewind()));
        pool.release(held);
    }

    @Test
    void withNoDirectMemoryLeftInTheJvmRecordsGoStraightToTheSocket() throws IOException {
        pool = new BufferPool(64L << 20) {
            @Override
            ByteBuffer newBuffer(int capacity) {
                throw new OutOfMemoryError("Cannot reserve " + capacity + " bytes of direct buffer memory");
            }
        };
        channel = new RecordBatchingChannel(sender, pool);
        ByteBuffer r = record(16_406, 10);
        channel.batch();
        assertThat(channel.write(r)).isEqualTo(16_406);
        assertThat(channel.hasStaged()).isFalse();
        assertThat(pool.held()).isZero();
        assertThat(peerReads(16_406)).isEqualTo(concat(r.rewind()));
    }

    @Test
    void closingGivesTheStagedBufferBackAndRefusesLaterWrites() throws IOException {
        channel.batch();
        channel.write(record(1_000, 8));
        assertThat(pool.held()).isPositive();
        channel.close();
        assertThat(pool.held()).isZero();
        assertThatThrownBy(() -> channel.write(record(10, 9))).isInstanceOf(ClosedChannelException.class);
    }
}
