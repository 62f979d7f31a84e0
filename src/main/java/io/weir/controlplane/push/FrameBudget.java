package io.weir.controlplane.push;

import java.util.concurrent.atomic.AtomicLong;
import org.springframework.stereotype.Component;

/**
 * How many characters of unfinished frames all agent sessions of this replica may hold together:
 * {@value #DEFAULT_BUDGET_CHARS} (16 Mi characters, at most 32 MiB of heap), so that sessions
 * which each start a large frame and never finish it cannot exhaust the heap (without it, about
 * 64 node tokens could fill a 1 GiB heap with 8 MiB frames). Two sessions may be in the middle of
 * a frame of the largest size an agent sends at once (a usage report of 16,384 volumes; sixteen of
 * 1 MiB); one refused is closed with 1013 and its agent resends after it reconnects. Frames up to
 * 16 KiB arrive whole and take nothing from it.
 */
@Component
class FrameBudget {

    /** The default budget, in characters. */
    static final long DEFAULT_BUDGET_CHARS = 16L << 20;

    private final long budget;
    private final AtomicLong held = new AtomicLong();

    FrameBudget() {
        this(DEFAULT_BUDGET_CHARS);
    }

    FrameBudget(long budget) {
        this.budget = budget;
    }

    long budget() {
        return budget;
    }

    long held() {
        return held.get();
    }

    /** Takes {@code chars} from the budget if they fit; answers whether they did. */
    boolean tryReserve(long chars) {
        while (true) {
            long h = held.get();
            if (h + chars > budget) {
                return false;
            }
            if (held.compareAndSet(h, h + chars)) {
                return true;
            }
        }
    }

    /** Gives {@code chars} back. */
    void release(long chars) {
        if (chars > 0) {
            held.addAndGet(-chars);
        }
    }
}
