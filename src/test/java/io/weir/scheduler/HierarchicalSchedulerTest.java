package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.weir.scheduler.SchedulerConfig.Curve;
import io.weir.scheduler.SchedulerConfig.DynamicShare;
import io.weir.scheduler.SchedulerConfig.TaskSpec;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

class HierarchicalSchedulerTest {

    private static final long MS = 1_000_000L;

    private static SchedulerConfig twoVolumes(int w1, int w2) {
        return SchedulerConfig.builder()
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("a", "t").withWeight(w1))
                .volume(VolumeSpec.of("b", "t").withWeight(w2))
                .build();
    }

    /** Runs {@code n} dispatches with instant completion, keeping every volume backlogged. */
    private static Map<String, Long> runBacklogged(HierarchicalScheduler<String> s, String[] vols, long bytes, int n) {
        Map<String, Long> served = new HashMap<>();
        for (String v : vols) {
            for (int i = 0; i < 4; i++) {
                s.enqueue(v, IoKind.READ, bytes, v, 0);
            }
        }
        for (int i = 0; i < n; i++) {
            Ticket<String> t = s.next(0);
            String v = t.volumeId();
            served.merge(v, t.bytes(), Long::sum);
            s.complete(t, 1000, 0);
            s.enqueue(v, IoKind.READ, bytes, v, 0);
        }
        return served;
    }

    /**
     * A tenant throttled while its reserved volume's queue was drained by the reservation phase
     * (which tenant limits do not hold) stays on the timer heap with nothing queued. Once its
     * time has passed, an idle scheduler must say that nothing is due: a past deadline had the
     * executor's workers poll in a loop, at full CPU, on an idle node.
     */
    @Test
    void anIdleSchedulerHasNoDeadlineOnceATenantsThrottleHasPassed() {
        long second = 1_000_000_000L;
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(SchedulerConfig.builder()
                .tenant(TenantSpec.of("t").withMaxBytesPerSec(4096)).volume(VolumeSpec.of("v", "t").withMinIops(10))
                .build(), 0);
        s.enqueue("v", IoKind.WRITE, 4096, "a", 0);
        s.enqueue("v", IoKind.WRITE, 4096, "b", 0);
        long now = 0;
        for (int served = 0; served < 2; ) {
            Ticket<String> t = s.next(now);
            if (t == null) {
                now = s.nextEligibleTime();
                continue;
            }
            s.complete(t, 1000, now);
            served++;
        }
        assertThat(s.next(now + 3 * second / 2)).isNull();
        assertThat(s.nextEligibleTime()).as("nothing queued: nothing due").isEqualTo(HierarchicalScheduler.NO_DEADLINE);
    }

    /**
     * A reservation is served past its tenant's bytes limit (a reservation counts operations, and
     * operations of 64 KiB may need more bytes than the tenant may move), and its service is
     * charged to that limit; the charge built a debt without bound. A tenant of 1 MB/s whose volume
     * reserved 100 IOPS of 64 KiB owed 55 minutes after 10 minutes, and every volume of the tenant
     * then got nothing for those 55 minutes. The debt stays within one request now.
     */
    @Test
    void reservationServiceBeyondATenantsBytesLimitLeavesTheTenantNoLastingDebt() {
        long second = 1_000_000_000L;
        int io = 64 * 1024;
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(SchedulerConfig.builder()
                .tenant(TenantSpec.of("t").withMaxBytesPerSec(1_000_000))
                .volume(VolumeSpec.of("reserved", "t").withMinIops(100)).volume(VolumeSpec.of("other", "t"))
                .build(), 0);
        long now = 0;
        int served = 0;
        for (; now < 600 * second; now += second / 100) { // 10 minutes, a request of the reserved volume every 10 ms
            s.enqueue("reserved", IoKind.READ, io, "r", now);
            Ticket<String> t = s.next(now);
            if (t != null) {
                s.complete(t, 1000, now);
                served++;
            }
        }
        assertThat(served).as("the reservation is served (100 IOPS of 64 KiB)").isGreaterThan(59_000);
        while (s.next(now) != null) { // what is still queued; then the reserved volume stops
            now += second / 100;
        }
        s.enqueue("other", IoKind.READ, 4096, "o", now);
        Ticket<String> t = s.next(now);
        long waited = 0;
        if (t == null) {
            waited = s.nextEligibleTime() - now;
        }
        assertThat(waited).as("the tenant's other volume waits at most one request's time at the limit")
                .isLessThanOrEqualTo(second / 10);
    }

    @Test
    void backloggedVolumesAreServedInProportionToWeight() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(twoVolumes(100, 300), 0);
        Map<String, Long> served = runBacklogged(s, new String[] {"a", "b"}, 4096, 4000);
        assertThat(served.get("b")).isEqualTo(3 * served.get("a"));
    }

    @Test
    void smallRequestsAreChargedTheMinimumChargeBytes() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(twoVolumes(100, 100), 0);
        // a sends 512 B requests, b sends 4 KiB: with minChargeBytes 4096 they get equal op counts.
        Map<String, Integer> ops = new HashMap<>();
        for (int i = 0; i < 4; i++) {
            s.enqueue("a", IoKind.READ, 512, "a", 0);
            s.enqueue("b", IoKind.READ, 4096, "b", 0);
        }
        for (int i = 0; i < 1000; i++) {
            Ticket<String> t = s.next(0);
            ops.merge(t.volumeId(), 1, Integer::sum);
            String v = t.volumeId();
            long b = t.bytes();
            s.complete(t, 0, 0);
            s.enqueue(v, IoKind.READ, b, v, 0);
        }
        assertThat(ops.get("a")).isEqualTo(ops.get("b"));
    }

    @Test
    void underTheLinearModelEqualWeightsShareCostSoA64KiBReaderGetsFewerOpsButMoreBytes() {
        CostModel linear = CostModel.linear(30 << 10, 154 << 10, CostModel.DEFAULT_MIN_CHARGE_BYTES);
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(SchedulerConfig.builder()
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("small", "t").withCostModel(linear))
                .volume(VolumeSpec.of("large", "t").withCostModel(linear))
                .build(), 0);
        Map<String, Long> bytes = new HashMap<>();
        Map<String, Long> cost = new HashMap<>();
        for (int i = 0; i < 4; i++) {
            s.enqueue("small", IoKind.READ, 4096, "small", 0);
            s.enqueue("large", IoKind.READ, 65536, "large", 0);
        }
        for (int i = 0; i < 20_000; i++) {
            Ticket<String> t = s.next(0);
            String v = t.volumeId();
            long b = t.bytes();
            bytes.merge(v, b, Long::sum);
            cost.merge(v, linear.cost(IoKind.READ, b), Long::sum);
            s.complete(t, 0, 0);
            s.enqueue(v, IoKind.READ, b, v, 0);
        }
        assertThat((double) cost.get("large") / cost.get("small")).as("the currency: 1:1").isCloseTo(1.0, within(0.01));
        assertThat((double) bytes.get("large") / bytes.get("small"))
                .as("bytes: 16 x (30 + 4) / (30 + 64) KiB").isCloseTo(16.0 * 34 / 94, within(0.1));
    }

    /**
     * A background job counts as one op, with its wait and service time, whatever request its
     * pooled record served before: the records are reused last in, first out, and one last used by
     * a later piece of a large request must not make a scrub step look like a continuation.
     */
    @Test
    void aBackgroundJobAfterAPieceOfALargeRequestCountsAsAnOp() {
        SchedulerConfig c = SchedulerConfig.builder().task("foreground", 3).task("scrub", 1)
                .tenant(TenantSpec.of("t")).volume(VolumeSpec.of("a", "t")).build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        s.enqueuePiece("a", IoKind.READ, 1 << 20, "big", 0, true, false);
        s.complete(s.next(0), 0, 0);
        s.enqueuePiece("a", IoKind.READ, 1 << 20, "big", 0, false, true);
        s.complete(s.next(0), 0, 0); // its record, a later piece's, goes back to the pool last
        s.enqueueBackground("scrub", "step", 0);
        Ticket<String> step = s.next(0);
        assertThat(step.request()).isEqualTo("step");
        s.complete(step, 0, 0);

        assertThat(s.snapshot(0).task("scrub").ops()).isEqualTo(1);
        assertThat(s.snapshot(0).volume("a").readOps()).as("the large request counts once").isEqualTo(1);
    }

    /**
     * A 32 MiB read run as 1 MiB pieces (the data node's chunks) beside a volume of 4 KiB reads
     * of equal weight: each piece goes back behind the small reader's requests, so a small
     * request never waits for more than one piece; the large request counts one op and its bytes.
     */
    @Test
    void aLargeRequestRunAsContinuationsLetsASmallRequestOfAnotherVolumeInBetweenEveryPiece() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(twoVolumes(100, 100), 0);
        long piece = 1 << 20;
        s.enqueuePiece("a", IoKind.READ, piece, "big", 0, true, false);
        int pieces = 1;
        int smallServed = 0;
        int longestRunOfPieces = 0;
        int run = 0;
        s.enqueue("b", IoKind.READ, 4096, "small", 0);
        for (Ticket<String> t; (t = s.next(0)) != null;) {
            String what = t.request();
            s.complete(t, 0, 0);
            if (what.equals("big")) {
                longestRunOfPieces = Math.max(longestRunOfPieces, ++run);
                if (pieces < 32) {
                    pieces++;
                    s.enqueuePiece("a", IoKind.READ, piece, "big", 0, false, pieces == 32);
                }
            } else {
                run = 0;
                if (++smallServed < 10_000) {
                    s.enqueue("b", IoKind.READ, 4096, "small", 0); // a QD1 client
                }
            }
        }
        // the pieces charge 1 MiB each, so 4 KiB requests run 256 to each piece while both are queued
        assertThat(longestRunOfPieces).as("pieces in a row while the small reader waited").isEqualTo(1);
        Stats big = s.snapshot(0).volume("a");
        assertThat(big.readOps()).as("the large request counts once").isEqualTo(1);
        assertThat(big.readBytes()).isEqualTo(32 * piece);
        assertThat(s.snapshot(0).volume("b").readOps()).isEqualTo(10_000);
    }

    @Test
    void aRequestRunAsPiecesCountsOneOperationAgainstAnIopsLimitAndNeverWaitsForItBetweenPieces() {
        SchedulerConfig c = SchedulerConfig.builder()
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("capped", "t").withMaxIops(100))
                .build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        s.enqueuePiece("capped", IoKind.WRITE, 1 << 20, "w", 0, true, false);
        s.complete(s.next(0), 0, 0);
        for (int i = 0; i < 31; i++) {
            s.enqueuePiece("capped", IoKind.WRITE, 1 << 20, "w", 0, false, i == 30);
            Ticket<String> t = s.next(0);
            assertThat(t).as("piece %d of a request the cap let in", i + 2).isNotNull();
            s.complete(t, 0, 0);
        }
        // 100 IOPS: after one op the next request may go within 10 ms; had each piece counted an
        // op, it would wait about 300 ms (32 ops, less the 20 ms jitter tolerance)
        s.enqueue("capped", IoKind.WRITE, 4096, "next", 0);
        assertThat(s.next(10 * MS)).as("the request after a 32-piece one, 10 ms later").isNotNull();
        assertThat(s.snapshot(0).volume("capped").writeOps()).isEqualTo(1);
        assertThat(s.snapshot(0).volume("capped").writeBytes()).isEqualTo(32L << 20);
    }

    @Test
    void volumeReturningFromIdleStartsAtCurrentVirtualTimeWithoutBankedCredit() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(twoVolumes(100, 100), 0);
        runBacklogged(s, new String[] {"a"}, 4096, 1000); // only a runs for a long time
        // drain a's extra queue
        for (Ticket<String> t; (t = s.next(0)) != null; ) {
            s.complete(t, 0, 0);
        }
        Map<String, Long> served = runBacklogged(s, new String[] {"a", "b"}, 4096, 100);
        // b banked nothing while idle: both now alternate; b is ahead by at most one request
        assertThat(Math.abs(served.get("a") - served.get("b"))).isLessThanOrEqualTo(2 * 4096);
    }

    @Test
    void throttledVolumeIsSkippedAndOthersTakeTheCapacity() {
        SchedulerConfig c = SchedulerConfig.builder()
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("capped", "t").withMaxIops(100))
                .volume(VolumeSpec.of("free", "t"))
                .build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        for (int i = 0; i < 50; i++) {
            s.enqueue("capped", IoKind.WRITE, 4096, "c", 0);
            s.enqueue("free", IoKind.WRITE, 4096, "f", 0);
        }
        int capped = 0, free = 0;
        // 100 ms of time at 10 us per dispatch
        for (long now = 0; now < 100 * MS; now += 10_000) {
            Ticket<String> t = s.next(now);
            if (t == null) {
                continue;
            }
            if (t.volumeId().equals("capped")) {
                capped++;
            } else {
                free++;
                s.complete(t, 0, now);
                s.enqueue("free", IoKind.WRITE, 4096, "f", now);
                continue;
            }
            s.complete(t, 0, now);
        }
        // 100 IOPS over 100 ms = 10 ops, plus the jitter tolerance (2 ms -> 0.2 op) and one overdraft
        assertThat(capped).isBetween(9, 11);
        assertThat(free).isGreaterThan(9000);
        assertThat(s.snapshot(100 * MS).volume("capped").throttledNanos()).isGreaterThan(80 * MS);
    }

    @Test
    void nextEligibleTimeReportsWhenAThrottledVolumeMayGoAgain() {
        SchedulerConfig c = SchedulerConfig.builder()
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("v", "t").withMaxIops(1000))
                .build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        s.enqueue("v", IoKind.READ, 4096, "1", 0);
        s.enqueue("v", IoKind.READ, 4096, "2", 0);
        assertThat(s.next(0)).isNotNull();
        assertThat(s.next(0)).isNull();
        long at = s.nextEligibleTime();
        assertThat(at).isEqualTo(MS); // 1 ms per op; the 2 ms tolerance was consumed at creation
        assertThat(s.next(at - 1)).isNull();
        assertThat(s.next(at)).isNotNull();
    }

    @Test
    void throttledTimeInSnapshotsNeverDecreasesWhenATimerFiresLate() {
        // A snapshot taken after a throttled volume's due time, but before the scheduler noticed
        // it, must not report more throttled time than the scheduler later records: usage reports
        // take differences of these counters, and a decrease reads as a recreated volume.
        SchedulerConfig c = SchedulerConfig.builder()
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("v", "t").withMaxIops(1000))
                .build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        s.enqueue("v", IoKind.READ, 4096, "1", 0);
        s.enqueue("v", IoKind.READ, 4096, "2", 0);
        s.complete(s.next(0), 0, 0);
        assertThat(s.next(0)).isNull();
        long due = s.nextEligibleTime();
        long late = due + 5 * MS;
        long before = s.snapshot(late).volume("v").throttledNanos();
        assertThat(s.next(late)).isNotNull();
        long after = s.snapshot(late).volume("v").throttledNanos();
        assertThat(after).isGreaterThanOrEqualTo(before);
    }

    @Test
    void reservationIsServedBeforeWeightBasedChoice() {
        SchedulerConfig c = SchedulerConfig.builder()
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("reserved", "t").withWeight(1).withMinIops(1000))
                .volume(VolumeSpec.of("heavy", "t").withWeight(10000))
                .build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        for (int i = 0; i < 8; i++) {
            s.enqueue("reserved", IoKind.READ, 4096, "r", 0);
            s.enqueue("heavy", IoKind.READ, 4096, "h", 0);
        }
        int reserved = 0;
        // one second, 10k dispatches
        for (long now = 0; now < 1000 * MS; now += 100_000) {
            Ticket<String> t = s.next(now);
            String v = t.volumeId();
            if (v.equals("reserved")) {
                reserved++;
            }
            s.complete(t, 0, now);
            s.enqueue(v, IoKind.READ, 4096, v.substring(0, 1), now);
        }
        // weight alone would give it ~1 op; the reservation gives it 1000/s
        assertThat(reserved).isBetween(990, 1010);
    }

    @Test
    void submitPastTheQueueBoundFailsAtOnceAndIsCounted() {
        SchedulerConfig c = SchedulerConfig.builder()
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("v", "t").withQueueCapacity(2))
                .build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        s.enqueue("v", IoKind.READ, 1, "1", 0);
        s.enqueue("v", IoKind.READ, 1, "2", 0);
        assertThatThrownBy(() -> s.enqueue("v", IoKind.READ, 1, "3", 0))
                .isInstanceOf(QueueFullException.class).hasMessageContaining("'v'");
        assertThat(s.snapshot(0).volume("v").rejected()).isEqualTo(1);
        assertThat(s.snapshot(0).volume("v").queueDepth()).isEqualTo(2);
    }

    @Test
    void removedVolumeDrainsBeforeItDisappears() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(twoVolumes(100, 100), 0);
        for (int i = 0; i < 5; i++) {
            s.enqueue("a", IoKind.READ, 4096, "a" + i, 0);
        }
        Ticket<String> running = s.next(0);
        SchedulerConfig without = twoVolumes(100, 100).toBuilder().removeVolume("a").build();
        s.reconfigure(without, 0);
        assertThat(s.hasVolume("a")).isFalse();
        assertThatThrownBy(() -> s.enqueue("a", IoKind.READ, 1, "x", 0)).isInstanceOf(IllegalArgumentException.class);
        Set<String> done = new HashSet<>();
        done.add(running.request());
        s.complete(running, 0, 0);
        for (Ticket<String> t; (t = s.next(0)) != null; ) {
            assertThat(done.add(t.request())).isTrue();
            s.complete(t, 0, 0);
        }
        assertThat(done).containsExactlyInAnyOrder("a0", "a1", "a2", "a3", "a4");
        assertThat(s.snapshot(0).volumes()).doesNotContainKey("a");
    }

    @Test
    void volumeHandleQueuesLikeTheIdUntilItsVolumeHasDrainedAway() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(twoVolumes(100, 100), 0);
        VolumeHandle a = s.volume("a");
        assertThat(a.volumeId()).isEqualTo("a");
        assertThat(s.volume("a")).isSameAs(a);
        s.enqueue(a, IoKind.READ, 4096, "a0", 0);
        Ticket<String> t = s.next(0);
        assertThat(t.volume()).isSameAs(a);
        assertThat(t.request()).isEqualTo("a0");
        s.complete(t, 0, 0);
        assertThatThrownBy(() -> s.volume("nope")).isInstanceOf(IllegalArgumentException.class);
        HierarchicalScheduler<String> other = new HierarchicalScheduler<>(twoVolumes(100, 100), 0);
        assertThatThrownBy(() -> other.enqueue(a, IoKind.READ, 1, "x", 0)).isInstanceOf(IllegalArgumentException.class);

        // removed while busy: refused, but revived by a config that brings it back before it drained
        s.enqueue(a, IoKind.READ, 4096, "a1", 0);
        Ticket<String> running = s.next(0);
        SchedulerConfig without = twoVolumes(100, 100).toBuilder().removeVolume("a").build();
        s.reconfigure(without, 0);
        assertThatThrownBy(() -> s.enqueue(a, IoKind.READ, 1, "x", 0)).isInstanceOf(IllegalArgumentException.class);
        s.reconfigure(twoVolumes(100, 100), 0);
        s.enqueue(a, IoKind.READ, 4096, "a2", 0);
        s.complete(running, 0, 0);
        s.complete(s.next(0), 0, 0);

        // removed and drained: the handle is dead, even once a volume of the same id is back
        s.reconfigure(without, 0);
        s.reconfigure(twoVolumes(100, 100), 0);
        assertThatThrownBy(() -> s.enqueue(a, IoKind.READ, 1, "x", 0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(s.volume("a")).isNotSameAs(a);
        s.enqueue(s.volume("a"), IoKind.READ, 1, "a3", 0);
        assertThat(s.queueDepth("a")).isEqualTo(1);
    }

    @Test
    void snapshotCountsLatencySamplesStillBufferedForBatchCounting() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(twoVolumes(100, 100), 0);
        s.enqueue("a", IoKind.READ, 4096, "a0", 0);
        Ticket<String> t = s.next(MS); // waited 1 ms; still running
        Stats running = s.snapshot(MS).volume("a");
        assertThat(running.waitP50Nanos()).isBetween(MS * 97 / 100, MS * 103 / 100);
        s.complete(t, 0, 3 * MS); // served 2 ms
        Stats done = s.snapshot(3 * MS, true).volume("a");
        assertThat(done.serviceP50Nanos()).isBetween(2 * MS * 97 / 100, 2 * MS * 103 / 100);
        assertThat(s.snapshot(3 * MS).volume("a").waitP50Nanos()).isZero(); // reset
    }

    /**
     * What a copy applies for its primary ({@link IoKind#REPLICA}) counts apart from the client's
     * reads and writes, in the volume's and its tenant's figures, and adds no latency sample: the
     * primary counted the client's request, with its latency.
     */
    @Test
    void aReplicaRequestCountsApartFromTheClientsReadsAndWritesAndOutOfTheLatencies() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(twoVolumes(100, 100), 0);
        s.enqueue("a", IoKind.REPLICA, 8192, "copy", 0);
        s.complete(s.next(MS), 0, 3 * MS); // waited 1 ms, served 2 ms
        Stats a = s.snapshot(3 * MS).volume("a");
        assertThat(a.replicaOps()).isEqualTo(1);
        assertThat(a.replicaBytes()).isEqualTo(8192);
        assertThat(a.ops()).as("client ops").isZero();
        assertThat(a.bytes()).as("client bytes").isZero();
        assertThat(a.waitP50Nanos()).isZero();
        assertThat(a.serviceP50Nanos()).isZero();
        Stats tenant = s.snapshot(3 * MS).tenants().values().iterator().next();
        assertThat(tenant.replicaOps()).isEqualTo(1);
        assertThat(tenant.replicaBytes()).isEqualTo(8192);
        assertThat(tenant.ops()).isZero();

        s.enqueue("a", IoKind.WRITE, 4096, "client", 3 * MS);
        s.complete(s.next(6 * MS), 0, 11 * MS); // waited 3 ms, served 5 ms
        Stats after = s.snapshot(11 * MS).volume("a");
        assertThat(after.writeOps()).isEqualTo(1);
        assertThat(after.replicaOps()).isEqualTo(1);
        assertThat(after.serviceP50Nanos()).as("the client's write alone, not the copy's 2 ms")
                .isBetween(5 * MS * 97 / 100, 5 * MS * 103 / 100);
        assertThat(after.waitP50Nanos()).as("the client's wait alone, not the copy's 1 ms")
                .isBetween(3 * MS * 97 / 100, 3 * MS * 103 / 100);
    }

    /** The foreground (volume v) at share 3 and gc at 1, both always backlogged. */
    private static HierarchicalScheduler<String> foregroundAndGc() {
        SchedulerConfig c = SchedulerConfig.builder()
                .task("foreground", 3).task("gc", 1)
                .tenant(TenantSpec.of("t")).volume(VolumeSpec.of("v", "t")).build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        for (int i = 0; i < 4; i++) {
            s.enqueue("v", IoKind.READ, 4096, "v", 0);
            s.enqueueBackground("gc", "g", 0);
        }
        return s;
    }

    /**
     * Runs 4,000 decisions of {@link #foregroundAndGc}, completing each at once with the CPU and
     * worker time its task costs and queueing the next; returns the times charged by task.
     */
    private static Map<String, long[]> runBacklogged(HierarchicalScheduler<String> s, ToLongFunction<String> cpu,
            ToLongFunction<String> worker) {
        Map<String, long[]> charged = new HashMap<>(); // [cpu, worker]
        for (int i = 0; i < 4000; i++) {
            Ticket<String> t = s.next(0);
            String task = t.task();
            long[] c = charged.computeIfAbsent(task, k -> new long[2]);
            c[0] += cpu.applyAsLong(task);
            c[1] += worker.applyAsLong(task);
            s.complete(t, cpu.applyAsLong(task), worker.applyAsLong(task), 0);
            if (task.equals("gc")) {
                s.enqueueBackground("gc", "g", 0);
            } else {
                s.enqueue("v", IoKind.READ, 4096, "v", 0);
            }
        }
        return charged;
    }

    @Test
    void rootSchedulerPicksTaskWithLowestCpuPerShare() {
        ToLongFunction<String> cpu = task -> task.equals("gc") ? 50_000 : 10_000; // gc items cost 5x more CPU
        Map<String, long[]> charged = runBacklogged(foregroundAndGc(), cpu, cpu);
        double fg = charged.get("foreground")[0] / (double) (charged.get("foreground")[0] + charged.get("gc")[0]);
        assertThat(fg).isBetween(0.74, 0.76);
    }

    /**
     * On a store slower than the CPU: gc items cost as much CPU as foreground reads but hold their
     * worker 20 times longer, blocked. The root divides worker time by share, and the snapshot
     * reports both currencies per task, as charged.
     */
    @Test
    void rootDividesWorkerTimeByShareAndReportsItBesideTheCpuTime() {
        HierarchicalScheduler<String> s = foregroundAndGc();
        Map<String, long[]> charged = runBacklogged(s, task -> 10_000, task -> task.equals("gc") ? 200_000 : 10_000);
        Map<String, Long> cpu = Map.of("foreground", charged.get("foreground")[0], "gc", charged.get("gc")[0]);
        Map<String, Long> worker = Map.of("foreground", charged.get("foreground")[1], "gc", charged.get("gc")[1]);
        double fg = worker.get("foreground") / (double) (worker.get("foreground") + worker.get("gc"));
        assertThat(fg).as("the foreground's part of the worker time").isBetween(0.74, 0.76);
        SchedulerSnapshot snap = s.snapshot(0);
        for (String task : List.of("foreground", "gc")) {
            assertThat(snap.task(task).cpuNanos()).as("CPU time of " + task).isEqualTo(cpu.get(task));
            assertThat(snap.task(task).workerNanos()).as("worker time of " + task).isEqualTo(worker.get(task));
        }
        assertThat(snap.volume("v").workerNanos()).as("volumes report CPU time only").isZero();
    }

    @Test
    void dynamicShareFollowsUtilizationBetweenThresholds() {
        DynamicShare d = new DynamicShare(0.2, 0.8, 10, 40, Curve.LINEAR);
        SchedulerConfig c = SchedulerConfig.builder().task("foreground", 50)
                .task(TaskSpec.of("flush", 10).withDynamic(d)).build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        assertThat(s.share("flush")).isEqualTo(10);
        s.setUtilization("flush", 0.5);
        assertThat(s.share("flush")).isCloseTo(25.0, org.assertj.core.data.Offset.offset(1e-9));
        s.setUtilization("flush", 0.95);
        assertThat(s.share("flush")).isEqualTo(40);
        DynamicShare e = new DynamicShare(0.2, 0.8, 10, 40, Curve.EXPONENTIAL);
        assertThat(e.shareAt(0.5)).isCloseTo(20.0, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void flushTaskCpuShareRisesWhenTheWriteBufferFillsPastT2() {
        DynamicShare d = new DynamicShare(0.3, 0.7, 10, 90, Curve.LINEAR);
        SchedulerConfig c = SchedulerConfig.builder().task("foreground", 90)
                .task(TaskSpec.of("flush", 1).withDynamic(d))
                .tenant(TenantSpec.of("t")).volume(VolumeSpec.of("v", "t")).build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        for (int i = 0; i < 4; i++) {
            s.enqueue("v", IoKind.WRITE, 4096, "v", 0);
            s.enqueueBackground("flush", "f", 0);
        }
        double low = flushCpuShare(s, 20_000);
        s.setUtilization("flush", 0.9); // buffer nearly full: share 90, equal to foreground
        double high = flushCpuShare(s, 20_000);
        assertThat(low).isCloseTo(0.10, org.assertj.core.data.Offset.offset(0.005));
        assertThat(high).isCloseTo(0.50, org.assertj.core.data.Offset.offset(0.01));
    }

    private static double flushCpuShare(HierarchicalScheduler<String> s, int dispatches) {
        long flush = 0, total = 0;
        for (int i = 0; i < dispatches; i++) {
            Ticket<String> t = s.next(0);
            boolean isFlush = t.task().equals("flush");
            long cpu = isFlush ? 30_000 : 10_000;
            total += cpu;
            if (isFlush) {
                flush += cpu;
            }
            s.complete(t, cpu, 0);
            if (isFlush) {
                s.enqueueBackground("flush", "f", 0);
            } else {
                s.enqueue("v", IoKind.WRITE, 4096, "v", 0);
            }
        }
        return (double) flush / total;
    }
}
