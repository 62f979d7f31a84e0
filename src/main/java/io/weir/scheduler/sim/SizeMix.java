package io.weir.scheduler.sim;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A distribution of request sizes in bytes, sampled with the simulator's seeded random source.
 */
public final class SizeMix {

    private final long[] sizes;
    private final double[] cumulative;

    private SizeMix(long[] sizes, double[] weights) {
        if (sizes.length == 0 || sizes.length != weights.length) {
            throw new IllegalArgumentException("sizes and weights must be non-empty and of equal length");
        }
        this.sizes = sizes.clone();
        this.cumulative = new double[weights.length];
        double sum = 0;
        for (int i = 0; i < weights.length; i++) {
            sum += weights[i];
            cumulative[i] = sum;
        }
        for (int i = 0; i < weights.length; i++) {
            cumulative[i] /= sum;
        }
    }

    /** Every request has {@code bytes} bytes. */
    public static SizeMix fixed(long bytes) {
        return new SizeMix(new long[] {bytes}, new double[] {1});
    }

    /** Sizes {@code sizes[i]} with relative frequencies {@code weights[i]}. */
    public static SizeMix of(long[] sizes, double[] weights) {
        return new SizeMix(sizes, weights);
    }

    /** Powers of two from {@code min} to {@code max}, equally likely (e.g. 512 B .. 1 MiB). */
    public static SizeMix powersOfTwo(long min, long max) {
        int n = 0;
        for (long s = min; s <= max; s <<= 1) {
            n++;
        }
        long[] sizes = new long[n];
        double[] w = new double[n];
        long s = min;
        for (int i = 0; i < n; i++, s <<= 1) {
            sizes[i] = s;
            w[i] = 1;
        }
        return new SizeMix(sizes, w);
    }

    /** Draws one size. */
    public long sample(SplittableRandom random) {
        if (sizes.length == 1) {
            return sizes[0];
        }
        double u = random.nextDouble();
        int i = Arrays.binarySearch(cumulative, u);
        if (i < 0) {
            i = -i - 1;
        }
        return sizes[Math.min(i, sizes.length - 1)];
    }

    /** The largest size. */
    public long max() {
        return Arrays.stream(sizes).max().orElse(0);
    }
}
