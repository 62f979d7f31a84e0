package io.weir.scheduler;

import java.util.Arrays;

/**
 * The volumes' latency counts ({@link LatencyRecorder}), by node slot, and the buffer of samples
 * not yet counted: wait times (enqueue to dispatch) and service times (dispatch to completion).
 *
 * <h2>Implementation notes</h2>
 * With many volumes, a volume's counts are a cold cache line; counting a sample at once stalls
 * the decision on that miss (and on the one for the array reference before it). So samples are
 * buffered and counted {@value #BATCH} at a time: the misses of different samples are
 * independent, so the CPU overlaps them, the more so as the batch is walked twice, first only
 * loading each sample's bucket, then counting (a loop of loads alone keeps more misses in flight
 * than one that also stores). The counts are kept here by slot rather than in the
 * {@link FlowNode}, so that counting does not have to load the (by then cold) node first.
 *
 * <p>Nothing is lost: {@link #fold} runs before a snapshot reads the counts, and before a slot
 * is handed to another volume ({@link #release}). A sample is a {@code long}: the slot in the
 * high half, the bucket in the low half with {@link #SERVICE} set for a service time.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class LatencyBuffer {

    /** Samples buffered before they are counted in one pass. */
    static final int BATCH = 1024;

    /** Marks a buffered sample as a service time (otherwise it is a wait time). */
    private static final int SERVICE = 1 << 31;

    private int[][] waitCountsBySlot = new int[64][];
    private int[][] serviceCountsBySlot = new int[64][];

    private final long[] samples = new long[BATCH];
    private int count;
    /** Written by {@link #fold}'s first pass so that its loads are not optimised away. */
    private int touch;

    /** Makes room for a slot's counts. */
    void ensure(int slot) {
        if (slot >= waitCountsBySlot.length) {
            int len = Math.max(slot + 1, waitCountsBySlot.length * 2);
            waitCountsBySlot = Arrays.copyOf(waitCountsBySlot, len);
            serviceCountsBySlot = Arrays.copyOf(serviceCountsBySlot, len);
        }
    }

    /** Counts what is buffered, then forgets a slot's counts (its volume is gone). */
    void release(int slot) {
        fold(); // no buffered sample of this volume may be counted for the slot's next owner
        waitCountsBySlot[slot] = null;
        serviceCountsBySlot[slot] = null;
    }

    /** Buffers a wait time of the volume in {@code slot}. */
    void deferWait(int slot, long nanos) {
        defer(slot, LatencyRecorder.index(nanos));
    }

    /** Buffers a service time of the volume in {@code slot}. */
    void deferService(int slot, long nanos) {
        defer(slot, LatencyRecorder.index(nanos) | SERVICE);
    }

    private void defer(int slot, int bucket) {
        int n = count;
        samples[n] = ((long) slot << 32) | (bucket & 0xFFFF_FFFFL);
        count = n + 1;
        if (n + 1 == BATCH) {
            fold();
        }
    }

    /** Wait-time counts of a slot (after {@link #fold}); null if none yet. */
    int[] waitCounts(int slot) {
        return waitCountsBySlot[slot];
    }

    /** Service-time counts of a slot (after {@link #fold}); null if none yet. */
    int[] serviceCounts(int slot) {
        return serviceCountsBySlot[slot];
    }

    /** Counts every buffered sample. */
    void fold() {
        long[] buffered = samples;
        int[][] waits = waitCountsBySlot;
        int[][] services = serviceCountsBySlot;
        int n = count;
        // Pass 1 only loads each sample's bucket: the iterations are independent loads, so the CPU
        // keeps dozens of their cache misses in flight; pass 2 then counts in cache.
        int touched = 0;
        for (int i = 0; i < n; i++) {
            long sample = buffered[i];
            int b = (int) sample;
            int[] counts = (b >= 0 ? waits : services)[(int) (sample >>> 32)];
            int j = LatencyRecorder.position(counts, b & ~SERVICE);
            if (j > 0) {
                touched += counts[j];
            }
        }
        touch = touched;
        for (int i = 0; i < n; i++) {
            long sample = buffered[i];
            int slot = (int) (sample >>> 32);
            int b = (int) sample;
            int[][] table = b >= 0 ? waits : services;
            int[] counts = table[slot];
            int[] grown = LatencyRecorder.recordIndex(counts, b & ~SERVICE);
            if (grown != counts) {
                table[slot] = grown; // only when it grew: see "Reference stores" in HierarchicalScheduler
            }
        }
        count = 0;
    }

    /** Clears a slot's counts (after {@link #fold}). */
    void reset(int slot) {
        LatencyRecorder.reset(waitCountsBySlot[slot]);
        LatencyRecorder.reset(serviceCountsBySlot[slot]);
    }
}
