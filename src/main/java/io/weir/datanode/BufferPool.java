package io.weir.datanode;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Direct byte buffers recycled by power-of-two size class, so that the IO path allocates no
 * native memory per request (a direct buffer costs far more to allocate than to reuse, and only
 * direct buffers reach a socket or file without the JDK copying them first).
 *
 * <p>A buffer is {@linkplain #acquire acquired} with at least the requested capacity and its
 * limit set to the request, and is {@linkplain #release released} exactly once when the last
 * write or read that uses it is done. Each class keeps at most {@link #MAX_POOLED_BYTES_PER_CLASS}
 * bytes (and at least {@link #MIN_POOLED_PER_CLASS} buffers); buffers past that are left to the
 * garbage collector. That is enough for a client of 1 MiB requests at queue depth 32 and a
 * second one: below it, the buffers of such a client were allocated (the memory zeroed, its
 * pages faulted in) and collected again at every other request.
 *
 * <p>A class holds a power of two plus {@link #HEADROOM} bytes, so that a reply header and a read
 * of a power-of-two size fit in one buffer of that size's class: a power-of-two class for them
 * would be the next one up, twice the size, half of it never used.
 *
 * <h2>Budget</h2>
 * The pool counts the capacity of the buffers it has handed out and not yet taken back
 * ({@link #held}), and keeps a node-wide budget for it (by default {@value #DEFAULT_BUDGET},
 * {@link #defaultBudget}): {@link #tryAcquire}, which the selector thread uses for write
 * payloads, refuses a buffer that would take the count past the budget while other buffers are
 * held, and the next release then calls the {@link #onRoom} callback so that the refused caller
 * can try again. Without it a few write-heavy clients of a slow volume could take every byte of
 * direct memory, and the next allocation would fail with {@link OutOfMemoryError}.
 * {@link #acquire} is not refused (small replies, and the rare buffer a worker needs), but is counted.
 *
 * <p>Buffers kept for reuse count too: the pool keeps the capacity of its idle buffers
 * ({@link #idle}) and {@link #held} together within the budget, so the direct memory the pool
 * uses, in use or not, stays within it. A buffer released when that would be exceeded is not
 * kept; a new buffer that needs room drops idle ones (largest first) to make it. Dropped buffers
 * are the garbage collector's, which the JDK's direct allocation asks for when it needs the room.
 *
 * <p>Requests larger than {@link #SMALL_BYTES} may take the budget only up to 7/8 of it: the last
 * eighth is kept for small requests, so that a few clients of large reads or writes, which fill
 * the budget, do not hold back every other client's 4 KiB read behind them. And a volume that
 * holds buffers may take another only while it would hold no more than the budget then leaves
 * free ({@link #tryAcquire(int, long)}): requests hold their buffers while the scheduler parks
 * them at their volume's limits, and one capped volume's parked writes filled the whole budget,
 * so that every other volume's large requests waited for that volume's limit.
 *
 * <h2>Thread safety</h2>
 * Safe for any number of threads: each class is a small stack behind its own monitor, held only
 * for a push or a pop; the count is atomic.
 */
class BufferPool {

    /** Smallest class: 2^6 = 64 bytes (plus the headroom), enough for any reply header. */
    static final int MIN_SHIFT = 6;
    /** Largest class: 2^25 = 32 MiB, the largest request payload this server accepts (plus headroom). */
    static final int MAX_SHIFT = 25;
    /** Room for a reply header in front of a payload (a structured read's is 28 bytes), in every class. */
    static final int HEADROOM = 64;
    /** The largest buffer the pool gives: the largest class's capacity. */
    static final int MAX_BYTES = (1 << MAX_SHIFT) + HEADROOM;
    /** Bytes each class may keep for reuse. */
    static final long MAX_POOLED_BYTES_PER_CLASS = 64L << 20;
    /** Buffers each class may keep even where that exceeds the byte cap. */
    static final int MIN_POOLED_PER_CLASS = 4;

    /** Requests of at most this many bytes may use the whole budget; larger ones 7/8 of it. */
    static final int SMALL_BYTES = 1 << 20;

    private final Stack[] classes = new Stack[MAX_SHIFT + 1];
    /** Capacity of the buffers kept for reuse. */
    private final AtomicLong idle = new AtomicLong();
    /** Bytes of acquired buffers beyond which {@link #tryAcquire} refuses (unless none is held). */
    private final long budget;
    /** Capacity of the buffers acquired and not yet released. */
    private final AtomicLong held = new AtomicLong();
    private final AtomicLong maxHeld = new AtomicLong();
    /** Set when {@link #tryAcquire} refused; the next release clears it and runs {@link #onRoom}. */
    private volatile boolean starved;
    private volatile Runnable onRoom = () -> { };

    /** A pool whose {@link #tryAcquire} keeps the buffers held within {@code budget} bytes. */
    BufferPool(long budget) {
        if (budget < 1) {
            throw new IllegalArgumentException("buffer budget must be positive: " + budget);
        }
        this.budget = budget;
        for (int s = MIN_SHIFT; s <= MAX_SHIFT; s++) {
            int cap = (int) Math.max(MIN_POOLED_PER_CLASS, Math.min(4096, MAX_POOLED_BYTES_PER_CLASS >> s));
            classes[s] = new Stack(cap);
        }
    }

    /** The default budget, in words: the one place that states it (also for {@code --help}). */
    static final String DEFAULT_BUDGET = "3/4 of the JVM's direct memory limit (-XX:MaxDirectMemorySize, else -Xmx)";

    /**
     * The default budget ({@value #DEFAULT_BUDGET}: {@code -XX:MaxDirectMemorySize},
     * which when unset is the maximum heap size), leaving the rest to the connections' receive
     * buffers, the JDK and buffers the pool keeps for reuse.
     */
    static long defaultBudget() {
        long max = 0;
        try {
            HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            max = Long.parseLong(hotspot.getVMOption("MaxDirectMemorySize").getValue());
        } catch (RuntimeException e) {
            // not HotSpot, or no such option: the JDK's own default below
        }
        if (max <= 0) {
            max = Runtime.getRuntime().maxMemory();
        }
        return Math.max(1, max / 4 * 3);
    }

    /**
     * Sets what runs, on the releasing thread, when a buffer is released after {@link #tryAcquire}
     * refused one: it must only hand the retry to another thread (it runs under no lock of the pool).
     */
    void onRoom(Runnable r) {
        this.onRoom = r;
    }

    /**
     * A big-endian direct buffer with position 0 and limit {@code size}, whatever the budget (for
     * small replies and reads, which per-connection limits bound).
     *
     * @throws IllegalArgumentException if {@code size} exceeds {@link #MAX_BYTES}
     * @throws OutOfMemoryError if the JVM has no direct memory for a new buffer
     */
    ByteBuffer acquire(int size) {
        int shift = shiftFor(size);
        hold(capacity(shift));
        return take(shift, size);
    }

    /**
     * As {@link #acquire}, but null if the buffer would take the bytes held past the budget while
     * others are held: then the next {@link #release} runs the {@link #onRoom} callback. When
     * nothing is held the buffer is given whatever its size, so one request larger than the whole
     * budget still goes through.
     */
    ByteBuffer tryAcquire(int size) {
        return tryAcquire(size, 0);
    }

    /**
     * As {@link #tryAcquire(int)} for a flow (a volume) that holds {@code flowHeld} bytes already:
     * while it holds any, it is also refused a buffer that would take it past what the budget
     * then leaves free (a dynamic threshold, as switches share their buffers among ports). So a
     * flow whose requests wait (a capped volume's, parked by the scheduler) holds at most half of
     * the budget, {@code n} such flows {@code n/(n+1)} of it, and the rest stays free for others.
     */
    ByteBuffer tryAcquire(int size, long flowHeld) {
        int shift = shiftFor(size);
        long cap = capacity(shift);
        long limit = size <= SMALL_BYTES ? budget : budget - budget / 8;
        for (;;) {
            long h = held.get();
            long q = Math.min(flowHeld, h); // read before h: its buffers released since are not held
            if (h > 0 && h + cap > limit || q > 0 && q + cap > limit - h - cap) {
                starved = true;
                if (held.get() == h) {
                    return null; // a release from now on sees starved
                }
                continue; // released or acquired meanwhile: look again
            }
            if (held.compareAndSet(h, h + cap)) {
                notePeak(h + cap);
                return take(shift, size);
            }
        }
    }

    private void hold(long cap) {
        notePeak(held.addAndGet(cap));
    }

    /** Records {@code h} in {@link #maxHeld} if it is a new peak: a plain read on the IO path otherwise. */
    private void notePeak(long h) {
        if (h > maxHeld.get()) {
            maxHeld.accumulateAndGet(h, Math::max);
        }
    }

    /** A buffer of class {@code shift} with limit {@code size}, already counted as held. */
    private ByteBuffer take(int shift, int size) {
        ByteBuffer b = classes[shift].pop();
        if (b != null) {
            idle.addAndGet(-capacity(shift));
        } else {
            // a new buffer: drop idle ones while the pool's memory would pass the budget
            while (held.get() + idle.get() > budget && dropIdle()) {
                // dropped one
            }
            try {
                b = newBuffer(capacity(shift));
            } catch (Throwable t) {
                held.addAndGet(-capacity(shift));
                throw t;
            }
        }
        b.clear().limit(size);
        return b;
    }

    /** Drops one idle buffer, of the largest class that has one, to the garbage collector; false if none is idle. */
    private boolean dropIdle() {
        for (int s = MAX_SHIFT; s >= MIN_SHIFT; s--) {
            if (classes[s].pop() != null) {
                idle.addAndGet(-capacity(s));
                return true;
            }
        }
        return false;
    }

    /** Allocates a buffer; tests override it to fail as an exhausted JVM would. */
    ByteBuffer newBuffer(int capacity) {
        return ByteBuffer.allocateDirect(capacity).order(ByteOrder.BIG_ENDIAN);
    }

    /** The capacity of class {@code shift}'s buffers. */
    static int capacity(int shift) {
        return (1 << shift) + HEADROOM;
    }

    /** Capacity of the buffers acquired and not yet released, in bytes. */
    long held() {
        return held.get();
    }

    /** Capacity of the buffers kept for reuse, in bytes: with {@link #held}, within the budget. */
    long idle() {
        return idle.get();
    }

    /** The most {@link #held} has been since the pool was made. */
    long maxHeld() {
        return maxHeld.get();
    }

    /** The budget {@link #tryAcquire} keeps to. */
    long budget() {
        return budget;
    }

    /**
     * Returns a buffer obtained from {@link #acquire} or {@link #tryAcquire}, exactly once; the
     * caller must not touch it afterwards.
     */
    void release(ByteBuffer b) {
        int cap = b.capacity();
        long h = held.addAndGet(-cap);
        if (h + idle.get() + cap <= budget) { // else left to the garbage collector: kept, it would pass the budget
            int shift = shiftFor(cap);
            if (capacity(shift) == cap && classes[shift].push(b)) {
                idle.addAndGet(cap);
            }
        }
        if (starved) {
            starved = false;
            onRoom.run();
        }
    }

    /** The class of {@code size}: the smallest whose power of two plus {@link #HEADROOM} holds it. */
    static int shiftFor(int size) {
        if (size < 0 || size > MAX_BYTES) {
            throw new IllegalArgumentException("buffer size out of range: " + size);
        }
        int payload = size - HEADROOM;
        int shift = payload <= 1 ? 0 : 32 - Integer.numberOfLeadingZeros(payload - 1);
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

        synchronized boolean push(ByteBuffer b) {
            if (size < items.length) {
                items[size++] = b;
                return true;
            }
            return false;
        }
    }
}
