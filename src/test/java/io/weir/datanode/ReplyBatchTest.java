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

    private final ReplyBatch batch = new ReplyBatch(ReplyBatch.DEFAULT_HOLD_NANOS);
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

    /** Next in the batch: a quick NBD request, and work that may wait (a FLUSH, a background step). */
    private static final ReplyBatch.Work QUICK = () -> true;
    private static final Object MAY_WAIT = (ReplyBatch.Work) () -> false;

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
        long t = 0;
        for (int i = 1; i <= 3; i++) {
            Recorder to = i == 2 ? b : a;
            ReplyBatch.current().hold(to, reply(i));
            ReplyBatch.current().holdDone(to, i * 100);
            boolean wrote = batch.requestRan(t, t + 5 * US, i < 3 ? QUICK : null);
            assertThat(wrote).as("wrote after request %d", i).isEqualTo(i == 3);
            if (i < 3) {
                assertThat(events).as("nothing out before the batch's last request").isEmpty();
            }
            t += 5 * US;
        }
        assertThat(events).containsExactly("a:r1,r3", "a:done 100", "a:done 300", "b:r2", "b:done 200");
    }

    @Test
    void aReplyWaitsForTheRequestsAfterItAtMostMaxHold() {
        Recorder a = new Recorder("a");
        batch.batchStarted();
        ReplyBatch.current().hold(a, reply(1));
        batch.requestRan(0, 10 * US, QUICK);
        ReplyBatch.current().hold(a, reply(2));
        batch.requestRan(10 * US, 20 * US, QUICK);
        assertThat(events).as("held 10 us").isEmpty();
        ReplyBatch.current().hold(a, reply(3));
        assertThat(batch.requestRan(20 * US, 10 * US + ReplyBatch.DEFAULT_HOLD_NANOS, QUICK)).isTrue();
        assertThat(events).as("the first held for the hold time").containsExactly("a:r1,r2,r3");
        ReplyBatch.current().hold(a, reply(4));
        batch.requestRan(60 * US, 65 * US, null);
        assertThat(events).containsExactly("a:r1,r2,r3", "a:r4");
    }

    @Test
    void noReplyIsHeldAcrossWorkThatMayWait() {
        Recorder a = new Recorder("a");
        batch.batchStarted();
        ReplyBatch.current().hold(a, reply(1));
        assertThat(batch.requestRan(0, 5 * US, MAY_WAIT)).isTrue();
        assertThat(events).containsExactly("a:r1");
        ReplyBatch.current().hold(a, reply(2));
        assertThat(batch.requestRan(5 * US, 10 * US, new Object())).as("work that cannot tell may wait").isTrue();
        assertThat(events).containsExactly("a:r1", "a:r2");
    }

    @Test
    void aSlowRequestsReplyGoesOutWhenItEnds() {
        Recorder a = new Recorder("a");
        batch.batchStarted();
        ReplyBatch.current().hold(a, reply(1));
        assertThat(batch.requestRan(0, ReplyBatch.DEFAULT_HOLD_NANOS, QUICK)).isTrue();
        assertThat(events).containsExactly("a:r1");
    }

    /** A replication link's queued forwards are held with the batch's replies, each link told once, after the replies. */
    @Test
    void aBatchsForwardsGoOutOncePerLinkAfterItsReplies() {
        Recorder a = new Recorder("a");
        ReplyBatch.Outbox toB = link("b");
        ReplyBatch.Outbox toC = link("c");
        batch.batchStarted();
        ReplyBatch.current().holdWrites(toB);
        assertThat(batch.requestRan(0, 5 * US, QUICK)).as("a forward alone is held too").isFalse();
        ReplyBatch.current().hold(a, reply(1));
        ReplyBatch.current().holdWrites(toC);
        ReplyBatch.current().holdWrites(toB);
        batch.requestRan(5 * US, 10 * US, QUICK);
        assertThat(events).isEmpty();
        assertThat(batch.requestRan(10 * US, 15 * US, MAY_WAIT)).isTrue();
        assertThat(events).containsExactly("a:r1", "link b", "link c");
        ReplyBatch.current().holdWrites(toC);
        assertThat(batch.requestRan(15 * US, 20 * US, QUICK)).isFalse();
        assertThat(batch.requestRan(20 * US, 20 * US + ReplyBatch.DEFAULT_HOLD_NANOS - 1, QUICK)).isFalse();
        assertThat(events).hasSize(3);
        assertThat(batch.requestRan(20 * US + ReplyBatch.DEFAULT_HOLD_NANOS - 1, 20 * US + ReplyBatch.DEFAULT_HOLD_NANOS, QUICK))
                .as("a forward waits at most the hold time").isTrue();
        assertThat(events).containsExactly("a:r1", "link b", "link c", "link c");
    }

    /** One link more than it holds writes the links it held first. */
    @Test
    void aHoldOfAsManyLinksAsItTakesWritesThemBeforeTakingAnother() {
        batch.batchStarted();
        for (int i = 0; i < ReplyBatch.OUTBOXES; i++) {
            ReplyBatch.current().holdWrites(link("l" + i));
        }
        assertThat(events).isEmpty();
        ReplyBatch.current().holdWrites(link("last"));
        assertThat(events).hasSize(ReplyBatch.OUTBOXES).doesNotContain("link last");
        batch.batchEnded();
        assertThat(events).hasSize(ReplyBatch.OUTBOXES + 1).endsWith("link last");
    }

    /** A replication link that records when it is told to write; while it writes, nothing is held. */
    private ReplyBatch.Outbox link(String name) {
        return () -> {
            assertThat(ReplyBatch.current()).as("held while writing held requests").isNull();
            events.add("link " + name);
        };
    }

    @Test
    void aFullHoldWritesWhatItHoldsBeforeTakingMore() {
        Recorder a = new Recorder("a");
        batch.batchStarted();
        for (int i = 0; i < ReplyBatch.CAPACITY; i++) {
            ReplyBatch.current().hold(a, reply(i));
        }
        assertThat(events).isEmpty();
        ReplyBatch.current().holdDone(a, 7);
        assertThat(events).hasSize(1);
        assertThat(events.get(0)).startsWith("a:r0,r1,").endsWith(",r63");
        batch.batchEnded();
        assertThat(events).containsExactly(events.get(0), "a:done 7");
    }

    @Test
    void aConnectionWhoseWriteThrowsStillHasItsRequestsCountedAndTheOthersGoOut() {
        Recorder b = new Recorder("b");
        ReplyBatch.Sink broken = new ReplyBatch.Sink() {
            @Override
            public void sendNow(ByteBuffer[] replies, int n) {
                throw new IllegalStateException("broken");
            }

            @Override
            public void requestDone(long bytes) {
                events.add("broken:done " + bytes);
            }
        };
        batch.batchStarted();
        ReplyBatch.current().hold(broken, reply(1));
        ReplyBatch.current().holdDone(broken, 1);
        ReplyBatch.current().hold(b, reply(2));
        ReplyBatch.current().holdDone(b, 2);
        batch.batchEnded();
        assertThat(events).containsExactly("broken:done 1", "b:r2", "b:done 2");
    }
}
