package io.weir.controlplane.support;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The test context's {@link Clock}: the system clock plus an offset a test can move forward, so
 * expiries and rate-limit windows are tested without sleeping. {@link IntegrationTest} puts the
 * offset back to zero before each test.
 */
public final class MutableClock extends Clock {

    private volatile Duration offset = Duration.ZERO;

    /** Moves this clock forward by {@code amount}. */
    public void advance(Duration amount) {
        offset = offset.plus(amount);
    }

    /** Back to the system time. */
    public void reset() {
        offset = Duration.ZERO;
    }

    @Override
    public Instant instant() {
        return Instant.now().plus(offset);
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("the test clock is UTC only");
    }
}
