package io.weir.scheduler.sim;

import io.weir.scheduler.HierarchicalScheduler;
import io.weir.scheduler.SchedulerConfig;
import io.weir.scheduler.Ticket;

/** Adapts the production {@link HierarchicalScheduler} to the simulator. */
final class ProductionPolicy implements Policy {

    final HierarchicalScheduler<SimRequest> scheduler;

    ProductionPolicy(SchedulerConfig config) {
        this.scheduler = new HierarchicalScheduler<>(config, 0);
    }

    @Override
    public String name() {
        return "weir";
    }

    @Override
    public void enqueue(SimRequest r, long now) {
        r.handle = r.background
                ? scheduler.enqueueBackground(r.target, r, now)
                : scheduler.enqueue(r.target, r.kind, r.bytes, r, now);
    }

    @Override
    public SimRequest next(long now) {
        Ticket<SimRequest> t = scheduler.next(now);
        if (t == null) {
            return null;
        }
        SimRequest r = t.request();
        r.handle = t;
        return r;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void complete(SimRequest r, long cpuNanos, long now) {
        Ticket<SimRequest> t = (Ticket<SimRequest>) r.handle;
        r.handle = null;
        scheduler.complete(t, cpuNanos, now);
    }

    @Override
    public long nextEligibleTime() {
        return scheduler.nextEligibleTime();
    }

    @Override
    public void reconfigure(SchedulerConfig config, long now) {
        scheduler.reconfigure(config, now);
    }
}
