package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The replies a worker holds while it runs a batch: when they go out, to whom, in what order. */
class ReplyBatchTest {

    private static final long US = 1_000;

    private final ReplyBatch batch = new ReplyBatch();
    /** What the sinks were asked, in order: "a:r1,r3" for a write, "a:done 7" for a request end. */
    private final List<String> events = new ArrayList<>();

    /** A connection that records what it is asked; while it writes, nothing is held. */
    private final class Recorder implements ReplyBatch.Sink {
        final String name;

        Recorder(String name) {
            this.name = name;
        }

        @Override
        public void sendNow(ByteBuffer[] replies, int n) {
            assertThat(ReplyBatch.current()).as("held while writing held replies").isNull();
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                ids.add("r" + replies[i].getInt(0));
            }
            events.add(name + ":" + String.join(",", ids));
        }

        @Override
        public void requestDone(long bytes) {
            events.add(name + ":done " + bytes);
        }
    }

    private static ByteBuffer reply(int id) {
        return ByteBuffer.allocate(16).putInt(0, id);
    }

    @AfterEach
    void endTheBatch() {
        batch.batchEnded(); // the worker's thread-local state must not outlive a test
    }

    @Test
    void outsideABatchNothingIsHeld() {
        assertThat(ReplyBatch.current()).isNull();
        batch.batchStarted();
        assertThat(ReplyBatch.current()).isNotNull();
        batch.batchEnded();
        assertThat(ReplyBatch.current()).isNull();
    }

    @Test
    void aBatchsRepliesGoOutInOneWritePerConnectionEachBeforeItsRequestEnds() {
        Recorder a = new Recorder("a");
        Recorder b = new Recorder("b");
        batch.batchStarted();
        ReplyBatch.Held held = ReplyBatch.current();
        long t = 0;
        for (int i = 1; i <= 3; i++) {
            Recorder to = i == 2 ? b : a;
            assertThat(held.hold(to, reply(i))).isTrue();
            assertThat(held.holdDone(to, i * 100)).isTrue();
            batch.requestRan(t, t + 5 * US);
            t += 5 * US;
        }
        assertThat(events).as("nothing out before the batch ends").isEmpty();
        batch.batchEnded();
        assertThat(events).containsExactly("a:r1,r3", "a:done 100", "a:done 300", "b:r2", "b:done 200");
    }

    @Test
    void aReplyWaitsForTheRequestsAfterItAtMostMaxHold() {
        Recorder a = new Recorder("a");
        batch.batchStarted();
        ReplyBatch.Held held = ReplyBatch.current();
        held.hold(a, reply(1));
        batch.requestRan(0, 10 * US);
        held.hold(a, reply(2));
        batch.requestRan(10 * US, 20 * US);
        assertThat(events).as("held 10 us").isEmpty();
        held.hold(a, reply(3));
        batch.requestRan(20 * US, 10 * US + ReplyBatch.MAX_HOLD_NANOS);
        assertThat(events).as("the first held for MAX_HOLD").containsExactly("a:r1,r2,r3");
        held.hold(a, reply(4));
        batch.requestRan(60 * US, 65 * US);
        batch.batchEnded();
        assertThat(events).containsExactly("a:r1,r2,r3", "a:r4");
    }

    @Test
    void aSlowRequestsReplyGoesOutWhenItEnds() {
        Recorder a = new Recorder("a");
        batch.batchStarted();
        ReplyBatch.current().hold(a, reply(1));
        batch.requestRan(0, ReplyBatch.MAX_HOLD_NANOS);
        assertThat(events).containsExactly("a:r1");
    }

    @Test
    void aWorkerWhoseHoldIsFullSendsAtOnce() {
        Recorder a = new Recorder("a");
        batch.batchStarted();
        ReplyBatch.Held held = ReplyBatch.current();
        for (int i = 0; i < ReplyBatch.CAPACITY; i++) {
            assertThat(held.hold(a, reply(i))).isTrue();
        }
        assertThat(held.hold(a, reply(-1))).as("full").isFalse();
        assertThat(held.holdDone(a, 1)).as("full").isFalse();
        batch.batchEnded();
        assertThat(events).hasSize(1);
        assertThat(events.get(0)).startsWith("a:r0,r1,").endsWith(",r63");
    }
}
