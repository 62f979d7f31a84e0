package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * Randomised properties of the scheduler against independent oracles: work conservation, limits
 * over every window, and exactly-once completion across live reconfiguration.
 */
class SchedulerPropertiesTest {

    private static final long MS = 1_000_000L;

    /** Independent reference model of one documented rate constraint (GCRA, in doubles). */
    private static final class RefConstraint {
        final double rate;
        final double tau;
        final boolean bytes;
        double tat;

        RefConstraint(double rate, double tau, boolean bytes, long t0) {
            this.rate = rate;
            this.tau = tau;
            this.bytes = bytes;
            this.tat = t0 + tau;
        }

        /** True if the documented rule certainly admits a request at {@code now} (1 us margin). */
        boolean surelyEligible(long now) {
            return now >= tat - tau + 1_000;
        }

        /** True if the documented rule certainly rejects a request at {@code now} (1 us margin). */
        boolean surelyIneligible(long now) {
            return now < tat - tau - 1_000;
        }

        void charge(long now, long nbytes) {
            tat = Math.max(tat, now) + (bytes ? nbytes : 1) * 1e9 / rate;
        }
    }

    private static List<RefConstraint> refLimits(long maxIops, long burstIops, long maxBytes, long burstBytes, long t0) {
        List<RefConstraint> out = new ArrayList<>();
        add(out, maxIops, burstIops, false, t0);
        add(out, maxBytes, burstBytes, true, t0);
        return out;
    }

    private static void add(List<RefConstraint> out, long max, long burst, boolean bytes, long t0) {
        if (max == 0) {
            return;
        }
        double jitter = Limiter.JITTER_TOLERANCE_NANOS;
        double tau = burst > max ? Math.max(jitter, Limiter.BURST_SECONDS * (burst - max) / (double) max * 1e9) : jitter;
        out.add(new RefConstraint(max, tau, bytes, t0));
        if (burst > max) {
            out.add(new RefConstraint(burst, jitter, bytes, t0));
        }
    }

    private static SchedulerConfig randomConfig(SplittableRandom r, int volumes, boolean tenantLimits) {
        SchedulerConfig.Builder b = SchedulerConfig.builder().task("foreground", 50).task("gc", 10);
        for (int t = 0; t < 2; t++) {
            TenantSpec ts = TenantSpec.of("t" + t).withWeight(1 + r.nextInt(1000));
            if (tenantLimits && r.nextInt(3) == 0) {
                long max = 200 + r.nextInt(5000);
                ts = ts.withMaxIops(max);
                if (r.nextBoolean()) {
                    ts = ts.withBurstIops(max * 2);
                }
            }
            if (tenantLimits && r.nextInt(4) == 0) {
                ts = ts.withMaxBytesPerSec(1_000_000 + r.nextInt(50_000_000));
            }
            b.tenant(ts);
        }
        for (int i = 0; i < volumes; i++) {
            VolumeSpec v = VolumeSpec.of("v" + i, "t" + (i % 2)).withWeight(1 + r.nextInt(10_000)).withQueueCapacity(64);
            int kind = r.nextInt(4);
            if (kind == 1 || kind == 3) {
                long max = 50 + r.nextInt(3000);
                v = v.withMaxIops(max);
                if (r.nextBoolean()) {
                    v = v.withBurstIops(max + 1 + r.nextInt(3000));
                }
            }
            if (kind == 2 || kind == 3) {
                long max = 500_000 + r.nextInt(20_000_000);
                v = v.withMaxBytesPerSec(max);
                if (r.nextBoolean()) {
                    v = v.withBurstBytesPerSec(max * 3);
                }
            }
            b.volume(v);
        }
        return b.build();
    }

    private static long size(SplittableRandom r) {
        return 512L << r.nextInt(10);
    }

