package io.weir.scheduler.sim;

import io.weir.scheduler.HierarchicalScheduler;
import io.weir.scheduler.QueueFullException;
import io.weir.scheduler.SchedulerConfig;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * A deterministic discrete-event simulator of a data node's CPU running a scheduling
 * {@link Policy} under synthetic {@link Workload}s, in virtual time.
 *
 * <p>The node has {@code cpus} identical workers. A request occupies one worker for its
 * simulated CPU time; the policy is asked for the next request whenever a worker is free, and is
 * told the CPU time at completion, just as {@link io.weir.scheduler.QosExecutor} does with real
 * threads. The same seed always gives the same run.
 *
 * <pre>{@code
 * SimResult r = new Simulator(config, Policy::production, 1, 42)
 *     .add(Workload.closed("v1", 8).sizes(SizeMix.powersOfTwo(512, 1 << 20)))
 *     .add(Workload.background("gc", 2, 200_000))
 *     .measureFrom(1_000_000_000L)
 *     .run(10_000_000_000L);
 * System.out.println(r.report());
 * }</pre>
 *
 * <h2>Running experiments</h2>
 * <pre>
 * mvn -q compile org.codehaus.mojo:exec-maven-plugin:3.5.0:java -Dexec.mainClass=io.weir.scheduler.sim.Simulator -Dexec.args="weights"
 * java -cp target/classes:$HOME/.m2/repository/org/hdrhistogram/HdrHistogram/2.2.2/HdrHistogram-2.2.2.jar \
 *     io.weir.scheduler.sim.Simulator all 10 42
 * </pre>
 * Arguments: {@code scenario [seconds] [seed]}; scenarios are listed by {@link #main} with no
 * arguments. Each prints the production scheduler beside plain FIFO and textbook SFQ.
 */
public final class Simulator {

    private static final int START = 0;
    private static final int ARRIVAL = 1;
    private static final int COMPLETE = 2;
    private static final int WAKE = 3;
    private static final int RECONFIGURE = 4;
    private static final int ISSUE = 5;

    private static final class Event {
        final long time;
        final long seq;
        final int type;
        final int workload;
        final SimRequest request;
        final SchedulerConfig config;

        Event(long time, long seq, int type, int workload, SimRequest request, SchedulerConfig config) {
            this.time = time;
            this.seq = seq;
            this.type = type;
            this.workload = workload;
            this.request = request;
            this.config = config;
        }
    }

    private final SchedulerConfig config;
    private final Policy policy;
    private final int cpus;
    private final SplittableRandom random;
    private final List<Workload> workloads = new ArrayList<>();
    private final List<Event> reconfigs = new ArrayList<>();
    private final PriorityQueue<Event> events = new PriorityQueue<>((a, b) -> {
        int c = Long.compare(a.time, b.time);
        return c != 0 ? c : Long.compare(a.seq, b.seq);
    });
    private long measureFrom;
    private Consumer<SimRequest> onDispatch = r -> { };
    private Consumer<SimRequest> onComplete = r -> { };
    private long seq;
    private long requestSeq;
    private int busy;
    private long pendingWake = Long.MAX_VALUE;
    private int[] outstanding;
    private boolean[] resumeScheduled;
    private final Map<String, SimResult.Target> targets = new LinkedHashMap<>();

    /**
     * @param config the configuration the policy enforces
     * @param policy which policy to run
     * @param cpus number of simulated workers
     * @param seed random seed for sizes, arrivals and read/write choice
     */
    public Simulator(SchedulerConfig config, Policy.Factory policy, int cpus, long seed) {
        this.config = config;
        this.policy = policy.create(config);
        this.cpus = cpus;
        this.random = new SplittableRandom(seed);
    }

    /** Adds a workload. */
    public Simulator add(Workload w) {
        workloads.add(w);
        return this;
    }

    /** Applies {@code next} at virtual time {@code t}. */
    public Simulator reconfigureAt(long t, SchedulerConfig next) {
        reconfigs.add(new Event(t, 0, RECONFIGURE, -1, null, next));
        return this;
    }

    /** Only completions at or after {@code t} count in the result (warm-up before). */
    public Simulator measureFrom(long t) {
        this.measureFrom = t;
        return this;
    }

    /** Observes every dispatch (the request carries its dispatch time). */
    public Simulator onDispatch(Consumer<SimRequest> listener) {
        this.onDispatch = listener;
        return this;
    }

    /** Observes every completion. */
    public Simulator onComplete(Consumer<SimRequest> listener) {
        this.onComplete = listener;
        return this;
    }

    /** The policy under simulation (for inspection by tests). */
    public Policy policy() {
        return policy;
    }

    /** Runs until virtual time {@code duration} and returns what was measured. */
    public SimResult run(long duration) {
        outstanding = new int[workloads.size()];
        resumeScheduled = new boolean[workloads.size()];
        Set<String> loadedVolumes = new LinkedHashSet<>();
        Set<String> loadedTasks = new LinkedHashSet<>();
        for (int i = 0; i < workloads.size(); i++) {
            Workload w = workloads.get(i);
            schedule(w.startNanos(), START, i, null, null);
            if (w.background()) {
                loadedTasks.add(w.target());
            } else {
                loadedVolumes.add(w.target());
                loadedTasks.add(SchedulerConfig.FOREGROUND);
            }
        }
        for (Event e : reconfigs) {
            schedule(e.time, RECONFIGURE, -1, null, e.config);
        }
        long now = 0;
        while (!events.isEmpty()) {
            Event e = events.peek();
            if (e.time > duration) {
                break;
            }
            events.poll();
            now = e.time;
            handle(e, now);
            if (events.isEmpty() || events.peek().time != now) {
                dispatch(now);
            }
        }
        return new SimResult(policy.name(), config, duration - measureFrom, targets, loadedVolumes, loadedTasks);
    }

    private void handle(Event e, long now) {
        switch (e.type) {
            case START:
            case ISSUE:
                fill(e.workload, now, e.type == ISSUE);
                break;
            case ARRIVAL: {
                Workload w = workloads.get(e.workload);
                if (w.activeAt(now)) {
                    issue(e.workload, now);
                    double mean = 1e9 / w.ratePerSec();
                    long gap = (long) Math.max(1, w.poisson() ? -Math.log(1 - random.nextDouble()) * mean : mean);
                    schedule(now + gap, ARRIVAL, e.workload, null, null);
                } else {
                    long t = nextActive(w, now);
                    if (t != Long.MAX_VALUE) {
                        schedule(t, ARRIVAL, e.workload, null, null);
                    }
                }
                break;
            }
            case COMPLETE: {
                SimRequest r = e.request;
                busy--;
                policy.complete(r, r.cpuNanos, now);
                outstanding[r.workload]--;
                if (now >= measureFrom) {
                    SimResult.Target t = targets.computeIfAbsent(r.target, k -> new SimResult.Target());
                    t.ops++;
                    t.bytes += r.bytes;
                    t.cpuNanos += r.cpuNanos;
                    long wait = r.dispatchNanos - r.arrivalNanos;
                    t.waitSumNanos += wait;
                    t.maxWaitNanos = Math.max(t.maxWaitNanos, wait);
                }
                onComplete.accept(r);
                Workload w = workloads.get(r.workload);
                if (w.depth() > 0) {
                    if (w.thinkNanos() > 0) {
                        schedule(now + w.thinkNanos(), ISSUE, r.workload, null, null);
                    } else {
                        fill(r.workload, now, true);
                    }
                }
                break;
            }
            case RECONFIGURE:
                policy.reconfigure(e.config, now);
                break;
            case WAKE:
                pendingWake = Long.MAX_VALUE;
                break;
            default:
                throw new IllegalStateException("event " + e.type);
        }
    }

    /** Tops a closed loop up to its depth, or starts an open loop's arrivals. */
    private void fill(int i, long now, boolean fromLoop) {
        Workload w = workloads.get(i);
        if (w.depth() <= 0) {
            if (!fromLoop) {
                schedule(now, ARRIVAL, i, null, null);
            }
            return;
        }
        if (!w.activeAt(now)) {
            long t = nextActive(w, now);
            if (t != Long.MAX_VALUE && !resumeScheduled[i]) {
                resumeScheduled[i] = true;
                schedule(t, START, i, null, null);
            }
            return;
        }
        resumeScheduled[i] = false;
        while (outstanding[i] < w.depth()) {
            if (!issue(i, now)) {
                break;
            }
        }
    }

    private static long nextActive(Workload w, long t) {
        if (t >= w.stopNanos()) {
            return Long.MAX_VALUE;
        }
        if (t < w.startNanos()) {
            return w.startNanos();
        }
        if (w.onNanos() <= 0) {
            return t;
        }
        long period = w.onNanos() + w.offNanos();
        long phase = (t - w.startNanos()) % period;
        long next = phase < w.onNanos() ? t : t + (period - phase);
        return next >= w.stopNanos() ? Long.MAX_VALUE : next;
    }

    private boolean issue(int i, long now) {
        Workload w = workloads.get(i);
        long bytes = w.background() ? 0 : w.sizes().sample(random);
        long cpu = Math.max(1, w.cpuBaseNanos() + (long) (w.cpuNanosPerByte() * bytes));
        SimRequest r = new SimRequest(requestSeq++, i, w.target(), w.background(), bytes,
                w.background() ? null : w.kindFor(random.nextDouble()), cpu, now);
        try {
            policy.enqueue(r, now);
            outstanding[i]++;
            return true;
        } catch (QueueFullException | IllegalArgumentException e) {
            targets.computeIfAbsent(w.target(), k -> new SimResult.Target()).rejected++;
            return false;
        }
    }

    private void dispatch(long now) {
        while (busy < cpus) {
            SimRequest r = policy.next(now);
            if (r == null) {
                break;
            }
            busy++;
            r.dispatchNanos = now;
            onDispatch.accept(r);
            schedule(now + r.cpuNanos, COMPLETE, r.workload, r, null);
        }
        if (busy < cpus) {
            long t = policy.nextEligibleTime();
            if (t != HierarchicalScheduler.NO_DEADLINE) {
                if (t <= now) {
                    t = now + 1;
                }
                if (t < pendingWake) {
                    pendingWake = t;
                    schedule(t, WAKE, -1, null, null);
                }
            }
        }
    }

    private void schedule(long t, int type, int workload, SimRequest r, SchedulerConfig c) {
        events.add(new Event(t, seq++, type, workload, r, c));
    }

    // ------------------------------------------------------------------------------- scenarios

    private static final long SEC = 1_000_000_000L;

    /**
     * Runs a named scenario with the production scheduler, FIFO and SFQ, and prints each flow's
     * and task's share beside the ideal.
     *
     * <p>Usage: {@code Simulator scenario [seconds] [seed]}, where scenario is one of
     * {@code weights, tenants, tasks, cap, reservation, rejoin, all}.
     */
    public static void main(String[] args) {
        String usage = "usage: Simulator <" + String.join("|", SCENARIOS) + "|all> [seconds] [seed]";
        if (args.length == 0 || args.length > 3) {
            System.out.println(usage);
            return;
        }
        List<String> names = args[0].equals("all") ? SCENARIOS : List.of(args[0]);
        if (!SCENARIOS.containsAll(names)) {
            fail("unknown scenario '" + args[0] + "'", usage);
        }
        long seconds = args.length > 1 ? positive(args[1], "seconds", usage) : 10;
        long seed = args.length > 2 ? number(args[2], "seed", usage) : 42;
        for (String name : names) {
            System.out.println("=== scenario " + name + " (" + seconds + " s, seed " + seed + ")");
            for (Policy.Factory f : List.<Policy.Factory>of(Policy::production, Policy::fifo, Policy::sfq)) {
                Simulator sim = scenario(name, f, seed);
                System.out.println(sim.measureFrom(SEC).run(seconds * SEC).report());
            }
        }
    }

    /** The scenarios {@link #main} knows, in the order {@code all} runs them. */
    static final List<String> SCENARIOS = List.of("weights", "tenants", "tasks", "cap", "reservation", "rejoin");

    private static long positive(String arg, String what, String usage) {
        long value = number(arg, what, usage);
        if (value <= 1) {
            fail(what + " must be more than 1 (the first second is warm-up), was " + arg, usage);
        }
        return value;
    }

    private static long number(String arg, String what, String usage) {
        try {
            return Long.parseLong(arg);
        } catch (NumberFormatException e) {
            fail(what + " must be a whole number, was '" + arg + "'", usage);
            return 0; // not reached
        }
    }

    private static void fail(String message, String usage) {
        System.err.println("Simulator: " + message);
        System.err.println(usage);
        System.exit(2);
    }

    /** Builds one of the named scenarios of {@link #main}. */
    public static Simulator scenario(String name, Policy.Factory policy, long seed) {
        SizeMix mixed = SizeMix.powersOfTwo(512, 1 << 20);
        switch (name) {
            case "weights": {
                SchedulerConfig c = SchedulerConfig.builder().tenant(TenantSpec.of("t"))
                        .volume(VolumeSpec.of("w1", "t").withWeight(100))
                        .volume(VolumeSpec.of("w2", "t").withWeight(200))
                        .volume(VolumeSpec.of("w4", "t").withWeight(400))
                        .volume(VolumeSpec.of("w8", "t").withWeight(800)).build();
                Simulator s = new Simulator(c, policy, 1, seed);
                for (String v : List.of("w1", "w2", "w4", "w8")) {
                    s.add(Workload.closed(v, 16).sizes(mixed).cpu(5_000, 0.1).writes(0.3));
                }
                return s;
            }
            case "tenants": {
                SchedulerConfig c = SchedulerConfig.builder()
                        .tenant(TenantSpec.of("small").withWeight(100)).tenant(TenantSpec.of("big").withWeight(300))
                        .volume(VolumeSpec.of("s1", "small")).volume(VolumeSpec.of("s2", "small"))
                        .volume(VolumeSpec.of("s3", "small")).volume(VolumeSpec.of("b1", "big")).build();
                Simulator s = new Simulator(c, policy, 2, seed);
                for (String v : List.of("s1", "s2", "s3", "b1")) {
                    s.add(Workload.closed(v, 8).sizes(mixed).cpu(5_000, 0.1));
                }
                return s;
            }
            case "tasks": {
                SchedulerConfig c = SchedulerConfig.builder().task("foreground", 70).task("gc", 20).task("flush", 10)
                        .tenant(TenantSpec.of("t")).volume(VolumeSpec.of("v", "t")).build();
                return new Simulator(c, policy, 2, seed)
                        .add(Workload.closed("v", 16).cpu(20_000, 0))
                        .add(Workload.background("gc", 4, 300_000))
                        .add(Workload.background("flush", 4, 70_000));
            }
            case "cap": {
                SchedulerConfig c = SchedulerConfig.builder().tenant(TenantSpec.of("t"))
                        .volume(VolumeSpec.of("capped", "t").withWeight(1000).withMaxIops(2_000))
                        .volume(VolumeSpec.of("a", "t")).volume(VolumeSpec.of("b", "t")).build();
                Simulator s = new Simulator(c, policy, 1, seed);
                for (String v : List.of("capped", "a", "b")) {
                    s.add(Workload.closed(v, 16).cpu(20_000, 0));
                }
                return s;
            }
            case "reservation": {
                SchedulerConfig c = SchedulerConfig.builder().tenant(TenantSpec.of("t"))
                        .volume(VolumeSpec.of("reserved", "t").withWeight(1).withMinIops(10_000))
                        .volume(VolumeSpec.of("heavy1", "t").withWeight(5_000))
                        .volume(VolumeSpec.of("heavy2", "t").withWeight(5_000)).build();
                Simulator s = new Simulator(c, policy, 1, seed);
                for (String v : List.of("reserved", "heavy1", "heavy2")) {
                    s.add(Workload.closed(v, 16).cpu(20_000, 0));
                }
                return s;
            }
            case "rejoin": {
                SchedulerConfig c = SchedulerConfig.builder().tenant(TenantSpec.of("t"))
                        .volume(VolumeSpec.of("steady", "t")).volume(VolumeSpec.of("sleeper", "t")).build();
                return new Simulator(c, policy, 1, seed)
                        .add(Workload.closed("steady", 16).cpu(20_000, 0))
                        .add(Workload.closed("sleeper", 16).cpu(20_000, 0).onOff(2 * SEC, 10 * SEC));
            }
            default:
                throw new IllegalArgumentException("unknown scenario '" + name + "'");
        }
    }
}
