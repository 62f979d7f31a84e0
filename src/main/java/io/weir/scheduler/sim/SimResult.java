package io.weir.scheduler.sim;

import io.weir.scheduler.SchedulerConfig;
import io.weir.scheduler.SchedulerConfig.TaskSpec;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What a simulation run measured, per target (volume or task), over the measurement window, and
 * the ideal shares implied by the configuration for the targets that had load.
 */
public final class SimResult {

    /** Counters of one volume or background task over the measurement window. */
    public static final class Target {
        public long ops;
        public long bytes;
        public long cpuNanos;
        public long rejected;
        public long maxWaitNanos;
        long waitSumNanos;

        /** Mean time from arrival to dispatch. */
        public double meanWaitNanos() {
            return ops == 0 ? 0 : (double) waitSumNanos / ops;
        }
    }

    private final String policy;
    private final SchedulerConfig config;
    private final long measuredNanos;
    private final Map<String, Target> targets;
    private final Set<String> loadedVolumes;
    private final Set<String> loadedTasks;

    SimResult(String policy, SchedulerConfig config, long measuredNanos, Map<String, Target> targets,
            Set<String> loadedVolumes, Set<String> loadedTasks) {
        this.policy = policy;
        this.config = config;
        this.measuredNanos = measuredNanos;
        this.targets = targets;
        this.loadedVolumes = loadedVolumes;
        this.loadedTasks = loadedTasks;
    }

    public String policy() {
        return policy;
    }

    public long measuredNanos() {
        return measuredNanos;
    }

    /** Counters of a volume or task (zeros if it never completed anything). */
    public Target target(String name) {
        return targets.getOrDefault(name, new Target());
    }

    /** Completed operations per second of a target. */
    public double iops(String name) {
        return target(name).ops * 1e9 / measuredNanos;
    }

    /** Bytes per second of a volume. */
    public double bytesPerSec(String name) {
        return target(name).bytes * 1e9 / measuredNanos;
    }

    /** The volume's fraction of all foreground bytes. */
    public double byteShare(String volume) {
        long total = 0;
        for (String v : loadedVolumes) {
            total += target(v).bytes;
        }
        return total == 0 ? 0 : (double) target(volume).bytes / total;
    }

    /** A task's fraction of all CPU time; the foreground task's CPU is the sum over volumes. */
    public double cpuShare(String task) {
        long total = 0;
        for (Target t : targets.values()) {
            total += t.cpuNanos;
        }
        return total == 0 ? 0 : (double) taskCpu(task) / total;
    }

    private long taskCpu(String task) {
        if (SchedulerConfig.FOREGROUND.equals(task)) {
            long s = 0;
            for (String v : loadedVolumes) {
                s += target(v).cpuNanos;
            }
            return s;
        }
        return target(task).cpuNanos;
    }

    /** Ideal byte share of a volume: tenant weight share times volume weight share, among loaded ones. */
    public double idealByteShare(String volume) {
        Map<String, Integer> tenantWeights = new HashMap<>();
        Map<String, Integer> volSum = new HashMap<>();
        Map<String, VolumeSpec> vols = new HashMap<>();
        for (VolumeSpec v : config.volumes()) {
            vols.put(v.id(), v);
        }
        for (TenantSpec t : config.tenants()) {
            tenantWeights.put(t.id(), t.weight());
        }
        Map<String, Boolean> activeTenants = new LinkedHashMap<>();
        for (String id : loadedVolumes) {
            VolumeSpec v = vols.get(id);
            if (v == null) {
                continue;
            }
            volSum.merge(v.tenantId(), v.weight(), Integer::sum);
            activeTenants.put(v.tenantId(), true);
        }
        VolumeSpec v = vols.get(volume);
        if (v == null || !loadedVolumes.contains(volume)) {
            return 0;
        }
        int tsum = 0;
        for (String t : activeTenants.keySet()) {
            tsum += tenantWeights.get(t);
        }
        return (double) tenantWeights.get(v.tenantId()) / tsum * v.weight() / volSum.get(v.tenantId());
    }

    /** Ideal CPU share of a task among the tasks that had load. */
    public double idealCpuShare(String task) {
        double sum = 0;
        double mine = 0;
        for (TaskSpec t : config.tasks()) {
            if (loadedTasks.contains(t.name())) {
                double s = t.dynamic() == null ? t.share() : t.dynamic().low();
                sum += s;
                if (t.name().equals(task)) {
                    mine = s;
                }
            }
        }
        return sum == 0 ? 0 : mine / sum;
    }

    /** A human-readable table: each flow's and task's share beside the ideal. */
    public String report() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("policy %-5s  measured %.1f s%n", policy, measuredNanos / 1e9));
        sb.append(String.format("  %-14s %10s %12s %9s %9s %11s%n", "volume", "IOPS", "MB/s", "share", "ideal", "mean wait"));
        for (String v : loadedVolumes) {
            sb.append(String.format("  %-14s %10.0f %12.2f %8.2f%% %8.2f%% %9.2fms%n", v, iops(v), bytesPerSec(v) / 1e6,
                    100 * byteShare(v), 100 * idealByteShare(v), target(v).meanWaitNanos() / 1e6));
        }
        sb.append(String.format("  %-14s %10s %12s %9s %9s%n", "task", "ops/s", "CPU ms", "share", "ideal"));
        for (String t : loadedTasks) {
            long ops = SchedulerConfig.FOREGROUND.equals(t)
                    ? loadedVolumes.stream().mapToLong(v -> target(v).ops).sum() : target(t).ops;
            sb.append(String.format("  %-14s %10.0f %12.1f %8.2f%% %8.2f%%%n", t, ops * 1e9 / measuredNanos,
                    taskCpu(t) / 1e6, 100 * cpuShare(t), 100 * idealCpuShare(t)));
        }
        return sb.toString();
    }
}
