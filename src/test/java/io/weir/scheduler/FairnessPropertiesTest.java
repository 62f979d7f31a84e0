package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The SFQ fairness bound, checked exactly: for every pair of continuously backlogged siblings,
 * over every interval, {@code |W_i/w_i - W_j/w_j| <= Lmax_i/w_i + Lmax_j/w_j}, computed in
 * integers as {@code |W_i*w_j - W_j*w_i| <= Lmax_i*w_j + Lmax_j*w_i} plus the documented counter
 * quantisation of 4 units of {@code 1/65536} byte per unit weight (that is, {@code 4*w_i*w_j/65536}
 * after cross-multiplying), which is below 0.02% of the smallest possible bound.
 */
class FairnessPropertiesTest {

    private static final int DISPATCHES = 600;

    /** Integer slack for counter quantisation after cross-multiplying by {@code w_i * w_j}. */
    private static long quantisation(long wi, long wj) {
        return (4 * wi * wj + SchedNode.COUNTER_SCALE - 1) / SchedNode.COUNTER_SCALE;
    }

    private record Dispatch(int leaf, long cost) {
    }

    /**
     * Drives a scheduler with every leaf permanently backlogged: each dispatch is replaced at once
     * by a new request of a random size. Optionally reconfigures weights at step {@code reconfigAt}.
     */
    private static List<Dispatch> run(int[] tenantOf, int[] leafWeights, int[] tenantWeights, int[] newLeafWeights,
            int[] newTenantWeights, int reconfigAt, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        SchedulerConfig c1 = config(tenantOf, leafWeights, tenantWeights);
        SchedulerConfig c2 = config(tenantOf, newLeafWeights, newTenantWeights);
        HierarchicalScheduler<Integer> s = new HierarchicalScheduler<>(c1, 0);
        int n = tenantOf.length;
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < 3; k++) {
                s.enqueue("v" + i, IoKind.READ, size(rnd), i, 0);
            }
        }
        List<Dispatch> out = new ArrayList<>();
        for (int step = 0; step < DISPATCHES; step++) {
            if (step == reconfigAt) {
                s.reconfigure(c2, 0);
            }
            Ticket<Integer> t = s.next(0);
            int leaf = t.request();
            out.add(new Dispatch(leaf, Math.max(t.bytes(), CostModel.DEFAULT_MIN_CHARGE_BYTES)));
            s.complete(t, 1, 0);
            s.enqueue("v" + leaf, rnd.nextBoolean() ? IoKind.READ : IoKind.WRITE, size(rnd), leaf, 0);
        }
        return out;
    }

    private static long size(SplittableRandom rnd) {
        // 512 B .. 1 MiB, log-uniform, so small and huge requests both occur
        return 512L << rnd.nextInt(12) | rnd.nextInt(512);
    }

    private static SchedulerConfig config(int[] tenantOf, int[] leafWeights, int[] tenantWeights) {
        SchedulerConfig.Builder b = SchedulerConfig.builder();
        for (int t = 0; t < tenantWeights.length; t++) {
            b.tenant(TenantSpec.of("t" + t).withWeight(tenantWeights[t]));
        }
        for (int i = 0; i < tenantOf.length; i++) {
            b.volume(VolumeSpec.of("v" + i, "t" + tenantOf[i]).withWeight(leafWeights[i]));
        }
        return b.build();
    }

    /**
     * Checks the bound between groups {@code a} and {@code b} over dispatches {@code [from, to)}:
     * {@code group[leaf]} names each leaf's group (or -1 if not part of this check); {@code
     * countInScope} decides which dispatches advance the sequence (all of them for tenant pairs,
     * only the tenant's own for volumes within a tenant, which is the same thing since other
     * tenants' dispatches change neither W).
     */
    private static void checkPair(List<Dispatch> d, int from, int to, int[] group, int a, int b, long wa, long wb,
            String what) {
        checkPair(d, from, from, to, group, a, b, wa, wb, what);
    }

    /**
     * As above, with {@code Lmax} taken over {@code [lmaxFrom, to)}: the counters' separation at
     * {@code from} is bounded by the last increment of each flow before {@code from}, which may
     * lie in {@code [lmaxFrom, from)}.
     */
    private static void checkPair(List<Dispatch> d, int lmaxFrom, int from, int to, int[] group, int a, int b,
            long wa, long wb, String what) {
        long wA = 0, wB = 0, lA = 0, lB = 0;
        long max = 0, min = 0;
        for (int k = lmaxFrom; k < from; k++) {
            Dispatch x = d.get(k);
            int g = group[x.leaf()];
            if (g == a) {
                lA = Math.max(lA, x.cost());
            } else if (g == b) {
                lB = Math.max(lB, x.cost());
            }
        }
        for (int k = from; k < to; k++) {
            Dispatch x = d.get(k);
            int g = group[x.leaf()];
            if (g == a) {
                wA += x.cost();
                lA = Math.max(lA, x.cost());
            } else if (g == b) {
                wB += x.cost();
                lB = Math.max(lB, x.cost());
            } else {
                continue;
            }
            long diff = wA * wb - wB * wa;
            max = Math.max(max, diff);
            min = Math.min(min, diff);
        }
        long bound = lA * wb + lB * wa + quantisation(wa, wb);
        assertThat(max - min)
                .as("%s: max over intervals of |W_a*w_b - W_b*w_a| (w_a=%d, w_b=%d, Lmax_a=%d, Lmax_b=%d)", what, wa, wb, lA, lB)
                .isLessThanOrEqualTo(bound);
    }

    /** First index at or after {@code from} by which every leaf in {@code leaves} was dispatched once. */
    private static int allDispatchedAfter(List<Dispatch> d, int from, int[] group, int a, int b) {
        boolean seenA = false, seenB = false;
        for (int k = from; k < d.size(); k++) {
            int g = group[d.get(k).leaf()];
            seenA |= g == a;
            seenB |= g == b;
            if (seenA && seenB) {
                return k + 1;
            }
        }
        return d.size();
    }

    @Property(tries = 80)
    void backloggedVolumesStayWithinTheSfqBoundEvenAcrossAWeightChange(
            @ForAll @Size(min = 2, max = 5) List<@IntRange(min = 1, max = 10_000) Integer> weights,
            @ForAll @Size(min = 5, max = 5) List<@IntRange(min = 1, max = 10_000) Integer> newWeights,
            @ForAll @IntRange(min = 0, max = DISPATCHES) int reconfigAt,
            @ForAll long seed) {
        int n = weights.size();
        int[] tenantOf = new int[n];
        int[] w1 = weights.stream().mapToInt(Integer::intValue).toArray();
        int[] w2 = newWeights.subList(0, n).stream().mapToInt(Integer::intValue).toArray();
        List<Dispatch> d = run(tenantOf, w1, new int[] {100}, w2, new int[] {100}, reconfigAt, seed);
        int[] identity = new int[n];
        for (int i = 0; i < n; i++) {
            identity[i] = i;
        }
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                checkPair(d, 0, Math.min(reconfigAt, d.size()), identity, i, j, w1[i], w1[j], "before reconfigure");
                // after a weight change the old increments still separate the counters until each
                // flow has been charged once under its new weight; the bound holds from then on
                int at = Math.min(reconfigAt, d.size());
                int start = allDispatchedAfter(d, at, identity, i, j);
                checkPair(d, at, start, d.size(), identity, i, j, w2[i], w2[j], "after reconfigure");
            }
        }
    }

    @Property(tries = 80)
    void backloggedTenantsAndTheirVolumesStayWithinTheSfqBound(
            @ForAll @Size(min = 2, max = 4) List<@IntRange(min = 1, max = 10_000) Integer> tenantWeights,
            @ForAll @Size(min = 2, max = 8) List<@IntRange(min = 1, max = 10_000) Integer> volumeWeights,
            @ForAll long seed) {
        int tenants = tenantWeights.size();
        int n = volumeWeights.size();
        int[] tenantOf = new int[n];
        for (int i = 0; i < n; i++) {
            tenantOf[i] = i % tenants;
        }
        int[] vw = volumeWeights.stream().mapToInt(Integer::intValue).toArray();
        int[] tw = tenantWeights.stream().mapToInt(Integer::intValue).toArray();
        List<Dispatch> d = run(tenantOf, vw, tw, vw, tw, Integer.MAX_VALUE, seed);
        for (int a = 0; a < tenants; a++) {
            for (int b = a + 1; b < tenants; b++) {
                if (hasVolumes(tenantOf, a) && hasVolumes(tenantOf, b)) {
                    checkPair(d, 0, d.size(), tenantOf, a, b, tw[a], tw[b], "tenants " + a + "," + b);
                }
            }
        }
        int[] identity = new int[n];
        for (int i = 0; i < n; i++) {
            identity[i] = i;
        }
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                if (tenantOf[i] == tenantOf[j]) {
                    checkPair(d, 0, d.size(), identity, i, j, vw[i], vw[j], "volumes " + i + "," + j);
                }
            }
        }
    }

    private static boolean hasVolumes(int[] tenantOf, int t) {
        for (int x : tenantOf) {
            if (x == t) {
                return true;
            }
        }
        return false;
    }
}