    @Property(tries = 60)
    void cpuNeverIdlesWhileEligibleWorkExistsAndNeverRunsIneligibleWork(@ForAll long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int n = 2 + r.nextInt(4);
        SchedulerConfig c = randomConfig(r, n, true);
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        Map<String, List<RefConstraint>> ref = new HashMap<>();
        Map<String, String> tenantOf = new HashMap<>();
        for (VolumeSpec v : c.volumes()) {
            ref.put(v.id(), refLimits(v.maxIops(), v.burstIops(), v.maxBytesPerSec(), v.burstBytesPerSec(), 0));
            tenantOf.put(v.id(), v.tenantId());
        }
        for (TenantSpec t : c.tenants()) {
            ref.put(t.id(), refLimits(t.maxIops(), t.burstIops(), t.maxBytesPerSec(), t.burstBytesPerSec(), 0));
        }
        Map<String, Integer> depth = new HashMap<>();
        int background = 0;
        long now = 0;
        for (int step = 0; step < 1500; step++) {
            int action = r.nextInt(10);
            if (action < 3) {
                String v = "v" + r.nextInt(n);
                try {
                    s.enqueue(v, IoKind.WRITE, size(r), v, now);
                    depth.merge(v, 1, Integer::sum);
                } catch (QueueFullException e) {
                    // bounded queue: fine
                }
            } else if (action == 3 && r.nextInt(4) == 0) {
                s.enqueueBackground("gc", "gc", now);
                background++;
            } else if (action == 4) {
                now += r.nextInt(5) == 0 ? r.nextInt(300) * MS : r.nextInt(2_000_000);
            } else {
                Ticket<String> t = s.next(now);
                if (t != null) {
                    if (t.volumeId() == null) {
                        background--;
                    } else {
                        String v = t.volumeId();
                        depth.merge(v, -1, Integer::sum);
                        for (RefConstraint k : ref.get(v)) {
                            assertThat(k.surelyIneligible(now)).as("volume %s dispatched over its limit", v).isFalse();
                            k.charge(now, t.bytes());
                        }
                        for (RefConstraint k : ref.get(tenantOf.get(v))) {
                            assertThat(k.surelyIneligible(now)).as("tenant of %s dispatched over its limit", v).isFalse();
                            k.charge(now, t.bytes());
                        }
                    }
                    s.complete(t, 1000, now);
                } else {
                    assertThat(background).as("background work waiting while CPU idles").isZero();
                    final long at = now;
                    for (Map.Entry<String, Integer> e : depth.entrySet()) {
                        if (e.getValue() == 0) {
                            continue;
                        }
                        boolean eligible = ref.get(e.getKey()).stream().allMatch(k -> k.surelyEligible(at))
                                && ref.get(tenantOf.get(e.getKey())).stream().allMatch(k -> k.surelyEligible(at));
                        assertThat(eligible).as("volume %s is eligible but the scheduler idled", e.getKey()).isFalse();
                    }
                    if (s.queuedCount() > 0) {
                        assertThat(s.nextEligibleTime() - now).as("next eligible time lies ahead").isPositive();
                    }
                }
            }
        }
    }

    @Property(tries = 40)
    void noLimitIsExceededOverAnyWindowBeyondItsBurstAllowance(@ForAll long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int n = 2 + r.nextInt(3);
        SchedulerConfig c = randomConfig(r, n, true);
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        Map<String, List<long[]>> log = new HashMap<>(); // node -> (time, bytes)
        long now = 0;
        long[] pausedUntil = new long[n];
        for (int step = 0; step < 3000; step++) {
            for (int i = 0; i < n; i++) {
                String v = "v" + i;
                if (pausedUntil[i] - now <= 0 && s.queueDepth(v) < 4) {
                    s.enqueue(v, IoKind.READ, size(r), v, now);
                }
                if (r.nextInt(200) == 0) {
                    pausedUntil[i] = now + r.nextInt(3000) * MS; // idle: accrue burst credit
                }
            }
            Ticket<String> t = s.next(now);
            if (t == null) {
                long next = s.nextEligibleTime();
                now = next == HierarchicalScheduler.NO_DEADLINE ? now + MS : Math.max(now + 1, next);
                continue;
            }
            String v = t.volumeId();
            log.computeIfAbsent(v, k -> new ArrayList<>()).add(new long[] {now, t.bytes()});
            log.computeIfAbsent("t:" + "t" + (Integer.parseInt(v.substring(1)) % 2), k -> new ArrayList<>())
                    .add(new long[] {now, t.bytes()});
            s.complete(t, 0, now);
            now += r.nextInt(3) == 0 ? r.nextInt(200_000) : 0;
        }
        for (VolumeSpec v : c.volumes()) {
            checkWindows(log.get(v.id()), v.maxIops(), v.burstIops(), v.maxBytesPerSec(), v.burstBytesPerSec(), v.id());
        }
        for (TenantSpec t : c.tenants()) {
            checkWindows(log.get("t:" + t.id()), t.maxIops(), t.burstIops(), t.maxBytesPerSec(), t.burstBytesPerSec(), t.id());
        }
    }

