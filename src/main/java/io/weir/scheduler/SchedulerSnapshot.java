package io.weir.scheduler;

import java.util.Map;
import java.util.Set;

/**
 * A consistent view of every volume, tenant and task, taken under the scheduler lock. The agent
 * builds its usage reports from consecutive snapshots.
 *
 * <p>Besides usage, a snapshot shows where every child stands in its level's fair queue
 * ({@link #levels()}), so that an operator or a test can see a debt building up: a child whose
 * lead keeps growing is being served more than its weight would give it, and will wait for that
 * lead to be used up before the weight phase serves it again (the lead is bounded: see
 * "Reservations" in the package documentation).
 *
 * @param nanoTime the scheduler time at which it was taken
 * @param volumes per-volume statistics, by volume id (including volumes still draining)
 * @param tenants per-tenant statistics (sums over their volumes), by tenant id
 * @param tasks per-task statistics, by task name
 * @param levels virtual times and leads of every level
 * @param drainingVolumes ids of the volumes in {@code volumes} that were removed and are still
 *     draining; a volume that is gone is in neither
 */
public record SchedulerSnapshot(long nanoTime, Map<String, Stats> volumes, Map<String, Stats> tenants,
        Map<String, Stats> tasks, Levels levels, Set<String> drainingVolumes) {

    public SchedulerSnapshot {
        volumes = Map.copyOf(volumes);
        tenants = Map.copyOf(tenants);
        tasks = Map.copyOf(tasks);
        java.util.Objects.requireNonNull(levels, "levels");
        drainingVolumes = Set.copyOf(drainingVolumes);
    }

    /** A snapshot of statistics only, with no level information and no draining volumes. */
    public SchedulerSnapshot(long nanoTime, Map<String, Stats> volumes, Map<String, Stats> tenants,
            Map<String, Stats> tasks) {
        this(nanoTime, volumes, tenants, tasks, Levels.NONE, Set.of());
    }

    /** A copy with other statistics and the same levels and draining volumes. */
    public SchedulerSnapshot withStats(Map<String, Stats> volumes, Map<String, Stats> tenants,
            Map<String, Stats> tasks) {
        return new SchedulerSnapshot(nanoTime, volumes, tenants, tasks, levels, drainingVolumes);
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

    /** True if the volume was removed and still drains; false if it is live or gone. */
    public boolean isDraining(String volumeId) {
        return drainingVolumes.contains(volumeId);
    }

    /**
     * A volume's counter minus its tenant's virtual time, in counter units
     * ({@link #COUNTER_UNITS_PER_BYTE} per byte of cost per unit of weight).
     *
     * @throws IllegalArgumentException if the volume is not in this snapshot
     */
    public long volumeLead(String volumeId) {
        for (Level l : levels.volumeLevels().values()) {
            Long lead = l.leads().get(volumeId);
            if (lead != null) {
                return lead;
            }
        }
        throw new IllegalArgumentException("no volume '" + volumeId + "' in this snapshot");
    }

    /** Counter units per byte of cost at weight 1: a lead of {@code n} units is {@code n / 65536} bytes per unit of weight. */
    public static final long COUNTER_UNITS_PER_BYTE = SchedNode.COUNTER_SCALE;

    /**
     * One level of the hierarchy: its virtual time and each child's lead over it.
     *
     * @param virtualTime the level's virtual time: the largest counter its weight phase has
     *     dispatched since the level was last rebased (it restarts from 0 then)
     * @param leads each child's counter minus {@code virtualTime}, by child id. A ready child's
     *     lead is {@code >= 0}; an idle child's may be negative (it rejoins at 0). Foreground units:
     *     {@link #COUNTER_UNITS_PER_BYTE} per byte per unit weight; root units: 1024 per CPU
     *     nanosecond at share 1
     */
    public record Level(long virtualTime, Map<String, Long> leads) {
        public Level {
            leads = Map.copyOf(leads);
        }
    }

    /**
     * Every level of the hierarchy.
     *
     * @param root the root: tasks, by worker time per share
     * @param tenantLevel the tenants of the foreground task
     * @param volumeLevels each tenant's volumes, by tenant id
     * @param reservationLagNanos for each volume with a reservation, how far its reservation tag
     *     lags the snapshot's time: {@code > 0} means reservation service is due (by that much),
     *     {@code < 0} that the volume is served ahead of its reservation
     */
    public record Levels(Level root, Level tenantLevel, Map<String, Level> volumeLevels,
            Map<String, Long> reservationLagNanos) {

        /** No level information (a snapshot built from statistics alone). */
        public static final Levels NONE = new Levels(new Level(0, Map.of()), new Level(0, Map.of()), Map.of(), Map.of());

        public Levels {
            java.util.Objects.requireNonNull(root, "root");
            java.util.Objects.requireNonNull(tenantLevel, "tenantLevel");
            volumeLevels = Map.copyOf(volumeLevels);
            reservationLagNanos = Map.copyOf(reservationLagNanos);
        }
    }
}
