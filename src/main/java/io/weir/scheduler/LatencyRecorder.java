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
 * scheme as HdrHistogram with a fixed precision. The array grows on demand to the largest value
 * seen, so idle nodes cost nothing and typical ones a few hundred ints.
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

    /** Growth granularity of the counts array. */
    private static final int GROW_CHUNK = 64;

    private LatencyRecorder() {
    }

    /** Counts one value; returns the array to store back (it may have grown). */
    static int[] record(int[] counts, long nanos) {
        return recordIndex(counts, index(nanos));
    }

    /** Counts one value already mapped to its bucket by {@link #index}; returns the array to store back. */
    static int[] recordIndex(int[] counts, int i) {
        if (counts == null || i >= counts.length) {
            counts = grow(counts, i);
        }
        counts[i]++;
        return counts;
    }

    private static int[] grow(int[] counts, int index) {
        int len = (index / GROW_CHUNK + 1) * GROW_CHUNK;
        return counts == null ? new int[len] : Arrays.copyOf(counts, len);
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

    /** Adds the counts into an HdrHistogram (values in nanoseconds). */
    static void addTo(int[] counts, Histogram target) {
        if (counts == null) {
            return;
        }
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] != 0) {
                target.recordValueWithCount(value(i), counts[i]);
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
            Arrays.fill(counts, 0);
        }
    }
}
