package io.weir.scheduler;

/**
 * A source of monotonic time in nanoseconds, injectable so that schedulers, executors and tests
 * agree on one clock.
 *
 * <p>Values follow {@link System#nanoTime()} semantics: only differences are meaningful, and two
 * readings are compared by subtraction ({@code a - b < 0}), never with {@code <}, so that the
 * scheduler stays correct across numeric wrap-around.
 *
 * <p>Implementations must be thread-safe. {@link #system()} is the production source;
 * {@link ManualTimeSource} is the deterministic source for tests and the simulator.
 */
@FunctionalInterface
public interface TimeSource {

    /** Returns the current time in nanoseconds. */
    long nanoTime();

    /** Returns the time source backed by {@link System#nanoTime()}. */
    static TimeSource system() {
        return System::nanoTime;
    }
}
