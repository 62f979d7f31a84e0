package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import java.util.SplittableRandom;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/**
 * {@link LatencyRecorder}'s counts cover only the buckets seen, growing at either end; the
 * percentiles must be those of every value recorded, to the recorder's precision.
 */
class LatencyRecorderTest {

    /** Relative error of a bucket midpoint: half a bucket of 1/32 of its power of two. */
    private static final double PRECISION = 1.0 / LatencyRecorder.SUB_BUCKETS;

    @Test
    void percentilesAreThoseOfAllValuesWhereverTheyFallAndWhateverTheOrder() {
        for (long seed = 0; seed < 20; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            int[] counts = null;
            Histogram exact = new Histogram(3);
            // a band that drifts down and then up, so the array grows at both ends
            long center = 200_000 + r.nextInt(800_000);
            for (int i = 0; i < 20_000; i++) {
                if (i == 5_000) {
                    center /= 50;
                } else if (i == 12_000) {
                    center *= 400;
                }
                long v = center / 2 + r.nextLong(center);
                counts = LatencyRecorder.record(counts, v);
                exact.recordValue(v);
            }
            Histogram h = LatencyRecorder.newHistogram();
            LatencyRecorder.addTo(counts, h);
            assertThat(h.getTotalCount()).isEqualTo(20_000);
            for (double p : new double[] {1, 25, 50, 90, 99, 99.9}) {
                long expected = exact.getValueAtPercentile(p);
                long actual = LatencyRecorder.percentile(h, p);
                assertThat((double) actual).as("p%s, seed %d", p, seed)
                        .isCloseTo(expected, offset(expected * PRECISION + 200));
            }
        }
    }

    @Test
    void aNarrowBandTakesOneChunkNotAnArrayFromZero() {
        int[] counts = null;
        for (long v = 400_000; v < 420_000; v += 100) { // a 400 us wait, +-2.5%
            counts = LatencyRecorder.record(counts, v);
        }
        assertThat(counts.length).isLessThanOrEqualTo(1 + 3 * LatencyRecorder.GROW_CHUNK);
        assertThat(LatencyRecorder.percentile(counts, 50)).isBetween(400_000L, 420_000L);
    }

    @Test
    void resetClearsTheCountsAndKeepsRecording() {
        int[] counts = LatencyRecorder.record(null, 1_000_000);
        counts = LatencyRecorder.record(counts, 5_000);
        LatencyRecorder.reset(counts);
        assertThat(LatencyRecorder.percentile(counts, 99)).isZero();
        counts = LatencyRecorder.record(counts, 2_000_000);
        assertThat((double) LatencyRecorder.percentile(counts, 50)).isCloseTo(2_000_000, offset(2_000_000 * PRECISION));
    }
}