    /**
     * Over every window {@code [t_a, t_b]} of dispatches: ops {@code <= max*d + max*tau + 1} and
     * {@code <= burst*d + burst*jitter + 1}; bytes likewise with one largest request of overdraft.
     */
    private static void checkWindows(List<long[]> events, long maxIops, long burstIops, long maxBytes, long burstBytes,
            String who) {
        if (events == null) {
            return;
        }
        List<RefConstraint> iops = new ArrayList<>();
        add(iops, maxIops, burstIops, false, 0);
        List<RefConstraint> bytes = new ArrayList<>();
        add(bytes, maxBytes, burstBytes, true, 0);
        long lmax = events.stream().mapToLong(e -> e[1]).max().orElse(0);
        int m = events.size();
        for (int a = 0; a < m; a++) {
            long ops = 0, nbytes = 0;
            for (int b = a; b < m; b++) {
                ops++;
                nbytes += events.get(b)[1];
                // + 2 ns: times and tolerances are whole nanoseconds, rounded down by the scheduler
                double d = events.get(b)[0] - events.get(a)[0] + 2;
                for (RefConstraint k : iops) {
                    double allowance = k.rate * (d + k.tau) / 1e9 + 1;
                    if (ops > allowance + 1e-6) {
                        throw new AssertionError(who + ": " + ops + " ops in " + d + " ns exceed " + allowance
                                + " (rate " + k.rate + ", tau " + k.tau + ")");
                    }
                }
                for (RefConstraint k : bytes) {
                    double allowance = k.rate * (d + k.tau) / 1e9 + lmax;
                    if (nbytes > allowance + 1e-3) {
                        throw new AssertionError(who + ": " + nbytes + " bytes in " + d + " ns exceed " + allowance);
                    }
                }
            }
        }
    }

    /**
     * Usage reports are differences of consecutive snapshots, and a counter that went down reads
     * as a recreated volume; so every cumulative counter of a live volume must never decrease,
     * whatever the limits, timers and reconfigurations in between.
     */
    @Property(tries = 60)
    void cumulativeCountersOfALiveVolumeNeverDecrease(@ForAll long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int n = 2 + r.nextInt(4);
        HierarchicalScheduler<Long> s = new HierarchicalScheduler<>(randomConfig(r, n, true), 0);
        List<Ticket<Long>> running = new ArrayList<>();
        Map<String, Stats> previous = Map.of();
        long now = 0;
        for (int step = 0; step < 3000; step++) {
            int action = r.nextInt(20);
            if (action < 7) {
                List<String> live = s.volumeIds();
                if (!live.isEmpty()) {
                    try {
                        IoKind kind = IoKind.values()[r.nextInt(IoKind.values().length)];
                        s.enqueue(live.get(r.nextInt(live.size())), kind, size(r), (long) step, now);
                    } catch (QueueFullException e) {
                        // counted in rejected
                    }
                }
            } else if (action < 11) {
                Ticket<Long> t = s.next(now);
                if (t != null) {
                    running.add(t);
                }
            } else if (action < 14 && !running.isEmpty()) {
                s.complete(running.remove(r.nextInt(running.size())), r.nextInt(10_000), now);
            } else if (action < 17) {
                now += r.nextInt(5_000) * 1_000L; // up to 5 ms, often past a throttled node's due time
            } else if (action == 17 && r.nextInt(4) == 0) {
                SchedulerConfig next = mutate(r, s.config(), n + 3);
                s.reconfigure(next, now);
                // a volume removed here may come back later with new counters: compare it no more
                Set<String> kept = new HashSet<>();
                next.volumes().forEach(v -> kept.add(v.id()));
                previous = new HashMap<>(previous);
                previous.keySet().retainAll(kept);
            } else {
                Map<String, Stats> current = s.snapshot(now, r.nextBoolean()).volumes();
                for (Stats cur : current.values()) {
                    Stats prev = previous.get(cur.id());
                    if (prev == null) {
                        continue;
                    }
                    assertThat(cur.readOps()).as("readOps of %s", cur.id()).isGreaterThanOrEqualTo(prev.readOps());
                    assertThat(cur.writeOps()).as("writeOps of %s", cur.id()).isGreaterThanOrEqualTo(prev.writeOps());
                    assertThat(cur.readBytes()).as("readBytes of %s", cur.id()).isGreaterThanOrEqualTo(prev.readBytes());
                    assertThat(cur.writeBytes()).as("writeBytes of %s", cur.id()).isGreaterThanOrEqualTo(prev.writeBytes());
                    assertThat(cur.rejected()).as("rejected of %s", cur.id()).isGreaterThanOrEqualTo(prev.rejected());
                    assertThat(cur.throttledNanos()).as("throttledNanos of %s", cur.id())
                            .isGreaterThanOrEqualTo(prev.throttledNanos());
                    assertThat(cur.cpuNanos()).as("cpuNanos of %s", cur.id()).isGreaterThanOrEqualTo(prev.cpuNanos());
                    assertThat(cur.replicaOps()).as("replicaOps of %s", cur.id()).isGreaterThanOrEqualTo(prev.replicaOps());
                    assertThat(cur.replicaBytes()).as("replicaBytes of %s", cur.id())
                            .isGreaterThanOrEqualTo(prev.replicaBytes());
                }
                // a draining volume (removed, still finishing) may retire and come back as new
                previous = new HashMap<>(current);
                Set<String> configured = new HashSet<>();
                s.config().volumes().forEach(v -> configured.add(v.id()));
                previous.keySet().retainAll(configured);
            }
        }
    }

