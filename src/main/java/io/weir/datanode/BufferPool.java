package io.weir.datanode;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Direct byte buffers recycled by power-of-two size class, so that the IO path allocates no
 * native memory per request (a direct buffer costs far more to allocate than to reuse, and only
 * direct buffers reach a socket or file without the JDK copying them first).
 *
 * <p>A buffer is {@linkplain #acquire acquired} with at least the requested capacity and its
 * limit set to the request, and is {@linkplain #release released} exactly once when the last
 * write or read that uses it is done. Each class keeps at most {@link #MAX_POOLED_BYTES_PER_CLASS}
 * bytes (and at least {@link #MIN_POOLED_PER_CLASS} buffers); buffers past that are left to the
 * garbage collector.
 *
 * <p>Above the largest power-of-two class there is one more class, {@link #JUMBO_BYTES}: the
 * largest payload plus {@link #HEADROOM} bytes, so that a reply header and a maximum-size read
 * fit in one buffer (a power-of-two class for them would be 64 MiB, half of it never used).
 *
 * <h2>Thread safety</h2>
 * Safe for any number of threads: each class is a small stack behind its own monitor, held only
 * for a push or a pop.
 */
class BufferPool {

    /** Smallest class: 2^6 = 64 bytes, enough for any reply header. */
    static final int MIN_SHIFT = 6;
    /** Largest power-of-two class: 2^25 = 32 MiB, the largest request payload this server accepts. */
    static final int MAX_SHIFT = 25;
    /** Room for a reply header in front of a largest payload (a structured read's is 28 bytes). */
    static final int HEADROOM = 64;
    /** Capacity of the one class above {@code 2^MAX_SHIFT}, and the largest buffer the pool gives. */
    static final int JUMBO_BYTES = (1 << MAX_SHIFT) + HEADROOM;
    /** Index of the jumbo class. */
    private static final int JUMBO = MAX_SHIFT + 1;
    /** Bytes each class may keep for reuse. */
    static final long MAX_POOLED_BYTES_PER_CLASS = 16L << 20;
    /** Buffers each class may keep even where that exceeds the byte cap. */
    static final int MIN_POOLED_PER_CLASS = 4;

    private final Stack[] classes = new Stack[JUMBO + 1];
    private final long budget;
    private final java.util.concurrent.atomic.AtomicLong held = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong maxHeld = new java.util.concurrent.atomic.AtomicLong();

    BufferPool(long budget) {
        this.budget = budget;
        for (int s = MIN_SHIFT; s <= MAX_SHIFT; s++) {
            int cap = (int) Math.max(MIN_POOLED_PER_CLASS, Math.min(4096, MAX_POOLED_BYTES_PER_CLASS >> s));
            classes[s] = new Stack(cap);
        }
        classes[JUMBO] = new Stack(MIN_POOLED_PER_CLASS);
    }

    /**
     * A big-endian direct buffer with position 0 and limit {@code size}.
     *
     * @throws IllegalArgumentException if {@code size} exceeds {@link #JUMBO_BYTES}
     */
    ByteBuffer acquire(int size) {
        int shift = shiftFor(size);
        ByteBuffer b = classes[shift].pop();
        if (b == null) {
            b = ByteBuffer.allocateDirect(shift == JUMBO ? JUMBO_BYTES : 1 << shift).order(ByteOrder.BIG_ENDIAN);
        }
        b.clear().limit(size);
        long h = held.addAndGet(b.capacity());
        maxHeld.accumulateAndGet(h, Math::max);
        return b;
    }

    /** Bytes of buffers acquired and not yet released. */
    long held() {
        return held.get();
    }

    /** The most {@link #held} has ever been. */
    long maxHeld() {
        return maxHeld.get();
    }

    long budget() {
        return budget;
    }

    /** Returns a buffer obtained from {@link #acquire}; the caller must not touch it afterwards. */
    void release(ByteBuffer b) {
        int cap = b.capacity();
        held.addAndGet(-cap);
        if (cap == JUMBO_BYTES) {
            classes[JUMBO].push(b);
            return;
        }
        if (Integer.bitCount(cap) != 1) {
            return; // not one of ours (a slice); let the GC have it
        }
        int shift = Integer.numberOfTrailingZeros(cap);
        if (shift >= MIN_SHIFT && shift <= MAX_SHIFT) {
            classes[shift].push(b);
        }
    }

    /** The class of {@code size}: its power of two, or {@link #JUMBO}. */
    static int shiftFor(int size) {
        if (size < 0 || size > JUMBO_BYTES) {
            throw new IllegalArgumentException("buffer size out of range: " + size);
        }
        if (size > (1 << MAX_SHIFT)) {
            return JUMBO;
        }
        int shift = size <= 1 ? 0 : 32 - Integer.numberOfLeadingZeros(size - 1);
        return Math.max(MIN_SHIFT, shift);
    }

    /** A bounded LIFO of free buffers of one class (LIFO keeps recently used memory warm). */
    private static final class Stack {
        private final ByteBuffer[] items;
        private int size;

        Stack(int capacity) {
            this.items = new ByteBuffer[capacity];
        }

        synchronized ByteBuffer pop() {
            if (size == 0) {
                return null;
            }
            ByteBuffer b = items[--size];
            items[size] = null;
            return b;
        }

        synchronized void push(ByteBuffer b) {
            if (size < items.length) {
                items[size++] = b;
            }
        }
    }
}
