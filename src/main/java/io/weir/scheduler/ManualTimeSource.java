package io.weir.scheduler;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link TimeSource} that only moves when told to. Used by tests and by the simulator so that
 * every scheduling decision is reproducible.
 *
 * <p>Thread-safe: readers see the latest value written by {@link #advance} or {@link #set}.
 */
public final class ManualTimeSource implements TimeSource {

    private final AtomicLong now;

    /** Creates a clock reading {@code 0}. */
    public ManualTimeSource() {
        this(0L);
    }

    /** Creates a clock reading {@code startNanos}. */
    public ManualTimeSource(long startNanos) {
        this.now = new AtomicLong(startNanos);
    }

    @Override
    public long nanoTime() {
        return now.get();
    }

    /** Moves the clock forward by {@code nanos} (which must not be negative) and returns the new time. */
    public long advance(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("time cannot go backwards: " + nanos);
        }
        return now.addAndGet(nanos);
    }

    /** Moves the clock forward by {@code amount} of {@code unit}. */
    public long advance(long amount, TimeUnit unit) {
        return advance(unit.toNanos(amount));
    }

    /** Sets the clock to {@code nanos}, which must not be earlier than the current reading. */
    public void set(long nanos) {
        long prev = now.get();
        if (nanos - prev < 0) {
            throw new IllegalArgumentException("time cannot go backwards: " + prev + " -> " + nanos);
        }
        now.set(nanos);
    }
}
