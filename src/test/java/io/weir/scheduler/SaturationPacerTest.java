package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.ArrayDeque;
import org.junit.jupiter.api.Test;

/**
 * The saturation pacer in virtual time: a node that serves one 4 KiB request per 50 us (20,000
 * IOPS) and clients that keep their requests outstanding, one of which gives its completed
 * requests back only every 2 ms (a client short of CPU, as on a loaded node): its requests then
 * wait in the client, where the scheduler cannot see them, and a work-conserving scheduler gives
 * its share to the other volume.
 */
class SaturationPacerTest {

    private static final long US = 1_000L;

    private static SchedulerConfig config(boolean two) {
        SchedulerConfig.Builder b = SchedulerConfig.builder().tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("heavy", "t").withWeight(300));
        if (two) {
            b.volume(VolumeSpec.of("light", "t").withWeight(100));
        }
        return b.build();
    }

    /** Result of a run: requests served per volume over the last half, and the pace at the end. */
    private record Run(long heavy, long light, double pace, boolean everPaced) {
        double ratio() {
            return (double) heavy / light;
        }
    }

    /**
     * Runs {@code seconds} of virtual time. The heavy volume's client has 16 requests and returns
     * completed ones every {@code stallMicros} (0: at once); the light volume's client (if any) has
     * 16 and returns them at once.
     */
    private static Run run(boolean pacing, boolean two, long stallMicros, double seconds) {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(config(two), 0);
        s.pacing(pacing, 0);
        ArrayDeque<String> heavyBack = new ArrayDeque<>();
        for (int i = 0; i < 16; i++) {
            s.enqueue("heavy", IoKind.READ, 4096, "heavy", 0);
            if (two) {
                s.enqueue("light", IoKind.READ, 4096, "light", 0);
            }
        }
        long end = (long) (seconds * 1e9);
        long heavy = 0;
        long light = 0;
        boolean everPaced = false;
        for (long now = 0; now < end; now += 50 * US) {
            if (stallMicros > 0 && now % (stallMicros * US) == 0) {
                while (!heavyBack.isEmpty()) {
                    s.enqueue("heavy", IoKind.READ, 4096, heavyBack.poll(), now);
                }
            }
            Ticket<String> t = s.next(now);
            everPaced |= s.paceRate() != Double.POSITIVE_INFINITY;
            if (t == null) {
                continue;
            }
            String v = t.request();
            s.complete(t, 40 * US, now);
            if (now >= end / 2) {
                if (v.equals("heavy")) {
                    heavy++;
                } else {
                    light++;
                }
            }
            if (v.equals("heavy") && stallMicros > 0) {
                heavyBack.add(v);
            } else {
                s.enqueue(v, IoKind.READ, 4096, v, now);
            }
        }
        return new Run(heavy, light, s.paceRate(), everPaced);
    }

    @Test
    void offByDefaultTheScheduler_isWorkConservingAndTheStalledClientLosesItsShare() {
        Run r = run(false, true, 2000, 4);
        assertThat(r.everPaced()).isFalse();
        assertThat(r.heavy() + r.light()).as("every 50 us slot used").isEqualTo(40_000);
        assertThat(r.ratio()).as("heavy:light without pacing").isLessThan(1.5);
    }

    /**
     * The heavy client can return at most 16 requests per 2 ms (8,000 IOPS), above its weighted
     * share only if the node serves at most 10,667 IOPS. Pacing gets it at least 90% of its
     * weighted share (heavy:light at least 2.7, against 0.67 unpaced) and keeps the node at or
     * above the floor of half the highest rate served recently. Above 3 is the floor's doing:
     * paced at 10,000 IOPS the heavy client's demand exceeds its share, and the credit of a
     * recently backlogged volume lets it take it.
     */
    @Test
    void pacingGivesTheStalledVolumeItsWeightedShareAgain() {
        Run off = run(false, true, 2000, 4);
        Run on = run(true, true, 2000, 4);
        assertThat(on.pace()).as("pace at the end").isFinite();
        assertThat(on.ratio()).as("heavy:light with pacing (without: %.2f)", off.ratio()).isGreaterThanOrEqualTo(2.7);
        assertThat(on.heavy() + on.light()).as("served in the last 2 s (capacity 40,000)").isGreaterThanOrEqualTo(19_000);
    }

    @Test
    void twoVolumesWhoseClientsKeepThemBackloggedAreNeverPaced() {
        Run r = run(true, true, 0, 4);
        assertThat(r.everPaced()).isFalse();
        assertThat(r.heavy() + r.light()).isEqualTo(40_000);
        assertThat(r.ratio()).isCloseTo(3.0, org.assertj.core.api.Assertions.within(0.01));
    }

    @Test
    void aLoneVolumeIsNeverPacedHoweverItsClientStalls() {
        Run r = run(true, false, 2000, 4);
        assertThat(r.everPaced()).isFalse();
    }
}