    @Property(tries = 60)
    void everyAcceptedRequestCompletesExactlyOnceAcrossReconfigurations(@ForAll long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int n = 2 + r.nextInt(4);
        SchedulerConfig c = randomConfig(r, n, true);
        HierarchicalScheduler<Long> s = new HierarchicalScheduler<>(c, 0);
        Set<Long> accepted = new HashSet<>();
        Set<Long> dispatched = new HashSet<>();
        Set<Long> completed = new HashSet<>();
        List<Ticket<Long>> running = new ArrayList<>();
        long id = 0;
        long now = 0;
        for (int step = 0; step < 2000; step++) {
            int action = r.nextInt(20);
            if (action < 7) {
                List<String> live = s.volumeIds();
                String v = r.nextInt(10) == 0 ? "v" + r.nextInt(n + 3) : live.isEmpty() ? "none" : live.get(r.nextInt(live.size()));
                long req = id++;
                try {
                    if (r.nextInt(8) == 0) {
                        s.enqueueBackground("gc", req, now);
                    } else {
                        s.enqueue(v, r.nextBoolean() ? IoKind.READ : IoKind.WRITE, size(r), req, now);
                    }
                    accepted.add(req);
                } catch (QueueFullException | IllegalArgumentException e) {
                    // refused at once and visibly: never scheduled
                }
            } else if (action < 12) {
                Ticket<Long> t = s.next(now);
                if (t != null) {
                    assertThat(dispatched.add(t.request())).as("dispatched twice: %s", t.request()).isTrue();
                    running.add(t);
                }
            } else if (action < 16 && !running.isEmpty()) {
                Ticket<Long> t = running.remove(r.nextInt(running.size()));
                long req = t.request();
                s.complete(t, r.nextInt(10_000), now);
                assertThat(completed.add(req)).isTrue();
            } else if (action < 18) {
                now += r.nextInt(20) * MS;
            } else if (action == 18 && r.nextInt(3) == 0) {
                s.reconfigure(mutate(r, s.config(), n + 3), now);
            }
        }
        // drain: complete everything, waiting out limits
        for (int guard = 0; guard < 1_000_000 && (s.queuedCount() > 0 || !running.isEmpty()); guard++) {
            for (Ticket<Long> t : running) {
                long req = t.request();
                s.complete(t, 0, now);
                assertThat(completed.add(req)).isTrue();
            }
            running.clear();
            Ticket<Long> t = s.next(now);
            if (t == null) {
                long next = s.nextEligibleTime();
                now = next == HierarchicalScheduler.NO_DEADLINE ? now + MS : Math.max(now + 1, next);
            } else {
                assertThat(dispatched.add(t.request())).isTrue();
                running.add(t);
            }
        }
        assertThat(s.queuedCount()).isZero();
        assertThat(s.runningCount()).isZero();
        assertThat(dispatched).isEqualTo(accepted);
        assertThat(completed).isEqualTo(accepted);
    }

    /** Removes, adds, re-weights, re-limits and moves volumes; sometimes drops and re-adds a tenant. */
    private static SchedulerConfig mutate(SplittableRandom r, SchedulerConfig old, int maxVolumes) {
        SchedulerConfig fresh = randomConfig(r, maxVolumes, true);
        SchedulerConfig.Builder b = SchedulerConfig.builder().task("foreground", 1 + r.nextInt(100));
        if (r.nextInt(4) != 0) {
            b.task("gc", 1 + r.nextInt(100));
        }
        fresh.tenants().forEach(b::tenant);
        for (VolumeSpec v : fresh.volumes()) {
            if (r.nextInt(3) != 0) {
                b.volume(r.nextInt(4) == 0 ? v.withTenant(v.tenantId().equals("t0") ? "t1" : "t0") : v);
            }
        }
        return b.build();
    }
}
