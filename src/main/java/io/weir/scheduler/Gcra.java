package io.weir.scheduler;

import java.math.BigInteger;

/**
 * One rate constraint in the form of the Generic Cell Rate Algorithm (virtual-scheduling form),
 * the integer-exact equivalent of a token bucket.
 *
 * <h2>Implementation notes</h2>
 *
 * <h3>Model</h3>
 * The state is the theoretical arrival time {@code tat}. A request may start when
 * {@code now >= tat - tau}; starting a request of {@code units} moves
 * {@code tat = max(tat, now) + units / rate}. The credit available at {@code now} is
 * {@code (now + tau - max(tat, now)) * rate}: it grows at {@code rate - actualRate} while the flow
 * runs below the rate and is capped at {@code tau * rate}, exactly SolidFire's burst-credit rule
 * [1] when {@code tau = BURST_SECONDS * (burst - max) / max}.
 *
 * <h3>Exactness</h3>
 * {@code units * 1e9 / rate} is carried with its remainder (Bresenham style), so rounding never
 * accumulates: after any sequence of charges {@code tat} is within 1 ns of the exact rational
 * value. Times compare by subtraction so {@code System.nanoTime()} wrap-around is harmless. The
 * product {@code units * 1e9} fits a {@code long} for every request size the scheduler accepts
 * ({@link HierarchicalScheduler#MAX_REQUEST_BYTES}); where the carried remainder of an extreme rate
 * would overflow it, the charge is computed exactly in {@code BigInteger} instead.
 *
 * <h3>Admission</h3>
 * The test is made before the cost is added, so a request larger than the remaining credit may
 * still start (one request of overdraft, paid back before the next one starts). Over any window
 * of length {@code d}, the admitted units are therefore at most {@code rate * d + rate * tau +
 * Lmax}. This keeps large requests from starving under small tolerances.
 *
 * <p>[1] NetApp, "How do burst credits work in the context of Element QoS", KB article.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class Gcra {

    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    /**
     * Most units whose {@code units * 1e9} fits a {@code long} with room for the carried remainder
     * of any rate up to {@code 4.9e18}: {@code 2^32}, which covers
     * {@link HierarchicalScheduler#MAX_REQUEST_BYTES}.
     */
    static final long MAX_FAST_UNITS = 1L << 32;

    final long rate;
    final long tauNanos;
    private long tat;
    private long rem;

    /**
     * @param rate units per second, {@code > 0}
     * @param tauNanos tolerance; the credit cap is {@code rate * tauNanos / 1e9}
     * @param now creation time; the constraint starts with no credit
     */
    Gcra(long rate, long tauNanos, long now) {
        if (rate <= 0) {
            throw new IllegalArgumentException("rate must be > 0");
        }
        this.rate = rate;
        this.tauNanos = tauNanos;
        this.tat = now + tauNanos;
    }

    /** Earliest time at which the next request may start. */
    long eligibleAt() {
        return tat - tauNanos;
    }

    /** Records that a request of {@code units} (at most {@code 2^32}) started at {@code now}. */
    void charge(long now, long units) {
        long base = tat - now < 0 ? now : tat;
        long num = units * NANOS_PER_SECOND + rem;
        if (units > MAX_FAST_UNITS || num < 0) {
            chargeWide(base, units);
            return;
        }
        tat = base + num / rate;
        rem = num % rate;
    }

    /**
     * {@link #charge} for a request that starts whatever this constraint says (a reservation served
     * past its tenant's limit): the debt it leaves is at most its own {@code units / rate}, whatever
     * was owed before, so that service the constraint did not admit is never paid back later by
     * requests it does admit.
     */
    void chargeUnadmitted(long now, long units) {
        if (tat - (now + tauNanos) > 0) { // in debt: from here on, no credit and no debt
            tat = now + tauNanos;
            rem = 0;
        }
        charge(now, units);
    }

    /**
     * {@link #charge} when {@code units * 1e9 + rem} does not fit a {@code long}: a rate above
     * {@code 4.9e18} units/s, or more units than a request can have. Rare, so exact and slow.
     */
    private void chargeWide(long base, long units) {
        BigInteger[] qr = BigInteger.valueOf(units).multiply(BigInteger.valueOf(NANOS_PER_SECOND))
                .add(BigInteger.valueOf(rem)).divideAndRemainder(BigInteger.valueOf(rate));
        // the quotient is below 2^63 ns for any rate >= 1 and units <= 2^32; saturate beyond
        long q = qr[0].bitLength() < 63 ? qr[0].longValue() : Long.MAX_VALUE / 2;
        tat = base + q;
        rem = qr[1].longValue();
    }

    /** The burst credit available at {@code now}, in units. */
    long credit(long now) {
        long base = tat - now < 0 ? now : tat;
        long slack = now + tauNanos - base;
        return slack <= 0 ? 0 : (long) ((double) slack * rate / NANOS_PER_SECOND);
    }

    long tat() {
        return tat;
    }
}
