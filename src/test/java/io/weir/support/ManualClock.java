package io.weir.support;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock that stands still until a test moves it ({@link #advance}, {@link #set}): for code that
 * reads a {@link Clock}, so that expiries, intervals and renewals are tested without sleeping.
 * (The control plane's test context uses {@code MutableClock} instead: the system time plus an
 * offset, since a whole application runs on it.)
 */
public final class ManualClock extends Clock {

    private volatile Instant now;

    public ManualClock(Instant start) {
        this.now = start;
    }

    /** Moves the clock forward by {@code amount}. */
    public void advance(Duration amount) {
        now = now.plus(amount);
    }

    /** Sets the clock to {@code instant}. */
    public void set(Instant instant) {
        now = instant;
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
