package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.scheduler.SchedulerConfig.TaskSpec;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What a data node meets after running for months, compressed into a test run: reconfigurations
 * after long busy periods, reservations held for hours, and counters that would run past the
 * range of a {@code long}. The clock is driven by hand (1 dispatch = {@link #TICK} of time) and
 * large requests stand in for long periods, so these run in seconds.
 */
class LongRunningSchedulerTest {

    /** One dispatch per 100 µs: a node serving 10,000 IOPS. */
    private static final long TICK = 100_000L;

    private static final long SECOND = 1_000_000_000L;

    private static final long KIB4 = 4096;

    private static final long MAX = HierarchicalScheduler.MAX_REQUEST_BYTES;

    /**
     * Keeps a set of volumes backlogged at queue depth 2 with requests of a fixed size, advancing
     * the clock one {@link #TICK} per dispatch; counts dispatches per volume.
     */
    private static final class Loop {
        final HierarchicalScheduler<String> s;
        final Map<String, Long> sizes = new HashMap<>();
        final Set<String> active = new HashSet<>();
        long now;

        Loop(SchedulerConfig c) {
            s = new HierarchicalScheduler<>(c, 0);
        }

        Loop backlog(String volume, long bytes) {
            sizes.put(volume, bytes);
            active.add(volume);
            for (int i = 0; i < 2; i++) {
                s.enqueue(volume, IoKind.READ, bytes, volume, now);
            }
            return this;
        }

        /** Stops refilling a volume; what it has queued still drains. */
        void stop(String volume) {
            active.remove(volume);
        }

        Map<String, Integer> run(int dispatches) {
            Map<String, Integer> served = new HashMap<>();
            for (int i = 0; i < dispatches; i++) {
                now += TICK;
                Ticket<String> t = s.next(now);
                assertThat(t).as("dispatch %d", i).isNotNull();
                String v = t.request();
                served.merge(v, 1, Integer::sum);
                s.complete(t, 1000, now);
                if (active.contains(v)) {
                    s.enqueue(v, IoKind.READ, sizes.get(v), v, now);
                }
            }
            return served;
        }
    }

    private static int served(Map<String, Integer> m, String v) {
        return m.getOrDefault(v, 0);
    }

    // ------------------------------------------------------------------- a volume changes tenant

    @Test
    void volumeMovedToAnotherTenantGetsItsShareAtOnce() {
        SchedulerConfig before = SchedulerConfig.builder()
                .tenant(TenantSpec.of("t1"))
                .volume(VolumeSpec.of("x", "t1"))
                .volume(VolumeSpec.of("v", "t1"))
                .build();
        Loop loop = new Loop(before).backlog("x", KIB4).backlog("v", KIB4);
        loop.run(600_000); // 60 s busy in t1

        SchedulerConfig after = SchedulerConfig.builder()
                .tenant(TenantSpec.of("t1"))
                .tenant(TenantSpec.of("t2"))
                .volume(VolumeSpec.of("x", "t1"))
                .volume(VolumeSpec.of("v", "t2"))
                .volume(VolumeSpec.of("y", "t2"))
                .build();
        loop.s.reconfigure(after, loop.now);
        loop.backlog("y", KIB4);
        Map<String, Integer> next = loop.run(10_000); // the next second

        // t2 gets half the node, and v half of t2: 2,500 each, within the SFQ bound of one request
        assertThat(served(next, "v")).isBetween(2_498, 2_502);
        assertThat(served(next, "y")).isBetween(2_498, 2_502);
        assertThat(loop.s.snapshot(loop.now).volumeLead("v")).isBetween(0L, KIB4 * SchedNode.COUNTER_SCALE / 100);
    }

    // ------------------------------------------------------------------- reservations over time

    private static SchedulerConfig elevenVolumes(long minIopsOfR) {
        SchedulerConfig.Builder b = SchedulerConfig.builder().tenant(TenantSpec.of("t"));
        b.volume(VolumeSpec.of("r", "t").withMinIops(minIopsOfR));
        for (int i = 0; i < 10; i++) {
            b.volume(VolumeSpec.of("o" + i, "t"));
        }
        return b.build();
    }

    private static Loop elevenBacklogged(long minIopsOfR) {
        Loop loop = new Loop(elevenVolumes(minIopsOfR)).backlog("r", KIB4);
        for (int i = 0; i < 10; i++) {
            loop.backlog("o" + i, KIB4);
        }
        return loop;
    }

    @Test
    void volumeWhoseReservationIsRemovedGetsItsFairShareWithinTheLeadBound() {
        Loop loop = elevenBacklogged(2_000);
        Map<String, Integer> reserved = loop.run(600_000); // 60 s at 10,000 IOPS
        assertThat(served(reserved, "r")).isBetween(119_900, 120_100); // its 2,000 IOPS, not 909

        loop.s.reconfigure(elevenVolumes(0), loop.now);
        Map<String, Integer> firstSecond = loop.run(10_000);
        Map<String, Integer> secondSecond = loop.run(10_000);

        // The lead is at most RESERVATION_LEAD_BYTES / weight: the other ten catch up after 10 x 256
        // requests, a quarter of a second; then r gets its 909 IOPS again.
        assertThat(served(firstSecond, "r")).isGreaterThan(600);
        assertThat(served(secondSecond, "r")).isBetween(907, 911);
    }

    @Test
    void reservedVolumeGetsItsLargerFairShareSoonAfterCompetitorsStop() {
        Loop loop = elevenBacklogged(2_000);
        loop.run(600_000);
        for (int i = 2; i < 10; i++) {
            loop.stop("o" + i);
        }
        Map<String, Integer> firstSecond = loop.run(10_000);
        Map<String, Integer> secondSecond = loop.run(10_000);

        // max(reservation, fair share) = max(2,000, 3,333) IOPS
        assertThat(served(firstSecond, "r")).isGreaterThan(2_900);
        assertThat(served(secondSecond, "r")).isBetween(3_331, 3_336);
    }

    @Test
    void reservedVolumeWithTheLargestRequestsKeepsToItsReservationHoweverLongItIsServed() {
        // r (weight 1) is reserved half of the node's 10,000 IOPS with the largest requests, so
        // each reservation dispatch charges it 2^48 units: unbounded, its lead over the level would
        // pass 2^63 after 2^15 of them (6.5 s here, 19 hours at 1 MiB), and r would then look
        // like the volume furthest behind and win the weight phase too.
        SchedulerConfig c = SchedulerConfig.builder()
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("r", "t").withWeight(1).withMinIops(5_000))
                .volume(VolumeSpec.of("x", "t").withWeight(1))
                .build();
        Loop loop = new Loop(c).backlog("r", MAX).backlog("x", KIB4);
        loop.run(70_000);
        Map<String, Integer> late = loop.run(10_000);

        // r gets its reservation (its fair share by bytes is far below it), x the rest
        assertThat(served(late, "r")).isBetween(4_990, 5_010);
        assertThat(served(late, "x")).isBetween(4_990, 5_010);
        assertThat(loop.s.snapshot(loop.now).volumeLead("r")).isBetween(0L, MAX * SchedNode.COUNTER_SCALE);
    }

    // ------------------------------------------------------------------------- counter range

    @Test
    void idleVolumeAndTenantRejoinAtTheirShareAfterTheirSiblingsRanPastTheRangeOfALong() {
        SchedulerConfig c = SchedulerConfig.builder()
                .tenant(TenantSpec.of("p").withWeight(1))
                .tenant(TenantSpec.of("q").withWeight(1))
                .volume(VolumeSpec.of("a", "p").withWeight(1))
                .volume(VolumeSpec.of("b", "p").withWeight(1))
                .volume(VolumeSpec.of("z1", "p").withWeight(1))
                .volume(VolumeSpec.of("z2", "q").withWeight(1))
                .build();
        Loop loop = new Loop(c).backlog("z1", KIB4).backlog("z2", KIB4);
        loop.run(4);
        loop.stop("z1");
        loop.stop("z2");
        loop.backlog("a", MAX).backlog("b", MAX);
        // Each dispatch adds 2^48 units to a, b and p: 70,000 of them are 1.1 x 2^64 in all.
        loop.run(70_000);

        loop.backlog("z1", MAX).backlog("z2", MAX);
        Map<String, Integer> next = loop.run(3_000);
        // q (only z2) gets half; p's half is shared by a, b and z1
        assertThat(served(next, "z2")).isBetween(1_498, 1_502);
        assertThat(served(next, "z1")).isBetween(498, 502);
        assertThat(loop.s.snapshot(loop.now).levels().tenantLevel().virtualTime())
                .isLessThan(HierarchicalScheduler.REBASE_THRESHOLD + MAX * SchedNode.COUNTER_SCALE);
    }

    @Test
    void idleBackgroundTaskRejoinsAtItsShareAfterTheForegroundRanPastTheRangeOfALong() {
        SchedulerConfig c = SchedulerConfig.builder()
                .task(TaskSpec.of(SchedulerConfig.FOREGROUND, 1))
                .task(TaskSpec.of("scrub", 1))
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("v", "t"))
                .build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        s.enqueueBackground("scrub", "scrub", 0);
        s.complete(s.next(0), 1, 0);
        long cpu = 1L << 44; // 2^54 units per completion at share 1
        for (int i = 0; i < 600; i++) { // 600 x 2^54 > 2^63
            s.enqueue("v", IoKind.READ, KIB4, "v", 0);
            s.complete(s.next(0), cpu, 0);
        }
        for (int i = 0; i < 200; i++) { // both backlogged from here on
            s.enqueue("v", IoKind.READ, KIB4, "v", 0);
            s.enqueueBackground("scrub", "scrub", 0);
        }
        Map<String, Integer> served = new HashMap<>();
        for (int i = 0; i < 200; i++) {
            Ticket<String> t = s.next(0);
            served.merge(t.request(), 1, Integer::sum);
            s.complete(t, cpu, 0);
        }
        // equal shares, equal CPU per request: they alternate
        assertThat(served.getOrDefault("scrub", 0)).isBetween(99, 101);
    }
}
