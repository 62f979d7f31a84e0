package io.weir.scheduler;

/**
 * Maps a foreground request to the cost that the flow hierarchy charges for it: the "data
 * consumed" of the patent's second currency. A flow's counter grows by {@code cost / weight}.
 *
 * <p>The default is {@link #bytes(long)}: the cost is the request's byte count, with every request
 * charged at least {@code minChargeBytes} (4 KiB by default) so that floods of tiny IOs, whose
 * per-request CPU overhead dominates, are not nearly free. Limits ({@code maxBytesPerSec}) always
 * count real bytes, not cost.
 *
 * <p>Implementations must be pure, cheap (they run under the scheduler lock) and return a value
 * {@code >= 1}.
 */
@FunctionalInterface
public interface CostModel {

    /** Default minimum charge: small IOs cost as much as a 4 KiB IO. */
    long DEFAULT_MIN_CHARGE_BYTES = 4096;

    /** Returns the cost of one request of {@code bytes} bytes of kind {@code kind}; at least 1. */
    long cost(IoKind kind, long bytes);

    /** The byte cost model: {@code max(bytes, minChargeBytes, 1)}. */
    static CostModel bytes(long minChargeBytes) {
        return minChargeBytes == DEFAULT_MIN_CHARGE_BYTES ? Bytes.DEFAULT : new Bytes(minChargeBytes);
    }

    /**
     * The byte cost model with {@link #DEFAULT_MIN_CHARGE_BYTES}: one shared instance, so that
     * thousands of volumes do not each drag their own cost-model object through the cache.
     */
    static CostModel bytes() {
        return Bytes.DEFAULT;
    }

    /**
     * Byte cost with a floor.
     *
     * @param minChargeBytes the smallest charge for one request, in bytes; {@code 0} means no floor
     */
    record Bytes(long minChargeBytes) implements CostModel {
        static final Bytes DEFAULT = new Bytes(DEFAULT_MIN_CHARGE_BYTES);

        public Bytes {
            if (minChargeBytes < 0) {
                throw new IllegalArgumentException("minChargeBytes must be >= 0: " + minChargeBytes);
            }
        }

        @Override
        public long cost(IoKind kind, long bytes) {
            return Math.max(1L, Math.max(bytes, minChargeBytes));
        }
    }
}
