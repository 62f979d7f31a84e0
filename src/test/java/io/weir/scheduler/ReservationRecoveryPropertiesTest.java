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
 * The semantics of reservations after a change, as the package documentation states them: after
 * any change of reservations (removed, lowered, raised, added) or of competition (volumes stop or
 * start), every backlogged volume without a reservation is back within the SFQ bound at once,
 * widened only by its bounded lead: for volumes {@code i, j} of one tenant, both backlogged
 * without a reservation over an interval,
 * {@code W_j/w_j - W_i/w_i <= Lmax_j/w_j + lead_i}, where {@code lead_i = max(RESERVATION_LEAD_BYTES,
 * Lmax_i) / w_i} if {@code i} held a reservation before, else {@code Lmax_i / w_i}. With
 * {@code W_i = 0} this is the bounded time: {@code i} is served again before each sibling
 * {@code j} has received more than {@code lead_i * w_j + Lmax_j} bytes.
 *
 * <p>Checked in integers (multiplied by {@code w_i * w_j}) over every interval after the change,
 * with the counter quantisation of {@link FairnessPropertiesTest}. The clock runs at 100,000
 * dispatches per second and the reservations add up to at most 40,000 IOPS, so they are feasible.
 */
class ReservationRecoveryPropertiesTest {

    private static final int VOLUMES_MAX = 7;
    private static final int BEFORE = 4_000;
    private static final int AFTER = 4_000;
    private static final long TICK = 10_000L;

    /** Counter quantisation after cross-multiplying by {@code w_i * w_j} (see FairnessPropertiesTest). */
    private static long quantisation(long wi, long wj) {
        return (4 * wi * wj + SchedNode.COUNTER_SCALE - 1) / SchedNode.COUNTER_SCALE;
    }

    private static long size(SplittableRandom rnd) {
        return 512L << rnd.nextInt(10) | rnd.nextInt(512); // 512 B .. 256 KiB
    }

    private static SchedulerConfig config(int[] weights, int[] minIops) {
        SchedulerConfig.Builder b = SchedulerConfig.builder().tenant(TenantSpec.of("t")).tenant(TenantSpec.of("u"));
        for (int i = 0; i < weights.length; i++) {
            b.volume(VolumeSpec.of("v" + i, "t").withWeight(weights[i]).withMinIops(minIops[i]));
        }
        b.volume(VolumeSpec.of("u0", "u").withMinIops(minIops[weights.length]));
        return b.build();
    }

