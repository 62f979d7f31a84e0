package io.weir.scheduler.sim;

import java.util.ArrayDeque;

/** Reference policy: one global FIFO in arrival order, unbounded, ignoring every policy. */
final class FifoPolicy implements Policy {

    private final ArrayDeque<SimRequest> queue = new ArrayDeque<>();

    @Override
    public String name() {
        return "fifo";
    }

    @Override
    public void enqueue(SimRequest r, long now) {
        queue.addLast(r);
    }

    @Override
    public SimRequest next(long now) {
        return queue.pollFirst();
    }

    @Override
    public void complete(SimRequest r, long cpuNanos, long now) {
    }
}
