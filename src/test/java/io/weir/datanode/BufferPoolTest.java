package io.weir.datanode;

import static io.weir.support.Bytes.MiB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The pool's size classes and what it keeps for reuse. */
class BufferPoolTest {

    private final BufferPool pool = new BufferPool(1L << 30);

    /** A structured reply's header is 20 bytes, a simple one's 16. */
    @Test
    void aReplyToAReadOfOneMebibyteTakesABufferOfOneMebibyteAndRoomForItsHeaderNotTwo() {
        ByteBuffer reply = pool.acquire((int) MiB + 20);
        assertThat(reply.capacity()).isEqualTo((int) MiB + BufferPool.HEADROOM);
        assertThat(reply.limit()).isEqualTo((int) MiB + 20);
        assertThat(pool.held()).isEqualTo(MiB + BufferPool.HEADROOM);
        ByteBuffer payload = pool.acquire((int) MiB);
        assertThat(payload.capacity()).as("a write's payload, the same class").isEqualTo(reply.capacity());
        ByteBuffer more = pool.acquire((int) MiB + BufferPool.HEADROOM + 1);
        assertThat(more.capacity()).isEqualTo(2 * (int) MiB + BufferPool.HEADROOM);
    }

    /** fio's 1 MiB writes at queue depth 32 hold 32 payloads at once, and again at the next 32. */
    @Test
    void theBuffersOfAClientOfOneMebibyteRequestsAtQueueDepth32AreKeptForReuse() {
        Set<ByteBuffer> first = Collections.newSetFromMap(new IdentityHashMap<>());
        List<ByteBuffer> inFlight = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            inFlight.add(pool.tryAcquire((int) MiB));
        }
        first.addAll(inFlight);
        inFlight.forEach(pool::release);
        assertThat(pool.idle()).isEqualTo(32 * (MiB + BufferPool.HEADROOM));

        inFlight.clear();
        for (int i = 0; i < 32; i++) {
            inFlight.add(pool.tryAcquire((int) MiB));
        }
        assertThat(inFlight).as("every buffer reused, none allocated").allMatch(first::contains);
        assertThat(pool.idle()).isZero();
    }

    @Test
    void theLargestBufferHoldsTheLargestPayloadAndAHeaderAndNothingLargerIsGiven() {
        ByteBuffer b = pool.acquire(BufferPool.MAX_BYTES);
        assertThat(b.capacity()).isEqualTo(NbdConnection.MAX_PAYLOAD + BufferPool.HEADROOM);
        pool.release(b);
        assertThatThrownBy(() -> pool.acquire(BufferPool.MAX_BYTES + 1))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