    @Property(tries = 60)
    void everyBackloggedVolumeIsBackWithinItsBoundAfterAChangeOfReservationsOrCompetition(
            @ForAll @Size(min = VOLUMES_MAX, max = VOLUMES_MAX) List<@IntRange(min = 1, max = 1_000) Integer> weightList,
            @ForAll @Size(min = VOLUMES_MAX + 1, max = VOLUMES_MAX + 1) List<@IntRange(min = 0, max = 5_000) Integer> before,
            @ForAll @Size(min = VOLUMES_MAX + 1, max = VOLUMES_MAX + 1) List<@IntRange(min = 0, max = 5_000) Integer> after,
            @ForAll @IntRange(min = 2, max = VOLUMES_MAX) int volumes,
            @ForAll long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int n = volumes;
        int[] w = new int[n];
        int[] r1 = new int[n + 1];
        int[] r2 = new int[n + 1];
        boolean[] busyBefore = new boolean[n + 1];
        boolean[] busyAfter = new boolean[n + 1];
        for (int i = 0; i <= n; i++) {
            if (i < n) {
                w[i] = weightList.get(i);
            }
            // about half of the volumes hold a reservation before, and about half after
            r1[i] = before.get(i) % 2 == 0 ? 0 : 100 + before.get(i);
            r2[i] = after.get(i) % 2 == 0 ? 0 : 100 + after.get(i);
            busyBefore[i] = i < 2 || rnd.nextInt(4) != 0;
            busyAfter[i] = i < 2 || rnd.nextInt(3) != 0; // competition changes: some stop, some start
        }
        r2[0] = 0; // at least two volumes are weight-only afterwards
        r2[1] = 0;
        String[] ids = new String[n + 1];
        for (int i = 0; i < n; i++) {
            ids[i] = "v" + i;
        }
        ids[n] = "u0";

        HierarchicalScheduler<Integer> s = new HierarchicalScheduler<>(config(w, r1), 0);
        long now = 0;
        long[] lmax = new long[n + 1];
        for (int i = 0; i <= n; i++) {
            if (busyBefore[i]) {
                for (int k = 0; k < 2; k++) {
                    s.enqueue(ids[i], IoKind.READ, size(rnd), i, now);
                }
            }
        }
        List<long[]> dispatches = new ArrayList<>(); // {volume, cost} after the change
        boolean[] busy = busyBefore;
        for (int step = 0; step < BEFORE + AFTER; step++) {
            if (step == BEFORE) {
                s.reconfigure(config(w, r2), now);
                busy = busyAfter;
                for (int i = 0; i <= n; i++) {
                    if (busyAfter[i] && s.queueDepth(ids[i]) == 0) {
                        s.enqueue(ids[i], IoKind.READ, size(rnd), i, now);
                    }
                }
                checkLeads(s, now, w, r1, lmax, ids);
            }
            now += TICK;
            Ticket<Integer> t = s.next(now);
            assertThat(t).isNotNull();
            int v = t.request();
            long cost = Math.max(t.bytes(), CostModel.DEFAULT_MIN_CHARGE_BYTES);
            lmax[v] = Math.max(lmax[v], cost);
            if (step >= BEFORE) {
                dispatches.add(new long[] {v, cost});
            }
            s.complete(t, 1, now);
            if (busy[v]) {
                s.enqueue(ids[v], IoKind.READ, size(rnd), v, now);
            }
            if (step % 500 == 0) {
                checkLeads(s, now, w, step < BEFORE ? r1 : r2, lmax, ids);
            }
        }

        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (i != j && busyAfter[i] && busyAfter[j] && r2[i] == 0 && r2[j] == 0) {
                    checkRecovery(dispatches, i, j, w[i], w[j], leadBytes(r1[i] > 0, lmax[i]), lmax[j]);
                }
            }
        }
    }

    /** The largest lead of volume {@code i}, in bytes per unit of weight times {@code w_i}. */
    private static long leadBytes(boolean wasReserved, long lmax) {
        return wasReserved ? Math.max(HierarchicalScheduler.RESERVATION_LEAD_BYTES, lmax) : lmax;
    }

    /** Every volume's lead over its level, as the snapshot reports it, is within its bound. */
    private static void checkLeads(HierarchicalScheduler<Integer> s, long now, int[] w, int[] reservations, long[] lmax,
            String[] ids) {
        SchedulerSnapshot snap = s.snapshot(now);
        for (int i = 0; i < w.length; i++) {
            long bound = (leadBytes(true, Math.max(lmax[i], CostModel.DEFAULT_MIN_CHARGE_BYTES)) * SchedNode.COUNTER_SCALE
                    + w[i] - 1) / w[i] + 1;
            assertThat(snap.volumeLead(ids[i])).as("lead of %s (weight %d, reservation %d)", ids[i], w[i],
                    reservations[i]).isLessThanOrEqualTo(bound);
        }
        assertThat(snap.levels().tenantLevel().virtualTime()).isNotNegative();
    }

    /**
     * Over every interval after the change: {@code W_j*w_i - W_i*w_j <= Lmax_j*w_i + lead_i*w_j}
     * (plus quantisation), counting only the dispatches of {@code i} and {@code j}.
     */
    private static void checkRecovery(List<long[]> d, int i, int j, long wi, long wj, long leadI, long lmaxJ) {
        long wI = 0, wJ = 0;
        long minPrefix = 0;
        long worst = 0;
        for (long[] x : d) {
            if (x[0] == i) {
                wI += x[1];
            } else if (x[0] == j) {
                wJ += x[1];
            } else {
                continue;
            }
            long diff = wJ * wi - wI * wj;
            worst = Math.max(worst, diff - minPrefix);
            minPrefix = Math.min(minPrefix, diff);
        }
        long bound = lmaxJ * wi + leadI * wj + quantisation(wi, wj);
        assertThat(worst)
                .as("v%d behind v%d (w=%d, %d; lead_i=%d B, Lmax_j=%d B): max over intervals of W_j*w_i - W_i*w_j",
                        i, j, wi, wj, leadI, lmaxJ)
                .isLessThanOrEqualTo(bound);
    }
}
