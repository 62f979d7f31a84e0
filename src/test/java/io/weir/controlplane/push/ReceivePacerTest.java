package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The per-node token bucket of {@link ReceivePacer}, on a clock the test moves. */
class ReceivePacerTest {

    private static final long SECOND = 1_000_000_000L;

    private final AtomicLong now = new AtomicLong(42 * SECOND);

    private ReceivePacer pacer(double rate, int burst) {
        return new ReceivePacer(rate, burst, now::get);
    }

    @Test
    void aBurstPassesAtOnceThenEachFrameWaitsOneIntervalOfTheRate() {
        try (ReceivePacer pacer = pacer(100, 3)) {
            UUID node = UUID.randomUUID();
            assertThat(pacer.take(node)).isZero();
            assertThat(pacer.take(node)).isZero();
            assertThat(pacer.take(node)).isZero();
            assertThat(pacer.take(node)).as("the bucket is empty: stop reading for 1/100 s").isEqualTo(SECOND / 100);
            now.addAndGet(SECOND / 100);
            assertThat(pacer.take(node)).as("one token back, taken at once by the next frame").isEqualTo(SECOND / 100);
        }
    }

    @Test
    void theBucketRefillsAtTheRateUpToTheBurstOnly() {
        try (ReceivePacer pacer = pacer(10, 5)) {
            UUID node = UUID.randomUUID();
            for (int i = 0; i < 5; i++) {
                pacer.take(node);
            }
            now.addAndGet(SECOND / 2); // 5 tokens back
            for (int i = 0; i < 5; i++) {
                assertThat(pacer.take(node)).isZero();
            }
            assertThat(pacer.take(node)).isPositive();
            now.addAndGet(3600 * SECOND); // an hour idle refills the burst, no more
            for (int i = 0; i < 5; i++) {
                assertThat(pacer.take(node)).isZero();
            }
            assertThat(pacer.take(node)).isPositive();
        }
    }

    @Test
    void nodesHaveTheirOwnBuckets() {
        try (ReceivePacer pacer = pacer(1, 1)) {
            UUID flooder = UUID.randomUUID();
            pacer.take(flooder);
            assertThat(pacer.take(flooder)).isPositive();
            assertThat(pacer.take(UUID.randomUUID())).isZero();
        }
    }

    @Test
    void reconnectingDoesNotRefillABucketInDebtButAFullOneIsForgotten() {
        try (ReceivePacer pacer = pacer(1, 2)) {
            UUID node = UUID.randomUUID();
            pacer.take(node);
            pacer.take(node);
            pacer.take(node);
            pacer.closed(node);
            assertThat(pacer.take(node)).as("still in debt after its connection closed").isPositive();

            UUID quiet = UUID.randomUUID();
            pacer.take(quiet);
            now.addAndGet(10 * SECOND);
            pacer.closed(quiet);
            assertThat(pacer.take(quiet)).isZero();
        }
    }

    @Test
    void aRateOrBurstThatCouldNotPassAFrameIsRefusedAtStart() {
        assertThatThrownBy(() -> pacer(0, 10)).hasMessageContaining("weir.push.receive-rate");
        assertThatThrownBy(() -> pacer(10, 0)).hasMessageContaining("receive-burst");
    }
}
