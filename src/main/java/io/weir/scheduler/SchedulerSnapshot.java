package io.weir.scheduler;

import java.util.Map;

/**
 * A consistent view of every volume, tenant and task, taken under the scheduler lock. The agent
 * builds its usage reports from consecutive snapshots.
 *
 * @param nanoTime the scheduler time at which it was taken
 * @param volumes per-volume statistics, by volume id (including volumes still draining)
 * @param tenants per-tenant statistics (sums over their volumes), by tenant id
 * @param tasks per-task statistics, by task name
 */
public record SchedulerSnapshot(long nanoTime, Map<String, Stats> volumes, Map<String, Stats> tenants,
        Map<String, Stats> tasks) {

    public SchedulerSnapshot {
        volumes = Map.copyOf(volumes);
        tenants = Map.copyOf(tenants);
        tasks = Map.copyOf(tasks);
    }

    /** Statistics of one volume, or null. */
    public Stats volume(String id) {
        return volumes.get(id);
    }

    /** Statistics of one tenant, or null. */
    public Stats tenant(String id) {
        return tenants.get(id);
    }

    /** Statistics of one task, or null. */
    public Stats task(String name) {
        return tasks.get(name);
    }
}
