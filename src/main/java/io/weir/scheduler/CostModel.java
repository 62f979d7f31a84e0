package io.weir.scheduler;

/**
 * Maps a foreground request to the cost that the flow hierarchy charges for it: the "data
 * consumed" of the patent's second currency. A flow's counter grows by {@code cost / weight}.
 *
 * <h2>The model: a fixed cost per request plus its bytes</h2>
 * A request costs the node a fixed amount of work whatever its size (decoding it, a system call,
 * a scheduler round, a reply header, a wake-up of the client) plus work in proportion to its bytes
 * (copies, checksums, the page cache). Both are expressed in bytes, the currency of weights and of
 * {@code maxBytesPerSec}:
 * <pre>
 *   cost(kind, bytes) = max(perIoBytes(kind) + bytes, minChargeBytes, 1)
 * </pre>
 * where {@code perIoBytes} is the node's fixed cost of one request, read or write, in the bytes it
 * could have moved in that time ({@link #linear}), and {@code minChargeBytes} is a volume's policy
 * floor (4 KiB by default). This is the linear model of Linux iocost (a cost per IO plus a cost per
 * byte, read and write apart) and what SolidFire's table approximates (a 64 KiB IO charged about
 * 10 times a 4 KiB one, not 16); Ceph's mClock moved to {@code max(size, bandwidth / iops)} after
 * a model that ignored the per-IO cost let small IOs starve large ones. With {@code perIoBytes} 0
 * the model is bytes with a floor, the model of earlier versions. A node's {@code perIoBytes} come
 * from its task shares ({@code io.weir.protocol.IoCost}, settable per node through the API); the
 * defaults were measured on a data node with {@code src/test/bench/cost-bench.sh}.
 *
 * <p>Limits ({@code maxIops}, {@code maxBytesPerSec}) always count real IOs and real bytes, never
 * cost: a cap stays exact whatever the model.
 *
 * <p>Implementations must be pure, cheap (they run under the scheduler lock) and return a value
 * {@code >= 1}.
 */
@FunctionalInterface
public interface CostModel {

    /** Default minimum charge: small IOs cost at least as much as a 4 KiB IO. */
    long DEFAULT_MIN_CHARGE_BYTES = 4096;

    /** Returns the cost of one request of {@code bytes} bytes of kind {@code kind}; at least 1. */
    long cost(IoKind kind, long bytes);

    /** Bytes with a floor and no fixed cost per request: {@code max(bytes, minChargeBytes, 1)}. */
    static CostModel bytes(long minChargeBytes) {
        return linear(0, 0, minChargeBytes);
    }

    /**
     * The byte cost model with {@link #DEFAULT_MIN_CHARGE_BYTES} and no fixed cost: one shared
     * instance, so that thousands of volumes do not each drag their own object through the cache.
     */
    static CostModel bytes() {
        return Linear.DEFAULT;
    }

    /**
     * The linear model: {@code max(perIoBytes(kind) + bytes, minChargeBytes, 1)}.
     *
     * @param readPerIoBytes the fixed cost of a read (READ, CACHE, BLOCK_STATUS)
     * @param writePerIoBytes the fixed cost of a write (WRITE, WRITE_ZEROES, TRIM, FLUSH), and of what a
     *     copy applies for its primary ({@link IoKind#REPLICA})
     * @param minChargeBytes the least a request is charged
     * @throws IllegalArgumentException if a parameter is negative
     */
    static CostModel linear(long readPerIoBytes, long writePerIoBytes, long minChargeBytes) {
        return readPerIoBytes == 0 && writePerIoBytes == 0 && minChargeBytes == DEFAULT_MIN_CHARGE_BYTES
                ? Linear.DEFAULT : new Linear(readPerIoBytes, writePerIoBytes, minChargeBytes);
    }

    /**
     * A fixed cost per request, read and write apart, plus the request's bytes, with a floor.
     *
     * @param readPerIoBytes the fixed cost of a read, in bytes
     * @param writePerIoBytes the fixed cost of a write, in bytes
     * @param minChargeBytes the smallest charge for one request, in bytes; {@code 0} means no floor
     */
    record Linear(long readPerIoBytes, long writePerIoBytes, long minChargeBytes) implements CostModel {
        static final Linear DEFAULT = new Linear(0, 0, DEFAULT_MIN_CHARGE_BYTES);

        public Linear {
            if (readPerIoBytes < 0 || writePerIoBytes < 0 || minChargeBytes < 0) {
                throw new IllegalArgumentException("cost model parameters must be >= 0: read " + readPerIoBytes
                        + ", write " + writePerIoBytes + ", minimum " + minChargeBytes);
            }
        }

        @Override
        public long cost(IoKind kind, long bytes) {
            long fixed = kind == IoKind.READ ? readPerIoBytes : writePerIoBytes;
            return Math.max(1L, Math.max(fixed + bytes, minChargeBytes));
        }
    }
}
