package io.weir.scheduler;

import io.weir.scheduler.SchedulerSnapshot.Level;
import io.weir.scheduler.SchedulerSnapshot.Levels;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.HdrHistogram.Histogram;

/**
 * Builds a {@link SchedulerSnapshot} from a scheduler's nodes: usage statistics, latency
 * percentiles, and where every child stands in its level's fair queue.
 *
 * <h2>Implementation notes</h2>
 * Linear in the number of nodes and histogram buckets; meant for periodic reports, not per
 * request. Buffered latency samples are counted first ({@link LatencyBuffer#fold}), so no sample
 * is missing. Tenant statistics are sums over their volumes, including draining ones.
 *
 * <p>Not thread-safe; runs under the scheduler lock.
 */
final class SnapshotBuilder {

    private SnapshotBuilder() {
    }

    static SchedulerSnapshot build(HierarchicalScheduler<?> s, long now, boolean resetLatencies) {
        LatencyBuffer latencies = s.latencies;
        latencies.fold();
        Map<String, Stats> vs = new HashMap<>();
        Map<String, Stats> ts = new HashMap<>();
        Map<String, Stats> ks = new HashMap<>();
        Map<String, Long> tenantLeads = new HashMap<>();
        Map<String, Level> volumeLevels = new HashMap<>();
        Map<String, Long> reservationLags = new HashMap<>();
        Set<String> draining = new HashSet<>();
        for (TenantNode tn : s.tenants.values()) {
            long rOps = 0, wOps = 0, rB = 0, wB = 0, q = 0, inf = 0, rej = 0, cpu = 0, pOps = 0, pB = 0;
            Histogram tw = LatencyRecorder.newHistogram();
            Histogram tsv = LatencyRecorder.newHistogram();
            Map<String, Long> leads = new HashMap<>();
            for (FlowNode f : tn.flows) {
                Histogram w = LatencyRecorder.newHistogram();
                Histogram sv = LatencyRecorder.newHistogram();
                LatencyRecorder.addTo(latencies.waitCounts(f.slot), w);
                LatencyRecorder.addTo(latencies.serviceCounts(f.slot), sv);
                tw.add(w);
                tsv.add(sv);
                vs.put(f.id, new Stats(f.id, f.readOps, f.writeOps, f.readBytes, f.writeBytes, f.size, f.inFlight,
                        f.rejected, LatencyRecorder.percentile(w, 50), LatencyRecorder.percentile(w, 99),
                        LatencyRecorder.percentile(sv, 50), LatencyRecorder.percentile(sv, 99), f.throttledNanos(now),
                        f.cpuNanos, 0, LatencyRecorder.percentile(w, 100), LatencyRecorder.percentile(sv, 100), 0,
                        f.replicaOps, f.replicaBytes));
                rOps += f.readOps;
                wOps += f.writeOps;
                rB += f.readBytes;
                wB += f.writeBytes;
                pOps += f.replicaOps;
                pB += f.replicaBytes;
                q += f.size;
                inf += f.inFlight;
                rej += f.rejected;
                cpu += f.cpuNanos;
                if (resetLatencies) {
                    latencies.reset(f.slot);
                }
                leads.put(f.id, f.counter - tn.vtime);
                if (f.reservationInterval > 0) {
                    reservationLags.put(f.id, now - (f.reservationTag + s.levels.reservationShift));
                }
                if (f.draining) {
                    draining.add(f.id);
                }
            }
            ts.put(tn.id, new Stats(tn.id, rOps, wOps, rB, wB, q, inf, rej, LatencyRecorder.percentile(tw, 50),
                    LatencyRecorder.percentile(tw, 99), LatencyRecorder.percentile(tsv, 50),
                    LatencyRecorder.percentile(tsv, 99), tn.throttledNanos(now), cpu, 0, LatencyRecorder.percentile(tw, 100),
                    LatencyRecorder.percentile(tsv, 100), 0, pOps, pB));
            tenantLeads.put(tn.id, tn.counter - s.levels.vtime);
            volumeLevels.put(tn.id, new Level(tn.vtime, leads));
        }
        Map<String, Long> taskLeads = new HashMap<>();
        int backgroundQueued = s.backgroundQueued();
        for (TaskNode k : s.tasksByName.values()) {
            ks.put(k.name, new Stats(k.name, k.ops, 0, 0, 0, k.foreground ? s.queued - backgroundQueued : k.size,
                    k.inFlight, k.rejected, LatencyRecorder.percentile(k.waitCounts, 50),
                    LatencyRecorder.percentile(k.waitCounts, 99), LatencyRecorder.percentile(k.serviceCounts, 50),
                    LatencyRecorder.percentile(k.serviceCounts, 99), 0, k.cpuNanos, k.share,
                    LatencyRecorder.percentile(k.waitCounts, 100), LatencyRecorder.percentile(k.serviceCounts, 100),
                    k.workerNanos));
            if (resetLatencies) {
                LatencyRecorder.reset(k.waitCounts);
                LatencyRecorder.reset(k.serviceCounts);
            }
            taskLeads.put(k.name, k.counter - s.rootVtime);
        }
        Levels levels = new Levels(new Level(s.rootVtime, taskLeads), new Level(s.levels.vtime, tenantLeads), volumeLevels,
                reservationLags);
        return new SchedulerSnapshot(now, vs, ts, ks, levels, draining);
    }
}
