package io.weir.agent;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Reconnect delays: exponential backoff with full jitter ("Exponential Backoff and Jitter",
 * AWS Architecture Blog, 2015). The n-th consecutive failure waits a uniformly random time in
 * {@code [0, min(max, initial * 2^n)]}; a success {@linkplain #reset() resets} n to 0. What
 * counts as a success is the caller's to say: {@link QosAgent} resets only once a connection has
 * proven healthy (contact a while after it opened), not on the first message, so that a peer
 * that accepts and drops at once does not hold the delay at its initial ceiling.
 *
 * <p>Full jitter spreads the reconnects of many agents that lost the same control plane at the
 * same moment over the whole window, so a restarted replica is not hit by all of them at once.
 *
 * <p>Implementation notes: the exponent stops growing once the ceiling reaches {@code max}, so
 * it never overflows however long the control plane stays away. Not thread-safe; the agent uses
 * it from its one event thread.
 */
final class Backoff {

    private final long initialNanos;
    private final long maxNanos;
    private final RandomGenerator random;
    private int failures;

    /**
     * @param initial the ceiling of the first delay; {@code > 0}
     * @param max the ceiling no delay exceeds; {@code >= initial}
     * @param random the source of the jitter (a seeded or scripted one in tests)
     */
    Backoff(Duration initial, Duration max, RandomGenerator random) {
        this.initialNanos = initial.toNanos();
        this.maxNanos = max.toNanos();
        this.random = Objects.requireNonNull(random, "random");
        if (initialNanos <= 0 || maxNanos < initialNanos) {
            throw new IllegalArgumentException("backoff needs 0 < initial <= max: " + initial + ", " + max);
        }
    }

    /** The delay before the next attempt, after one more failure. */
    Duration next() {
        long ceiling = ceilingNanos();
        if (ceiling < maxNanos) {
            failures++;
        }
        return Duration.ofNanos(random.nextLong(ceiling + 1));
    }

    /** The upper bound of the delay {@link #next()} answers now. */
    long ceilingNanos() {
        long ceiling = initialNanos;
        for (int i = 0; i < failures && ceiling < maxNanos; i++) {
            ceiling = ceiling > maxNanos / 2 ? maxNanos : ceiling * 2;
        }
        return Math.min(ceiling, maxNanos);
    }

    /** Forgets the failures: the next delay is drawn from {@code [0, initial]} again. */
    void reset() {
        failures = 0;
    }
}
