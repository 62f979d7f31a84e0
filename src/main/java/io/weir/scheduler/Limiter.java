package io.weir.scheduler;

/**
 * The limits of one node of the flow hierarchy (a volume or a tenant): maximum IOPS and maximum
 * bytes/s, each optionally with SolidFire-style bursting.
 *
 * <h2>Implementation notes</h2>
 * Each configured dimension is a pair of {@link Gcra} constraints:
 * <ol>
 *   <li>the <em>sustained</em> constraint at {@code max} with tolerance
 *       {@code BURST_SECONDS * (burst - max) / max}, which holds the burst credit (capped at
 *       {@value #BURST_SECONDS} s worth of bursting, as in Element OS);</li>
 *   <li>the <em>peak</em> constraint at {@code burst} with tolerance
 *       {@link #JITTER_TOLERANCE_NANOS}, which bounds the rate while credit is being spent.</li>
 * </ol>
 * Without a burst setting only the sustained constraint exists, with tolerance
 * {@link #JITTER_TOLERANCE_NANOS}. A node is eligible when every constraint is.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class Limiter {

    /** Burst credit cap in seconds of bursting at {@code burst - max} (Element OS's fixed burstTime). */
    static final long BURST_SECONDS = 60;

    /**
     * Tolerance of every constraint that carries no burst credit. It absorbs timer and wake-up
     * jitter (a worker that wakes 5 ms late does not lose 5 ms of its cap) at the price of a
     * micro-burst of at most this much time's worth of the rate (40 IOs under a 2,000 IOPS cap).
     * 2 ms was too little on a busy 2-core data node: workers woke later than that often enough
     * that a 2,000 IOPS cap delivered 1,903-1,912 IOPS to fio (DataNodeQosE2ETest).
     */
    static final long JITTER_TOLERANCE_NANOS = 20_000_000L;

    static final Limiter UNLIMITED = new Limiter(null, null, null, null);

    private final Gcra iops;
    private final Gcra iopsPeak;
    private final Gcra bytes;
    private final Gcra bytesPeak;
    final boolean unlimited;

    private Limiter(Gcra iops, Gcra iopsPeak, Gcra bytes, Gcra bytesPeak) {
        this.iops = iops;
        this.iopsPeak = iopsPeak;
        this.bytes = bytes;
        this.bytesPeak = bytesPeak;
        this.unlimited = iops == null && bytes == null;
    }

    static Limiter of(long maxIops, long burstIops, long maxBytes, long burstBytes, long now) {
        if (maxIops == 0 && maxBytes == 0) {
            return UNLIMITED;
        }
        return new Limiter(sustained(maxIops, burstIops, now), peak(burstIops, now),
                sustained(maxBytes, burstBytes, now), peak(burstBytes, now));
    }

    private static Gcra sustained(long max, long burst, long now) {
        if (max == 0) {
            return null;
        }
        long tau = burst > max
                ? (long) ((double) BURST_SECONDS * (burst - max) / max * 1e9)
                : JITTER_TOLERANCE_NANOS;
        return new Gcra(max, Math.max(tau, JITTER_TOLERANCE_NANOS), now);
    }

    private static Gcra peak(long burst, long now) {
        return burst == 0 ? null : new Gcra(burst, JITTER_TOLERANCE_NANOS, now);
    }

    /** Earliest time at which the node may start its next request; any value {@code <= now} means now. */
    long eligibleAt(long now) {
        if (unlimited) {
            return now;
        }
        long e = now;
        e = later(e, iops);
        e = later(e, iopsPeak);
        e = later(e, bytes);
        e = later(e, bytesPeak);
        return e;
    }

    private static long later(long e, Gcra g) {
        if (g == null) {
            return e;
        }
        long x = g.eligibleAt();
        return x - e > 0 ? x : e;
    }

    /**
     * Records that {@code ops} requests (1, or 0 for a request's continuation) moving
     * {@code nbytes} started at {@code now}.
     */
    void charge(long now, int ops, long nbytes) {
        charge(now, ops, nbytes, false);
    }

    /**
     * {@link #charge} for a request that started although this limiter did not admit it (a
     * reservation served past its tenant's limits): each constraint keeps at most this request's
     * debt ({@link Gcra#chargeUnadmitted}).
     */
    void chargeUnadmitted(long now, int ops, long nbytes) {
        charge(now, ops, nbytes, true);
    }

    private void charge(long now, int ops, long nbytes, boolean unadmitted) {
        if (unlimited) {
            return;
        }
        if (ops > 0) {
            charge(iops, now, ops, unadmitted);
            charge(iopsPeak, now, ops, unadmitted);
        }
        charge(bytes, now, nbytes, unadmitted);
        charge(bytesPeak, now, nbytes, unadmitted);
    }

    private static void charge(Gcra g, long now, long units, boolean unadmitted) {
        if (g == null) {
            return;
        }
        if (unadmitted) {
            g.chargeUnadmitted(now, units);
        } else {
            g.charge(now, units);
        }
    }

    /** Remaining IOPS burst credit (ops), or 0 when not configured. */
    long iopsCredit(long now) {
        return iopsPeak == null ? 0 : iops.credit(now);
    }

    /** Remaining bytes burst credit, or 0 when not configured. */
    long bytesCredit(long now) {
        return bytesPeak == null ? 0 : bytes.credit(now);
    }
}
