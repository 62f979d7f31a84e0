package io.weir.agent;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.random.RandomGenerator;

/**
 * A jitter source for backoff tests: answers the largest value allowed, {@code bound - 1}, and
 * records each bound asked for (a delay's ceiling + 1, in nanoseconds), from any thread.
 */
final class HighestDraw implements RandomGenerator {

    /** The bounds asked for, in order. */
    final List<Long> bounds = new CopyOnWriteArrayList<>();

    @Override
    public long nextLong() {
        throw new UnsupportedOperationException();
    }

    @Override
    public long nextLong(long bound) {
        bounds.add(bound);
        return bound - 1;
    }
}
