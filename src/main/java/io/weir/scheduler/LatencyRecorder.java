package io.weir.scheduler;

import java.util.Arrays;
import org.HdrHistogram.Histogram;

/**
 * Latency recording for the hot path: a compact log-linear bucket array per node, read into an
 * HdrHistogram only when a snapshot is taken.
 *
 * <h2>Implementation notes</h2>
 *
 * <h3>Why not record into an HdrHistogram directly</h3>
 * With thousands of volumes every recording lands on a different, cold histogram. An
 * {@code org.HdrHistogram.Histogram} touches its object fields, the counts array header and the
 * bucket (three or four cache lines, plus min/max bookkeeping) per value; with two latencies per
 * request that alone cost more than the whole scheduling decision at 10,000 flows. Here a
 * recording is one increment in an {@code int[]} stored directly in the node: usually one or two
 * cache lines and no object indirection.
 *
 * <h3>Layout</h3>
 * Values are in units of {@code 2^UNIT_SHIFT} ns. Units below {@link #SUB_BUCKETS} are counted
 * exactly; above, each power of two is split into {@link #SUB_BUCKETS} equal buckets, the same
 * scheme as HdrHistogram with a fixed precision. The array covers only the range of buckets seen,
 * in chunks of {@value #GROW_CHUNK}: {@code counts[0]} is the index of the bucket counted in
 * {@code counts[1]}. Idle nodes cost nothing, and a node whose latencies stay within a factor of
 * two or four (the usual case) costs one to three chunks: 68-196 bytes, where an array from bucket 0
 * up to a 400 &micro;s wait would take a kilobyte. With tens of thousands of volumes that is the
 * difference between per-volume state that stays in the CPU's last-level cache and state that
 * does not.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class LatencyRecorder {

    /** Resolution floor: 2^7 = 128 ns; shorter latencies are not distinguished. */
    static final int UNIT_SHIFT = 7;

    /** log2 of {@link #SUB_BUCKETS}. */
    static final int SUB_BUCKET_BITS = 5;

    /** Buckets per power of two: relative error of a reported percentile below 1/32 (3.1%). */
    static final int SUB_BUCKETS = 1 << SUB_BUCKET_BITS;

    /** Growth granularity of the counts array, in buckets (a power of two). */
    static final int GROW_CHUNK = 16;

    private LatencyRecorder() {
    }

    /** Counts one value; returns the array to store back (it may have grown). */
    static int[] record(int[] counts, long nanos) {
        return recordIndex(counts, index(nanos));
    }

    /** Counts one value already mapped to its bucket by {@link #index}; returns the array to store back. */
    static int[] recordIndex(int[] counts, int i) {
        int j = position(counts, i);
        if (j > 0) {
            counts[j]++;
            return counts;
        }
        counts = grow(counts, i);
        counts[i - counts[0] + 1]++;
        return counts;
    }

    /**
     * Where bucket {@code i} is counted in {@code counts}, or 0 if the array (null or not) does not
     * cover it.
     */
    static int position(int[] counts, int i) {
        if (counts == null) {
            return 0;
        }
        int j = i - counts[0] + 1;
        return j >= 1 && j < counts.length ? j : 0;
    }

    /**
     * A counts array that also covers bucket {@code index}, with the old counts copied over. It
     * grows by at least half its length towards {@code index}, so that a range widening one
     * bucket at a time (a tail filling in) reallocates a logarithmic number of times, not linear.
     */
    private static int[] grow(int[] counts, int index) {
        int from = index & -GROW_CHUNK;
        int to = from + GROW_CHUNK;
        if (counts != null) {
            int oldFrom = counts[0];
            int oldTo = oldFrom + counts.length - 1;
            int step = Math.max(GROW_CHUNK, ((counts.length - 1) / 2) & -GROW_CHUNK);
            from = Math.max(0, Math.min(from, index < oldFrom ? oldFrom - step : oldFrom));
            to = Math.max(to, index >= oldTo ? oldTo + step : oldTo);
        }
        int[] grown = new int[1 + to - from];
        grown[0] = from;
        if (counts != null) {
            System.arraycopy(counts, 1, grown, 1 + counts[0] - from, counts.length - 1);
        }
        return grown;
    }

    static int index(long nanos) {
        long u = Math.max(0, nanos) >>> UNIT_SHIFT;
        if (u < SUB_BUCKETS) {
            return (int) u;
        }
        int e = 63 - Long.numberOfLeadingZeros(u);
        int top = (int) (u >>> (e - SUB_BUCKET_BITS)); // in [SUB_BUCKETS, 2 * SUB_BUCKETS)
        return SUB_BUCKETS + (e - SUB_BUCKET_BITS) * SUB_BUCKETS + (top - SUB_BUCKETS);
    }

    /** The midpoint of bucket {@code i}, in nanoseconds. */
    static long value(int i) {
        if (i < SUB_BUCKETS) {
            return ((long) i << UNIT_SHIFT) + (1L << (UNIT_SHIFT - 1));
        }
        int k = (i - SUB_BUCKETS) / SUB_BUCKETS;
        long top = SUB_BUCKETS + (i - SUB_BUCKETS) % SUB_BUCKETS;
        int shift = k; // e - SUB_BUCKET_BITS
        long lower = top << shift;
        long width = 1L << shift;
        return (lower << UNIT_SHIFT) + ((width << UNIT_SHIFT) >>> 1);
    }

    /**
     * Adds the counts into an HdrHistogram (values in nanoseconds). Highest bucket first: an
     * auto-resizing histogram then grows once to the largest value, not once per larger bucket
     * (each growth copies its counts and costs it a caught exception).
     */
    static void addTo(int[] counts, Histogram target) {
        if (counts == null) {
            return;
        }
        for (int j = counts.length - 1; j >= 1; j--) {
            if (counts[j] != 0) {
                target.recordValueWithCount(value(counts[0] + j - 1), counts[j]);
            }
        }
    }

    /** A new HdrHistogram suitable for {@link #addTo}. */
    static Histogram newHistogram() {
        return new Histogram(2);
    }

    /** Percentile of an HdrHistogram filled by {@link #addTo}, 0 if empty. */
    static long percentile(Histogram h, double p) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(p);
    }

    /** Percentile of one recorder's counts, 0 if empty. */
    static long percentile(int[] counts, double p) {
        if (counts == null) {
            return 0;
        }
        Histogram h = newHistogram();
        addTo(counts, h);
        return percentile(h, p);
    }

    static void reset(int[] counts) {
        if (counts != null) {
            Arrays.fill(counts, 1, counts.length, 0);
        }
    }
}
