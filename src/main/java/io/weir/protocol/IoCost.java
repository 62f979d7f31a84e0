package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * What one request costs a data node apart from its bytes: the fixed part of the scheduler's
 * linear cost model, {@code cost = perIoBytes + bytes} (at least the volume policy's
 * {@code minChargeBytes}), in which weights share a saturated node. Set per node with the task
 * shares; the formula and its sources are written once, in {@code io.weir.scheduler.CostModel}.
 *
 * <p>The defaults were measured on a 2-core data node serving fio from the page cache
 * ({@code src/test/bench/cost-bench.sh}, {@code docs/benchmarks.md}): a read's fixed cost is the
 * CPU time in which the node moves about 30 KiB, a write's (its checksums and write-back) about
 * 154 KiB. A node whose store is slower than its CPU, or whose network is, has other figures.
 *
 * @param readPerIoBytes the fixed cost of a read (and of CACHE and BLOCK_STATUS), in bytes,
 *     0-{@value #MAX_PER_IO_BYTES}
 * @param writePerIoBytes the fixed cost of a write (and of WRITE_ZEROES, TRIM and FLUSH), in bytes,
 *     0-{@value #MAX_PER_IO_BYTES}
 */
@JsonClassDescription("The fixed cost of one request on a data node, in bytes, added to its size: weights share a saturated node in this cost.")
public record IoCost(
        @JsonPropertyDescription("The fixed cost of a read, in bytes (0-67108864).") long readPerIoBytes,
        @JsonPropertyDescription("The fixed cost of a write, trim, write-zeroes or flush, in bytes (0-67108864).") long writePerIoBytes) {

    /** Largest fixed cost: 64 MiB, twice the largest request. */
    public static final long MAX_PER_IO_BYTES = 64L << 20;

    /** The default fixed cost of a read: 30 KiB (measured 30,811 bytes). */
    public static final long DEFAULT_READ_PER_IO_BYTES = 30L << 10;

    /** The default fixed cost of a write: 154 KiB (measured 157,494 bytes). */
    public static final long DEFAULT_WRITE_PER_IO_BYTES = 154L << 10;

    /** The defaults. */
    public static final IoCost DEFAULT = new IoCost(DEFAULT_READ_PER_IO_BYTES, DEFAULT_WRITE_PER_IO_BYTES);

    public IoCost {
        if (readPerIoBytes < 0 || readPerIoBytes > MAX_PER_IO_BYTES) {
            throw new IllegalArgumentException("readPerIoBytes must be from 0 to " + MAX_PER_IO_BYTES + ": " + readPerIoBytes);
        }
        if (writePerIoBytes < 0 || writePerIoBytes > MAX_PER_IO_BYTES) {
            throw new IllegalArgumentException("writePerIoBytes must be from 0 to " + MAX_PER_IO_BYTES + ": " + writePerIoBytes);
        }
    }
}
