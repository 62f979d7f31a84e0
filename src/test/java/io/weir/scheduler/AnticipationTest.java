package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.weir.scheduler.SchedulerConfig.TaskSpec;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import org.junit.jupiter.api.Test;

/**
 * Anticipation ("Anticipation" in the package documentation): the weight phase waits a moment for
 * a deep volume or tenant whose queue ran dry, so that weights hold while its requests are on
 * their way, and never waits for a QD1 client or past the wait. Time is virtual throughout.
 */
class AnticipationTest {

    private static final long US = 1_000L;
    private static final long WAIT = HierarchicalScheduler.ANTICIPATION_NANOS;

    private static HierarchicalScheduler<String> scheduler(SchedulerConfig config, boolean anticipation) {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(config, 0);
        s.anticipation(anticipation);
        return s;
    }

    private static SchedulerConfig heavyAndLight() {
        return SchedulerConfig.builder().tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("heavy", "t").withWeight(300))
                .volume(VolumeSpec.of("light", "t").withWeight(100)).build();
    }

    /** Light's requests: 2 MiB, so that one puts light further ahead than the slack (1 MiB). */
    private static final long BIG = 2L << 20;

    /**
     * Light has run one 2 MiB request; heavy (two requests at once: deep) is then served twice and
     * its queue runs dry with its counter more than the slack below light's. Returns the
     * scheduler at that point.
     */
    private static HierarchicalScheduler<String> heavyRanDry(boolean anticipation) {
        return heavyRanDry(heavyAndLight(), anticipation, 0);
    }

    /**
     * {@link #heavyRanDry(boolean)} with volumes "heavy" and "light" placed as {@code config}
     * says, heavy's second request dispatched at {@code secondAt}.
     */
    private static HierarchicalScheduler<String> heavyRanDry(SchedulerConfig config, boolean anticipation,
            long secondAt) {
        HierarchicalScheduler<String> s = scheduler(config, anticipation);
        s.enqueue("light", IoKind.READ, BIG, "light", 0);
        s.enqueue("light", IoKind.READ, BIG, "light", 0);
        s.complete(s.next(0), 0, 0);
        s.enqueue("heavy", IoKind.READ, 4096, "heavy", 0);
        s.enqueue("heavy", IoKind.READ, 4096, "heavy", 0);
        assertThat(s.next(0).request()).isEqualTo("heavy");
        assertThat(s.next(secondAt).request()).isEqualTo("heavy");
        return s;
    }

    @Test
    void aSiblingFurtherAheadWaitsForADeepVolumeWhoseQueueRanDryAndTheVolumeKeepsItsPlace() {
        HierarchicalScheduler<String> s = heavyRanDry(true);
        assertThat(s.next(0)).as("light, further ahead, while heavy is awaited").isNull();
        assertThat(s.nextEligibleTime()).as("the wait ends").isEqualTo(WAIT);
        s.enqueue("heavy", IoKind.READ, 4096, "heavy", 500 * US);
        assertThat(s.next(500 * US).request()).as("heavy, back within its wait, goes first").isEqualTo("heavy");
    }

    @Test
    void aDeepVolumeIsAwaitedNoLongerThanTheWaitAndThenTheSiblingIsServed() {
        HierarchicalScheduler<String> s = heavyRanDry(true);
        assertThat(s.next(WAIT - 1)).isNull();
        assertThat(s.next(WAIT).request()).as("work conservation after the wait").isEqualTo("light");
    }

    /**
     * Back after its wait but within its credit (20 ms), heavy keeps its place: it then runs
     * until it has caught up with light, which ran meanwhile. Back after the credit, it rejoins
     * at the level's virtual time by the rejoin rule, and catches up with less.
     */
    @Test
    void aDeepVolumeBackWithinItsCreditKeepsItsPlaceAndAfterItRejoinsByTheRule() {
        int within = heavyServedBeforeLight(10_000_000L);
        int after = heavyServedBeforeLight(HierarchicalScheduler.ANTICIPATION_CREDIT_NANOS + 1);
        // heavy's counter is about 0; light's is 4 MiB / 100 after two requests and V, light's
        // last start, 2 MiB / 100: 4 KiB requests at weight 300 catch up 3072 and 1536 of them
        assertThat(within).isBetween(3000, 3080); // give or take the requests at equal counters
        assertThat(after).isBetween(1500, 1540);
    }

    /** Heavy ran dry, light ran after the wait; heavy returns at {@code at} with a backlog. */
    private static int heavyServedBeforeLight(long at) {
        HierarchicalScheduler<String> s = heavyRanDry(true);
        s.complete(s.next(WAIT), 0, WAIT); // light's second request
        s.enqueue("light", IoKind.READ, BIG, "light", at);
        s.enqueue("heavy", IoKind.READ, 4096, "heavy", at);
        s.enqueue("heavy", IoKind.READ, 4096, "heavy", at);
        int served = 0;
        for (Ticket<String> t; (t = s.next(at)).request().equals("heavy"); served++) {
            s.complete(t, 0, at);
            s.enqueue("heavy", IoKind.READ, 4096, "heavy", at); // kept backlogged
        }
        return served;
    }

    @Test
    void aTenantWhoseOnlyDeepVolumeRanDryIsAwaitedAtTheTenantLevel() {
        HierarchicalScheduler<String> s = heavyRanDry(SchedulerConfig.builder()
                .tenant(TenantSpec.of("a").withWeight(300)).tenant(TenantSpec.of("b").withWeight(100))
                .volume(VolumeSpec.of("heavy", "a")).volume(VolumeSpec.of("light", "b")).build(), true, 0);
        assertThat(s.next(0)).as("tenant b, further ahead, while tenant a is awaited").isNull();
        s.enqueue("heavy", IoKind.READ, 4096, "heavy", 10 * US);
        assertThat(s.next(10 * US).request()).isEqualTo("heavy");
        assertThat(s.next(WAIT + 10 * US).request()).as("after the wait").isEqualTo("light");
    }

    /**
     * The root does the same for the foreground task: scrub, always backlogged and ahead in CPU
     * per share, waits while the foreground's deep volume is on its way back.
     */
    @Test
    void aBackgroundTaskFurtherAheadWaitsForTheDeepForegroundThatRanDry() {
        HierarchicalScheduler<String> s = scheduler(SchedulerConfig.builder()
                .task(TaskSpec.of(SchedulerConfig.FOREGROUND, 75)).task(TaskSpec.of("scrub", 25))
                .tenant(TenantSpec.of("t")).volume(VolumeSpec.of("v", "t")).build(), true);
        for (int i = 0; i < 4; i++) {
            s.enqueueBackground("scrub", "scrub", 0);
        }
        s.complete(s.next(0), 1_000_000, 0); // scrub ran 1 ms of CPU
        s.enqueue("v", IoKind.READ, 4096, "v", 0);
        s.enqueue("v", IoKind.READ, 4096, "v", 0);
        Ticket<String> a = s.next(0);
        Ticket<String> b = s.next(0);
        assertThat(a.request()).isEqualTo("v");
        assertThat(b.request()).isEqualTo("v");
        s.complete(a, 10_000, 0);
        s.complete(b, 10_000, 0);
        assertThat(s.next(0)).as("scrub, ahead, while the foreground is awaited").isNull();
        assertThat(s.nextEligibleTime()).isEqualTo(WAIT);
        s.enqueue("v", IoKind.READ, 4096, "v", 100 * US);
        assertThat(s.next(100 * US).request()).isEqualTo("v");
        assertThat(s.next(100 * US)).as("dry again: awaited again").isNull();
        assertThat(s.next(100 * US + WAIT).request()).as("after the wait").isEqualTo("scrub");
    }

    /**
     * A foreground whose deep volume is throttled by its own limit has not run dry: its requests
     * wait for the limit, not on the way. The root does not hold scrub for it, which would leave
     * the worker idle through every throttle period (a limit of 1,000 IOPS or more: all of them).
     */
    @Test
    void aBackgroundTaskIsNotHeldForAForegroundThrottledByItsLimit() {
        HierarchicalScheduler<String> s = scheduler(SchedulerConfig.builder()
                .task(TaskSpec.of(SchedulerConfig.FOREGROUND, 75)).task(TaskSpec.of("scrub", 25))
                .tenant(TenantSpec.of("t")).volume(VolumeSpec.of("v", "t").withMaxIops(2000L)).build(), true);
        for (int i = 0; i < 4; i++) {
            s.enqueueBackground("scrub", "scrub", 0);
        }
        s.complete(s.next(0), 1_000_000, 0); // scrub ran 1 ms of CPU: ahead of the foreground
        long now = 0;
        int foreground = 0;
        int scrub = 0;
        for (int i = 0; i < 8; i++) {
            s.enqueue("v", IoKind.READ, 4096, "v", now);
        }
        for (int round = 0; round < 200 && scrub == 0; round++) {
            Ticket<String> t = s.next(now);
            if (t == null) {
                long wake = s.nextEligibleTime();
                assertThat(wake).as("something is eligible later").isNotEqualTo(HierarchicalScheduler.NO_DEADLINE);
                now = Math.max(now + 1, wake);
                continue;
            }
            String request = t.request();
            s.complete(t, 10_000, now);
            if (request.equals("scrub")) {
                scrub++;
            } else {
                foreground++;
                s.enqueue("v", IoKind.READ, 4096, "v", now); // backlogged
            }
        }
        assertThat(scrub).as("scrub ran while v waited for its limit (foreground ran " + foreground + ")").isPositive();
        assertThat(now).as("by the first throttle period's end").isLessThan(2 * WAIT);
    }

    @Test
    void withAnticipationOffTheSchedulerIsWorkConserving() {
        HierarchicalScheduler<String> s = heavyRanDry(false);
        assertThat(s.next(0).request()).isEqualTo("light");
    }

    @Test
    void nobodyWaitsForAClientThatNeverHasTwoRequestsAtOnce() {
        assertNobodyWaitsForAQd1ClientAt(0);
    }

    /**
     * {@code System.nanoTime} has an arbitrary origin and may read negative: a volume that was
     * never deep is not taken for one because the clock reads below zero.
     */
    @Test
    void nobodyWaitsForAClientThatNeverHasTwoRequestsAtOnceWhenTheClockReadsNegative() {
        assertNobodyWaitsForAQd1ClientAt(-(1L << 60));
    }

    private static void assertNobodyWaitsForAQd1ClientAt(long now) {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(heavyAndLight(), now);
        s.anticipation(true);
        s.enqueue("light", IoKind.READ, BIG, "light", now);
        s.enqueue("light", IoKind.READ, BIG, "light", now);
        s.complete(s.next(now), 0, now);
        for (int i = 0; i < 3; i++) { // a QD1 client: each request after the last one completed
            s.enqueue("heavy", IoKind.READ, 4096, "heavy", now);
            Ticket<String> t = s.next(now);
            assertThat(t.request()).isEqualTo("heavy");
            s.complete(t, 0, now);
        }
        assertThat(s.next(now)).as("light is not held for a QD1 client").isNotNull()
                .extracting(Ticket::request).isEqualTo("light");
    }

    @Test
    void aVolumeWithALimitOfItsOwnIsNotAwaited() {
        // 1 TiB/s lets heavy's second request go 4 ns after its first: at 1 us
        HierarchicalScheduler<String> s = heavyRanDry(SchedulerConfig.builder().tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("heavy", "t").withWeight(300).withMaxBytesPerSec(1L << 40))
                .volume(VolumeSpec.of("light", "t").withWeight(100)).build(), true, US);
        assertThat(s.next(US).request()).as("light is not held for a limited volume").isEqualTo("light");
    }
}
