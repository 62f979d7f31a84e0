package io.weir.scheduler.sim;

import io.weir.scheduler.SchedulerConfig;
import io.weir.scheduler.SchedulerConfig.TaskSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * Reference policy: textbook start-time fair queueing [1] over one flat set of queues, one per
 * volume (weight = the volume's weight) and one per background task (weight = its share). The
 * cost of a request is its CPU time, the one resource the simulator models. It has no tenants,
 * no limits, no reservations and no separate currencies: it shows what the hierarchy adds.
 *
 * <p>Tags are assigned at arrival: {@code S = max(v, F_prev)}, {@code F = S + cost / w}, and
 * {@code v} is the start tag of the request in service; requests are served in increasing start
 * tag, ties by arrival.
 *
 * <p>[1] P. Goyal, H. M. Vin, H. Cheng, "Start-time fair queueing", SIGCOMM 1996.
 */
final class SfqPolicy implements Policy {

    private final Map<String, Double> weights = new HashMap<>();
    private final Map<String, Double> lastFinish = new HashMap<>();
    private final Map<String, ArrayDeque<SimRequest>> queues = new HashMap<>();
    private final PriorityQueue<SimRequest> heads = new PriorityQueue<>((a, b) -> {
        int c = Long.compare(a.sfqStart, b.sfqStart);
        return c != 0 ? c : Long.compare(a.id, b.id);
    });
    private long vtime;

    SfqPolicy(SchedulerConfig config) {
        for (VolumeSpec v : config.volumes()) {
            weights.put(v.id(), (double) v.weight());
        }
        for (TaskSpec t : config.tasks()) {
            weights.put(t.name(), t.share());
        }
    }

    @Override
    public String name() {
        return "sfq";
    }

    @Override
    public void enqueue(SimRequest r, long now) {
        double w = weights.getOrDefault(r.target, 1.0);
        double prev = lastFinish.getOrDefault(r.target, 0.0);
        double start = Math.max(vtime, prev);
        lastFinish.put(r.target, start + Math.max(1, r.cpuNanos) / w);
        r.sfqStart = (long) start;
        ArrayDeque<SimRequest> q = queues.computeIfAbsent(r.target, k -> new ArrayDeque<>());
        q.addLast(r);
        if (q.size() == 1) {
            heads.add(r);
        }
    }

    @Override
    public SimRequest next(long now) {
        SimRequest r = heads.poll();
        if (r == null) {
            return null;
        }
        vtime = Math.max(vtime, r.sfqStart);
        ArrayDeque<SimRequest> q = queues.get(r.target);
        q.pollFirst();
        if (!q.isEmpty()) {
            heads.add(q.peekFirst());
        }
        return r;
    }

    @Override
    public void complete(SimRequest r, long cpuNanos, long now) {
    }
}
