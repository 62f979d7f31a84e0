package io.weir.scheduler;

import org.HdrHistogram.AbstractHistogram;
import org.HdrHistogram.IntCountsHistogram;

/**
 * Records latencies into an HdrHistogram, allocated on first use so that idle flows cost no
 * memory. Values are kept in microseconds (sub-microsecond latencies record as 0).
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class LatencyRecorder {

    /** Significant decimal digits: 2 gives 1% value resolution with ~4-8 KiB per histogram. */
    static final int SIGNIFICANT_DIGITS = 2;

    private IntCountsHistogram histogram;

    void recordNanos(long nanos) {
        if (histogram == null) {
            histogram = new IntCountsHistogram(SIGNIFICANT_DIGITS);
        }
        histogram.recordValue(Math.max(0, nanos) / 1000);
    }

    /** Percentile in nanoseconds, 0 if nothing was recorded. */
    long percentileNanos(double p) {
        return histogram == null || histogram.getTotalCount() == 0 ? 0 : histogram.getValueAtPercentile(p) * 1000;
    }

    void addTo(AbstractHistogram target) {
        if (histogram != null) {
            target.add(histogram);
        }
    }

    void reset() {
        if (histogram != null) {
            histogram.reset();
        }
    }
}
