package io.weir.scheduler.sim;

import io.weir.scheduler.HierarchicalScheduler;
import io.weir.scheduler.SchedulerConfig;

/**
 * A scheduling policy the simulator can drive: the production {@link HierarchicalScheduler} or a
 * simple reference. Called from the simulator's single thread only.
 */
public interface Policy {

    /** Short name for reports. */
    String name();

    /**
     * Queues a request.
     *
     * @throws io.weir.scheduler.QueueFullException if the policy bounds queues and this one is full
     */
    void enqueue(SimRequest r, long now);

    /** The next request to run at {@code now}, or null. */
    SimRequest next(long now);

    /** Reports that {@code r} completed after using {@code cpuNanos}. */
    void complete(SimRequest r, long cpuNanos, long now);

    /** When a currently ineligible request may run, or {@link HierarchicalScheduler#NO_DEADLINE}. */
    default long nextEligibleTime() {
        return HierarchicalScheduler.NO_DEADLINE;
    }

    /** Applies a new configuration; references that ignore configuration may do nothing. */
    default void reconfigure(SchedulerConfig config, long now) {
    }

    /** Creates a policy from a configuration at time 0. */
    @FunctionalInterface
    interface Factory {
        Policy create(SchedulerConfig config);
    }

    /** The production scheduler. */
    static Policy production(SchedulerConfig config) {
        return new ProductionPolicy(config);
    }

    /** Plain global FIFO in arrival order: no isolation at all. */
    static Policy fifo(SchedulerConfig config) {
        return new FifoPolicy();
    }

    /** Textbook flat SFQ over every queue, by CPU time; see {@link SfqPolicy}. */
    static Policy sfq(SchedulerConfig config) {
        return new SfqPolicy(config);
    }
}
