package io.weir.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/** Reconnect delays: exponential, capped, with full jitter, drawn from a random source the test controls. */
class BackoffTest {

    /** Answers 0 always: the low end of full jitter. */
    private static final class LowestDraw implements RandomGenerator {
        @Override
        public long nextLong() {
            return 0;
        }

        @Override
        public long nextLong(long bound) {
            return 0;
        }
    }

    @Test
    void ceilingDoublesWithEachFailureUpToTheCap() {
        HighestDraw random = new HighestDraw();
        Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000), random);

        List<Long> delays = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            delays.add(backoff.next().toMillis());
        }

        assertThat(delays).containsExactly(100L, 200L, 400L, 800L, 1000L, 1000L, 1000L);
    }

    @Test
    void fullJitterDrawsFromZeroToTheCeilingInclusive() {
        HighestDraw random = new HighestDraw();
        Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000), random);

        backoff.next();
        backoff.next();

        // [0, ceiling] inclusive: nextLong(ceiling + 1), in nanoseconds
        assertThat(random.bounds).containsExactly(100_000_001L, 200_000_001L);
        assertThat(new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000), new LowestDraw()).next()).isZero();
    }

    @Test
    void resetStartsOverFromTheInitialCeiling() {
        Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(30), new HighestDraw());
        for (int i = 0; i < 5; i++) {
            backoff.next();
        }
        assertThat(backoff.ceilingNanos()).isEqualTo(Duration.ofMillis(3200).toNanos());

        backoff.reset();

        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void aControlPlaneAwayForAVeryLongTimeNeverOverflowsTheDelay() {
        Backoff backoff = new Backoff(Duration.ofNanos(1), Duration.ofDays(1), new HighestDraw());
        for (int i = 0; i < 10_000; i++) {
            assertThat(backoff.next()).isBetween(Duration.ZERO, Duration.ofDays(1));
        }
        assertThat(backoff.ceilingNanos()).isEqualTo(Duration.ofDays(1).toNanos());
    }

    @Test
    void boundsMustBePositiveAndOrdered() {
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1), new LowestDraw()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1), new LowestDraw()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
