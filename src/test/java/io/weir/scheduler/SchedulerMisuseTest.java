package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What a caller can get wrong, and what the scheduler does about it: requests larger than a
 * block-device request can be, and tickets handed back twice or to the wrong scheduler.
 */
class SchedulerMisuseTest {

    private static final long MAX = HierarchicalScheduler.MAX_REQUEST_BYTES;

    private static SchedulerConfig config(VolumeSpec... volumes) {
        SchedulerConfig.Builder b = SchedulerConfig.builder().tenant(TenantSpec.of("t"));
        for (VolumeSpec v : volumes) {
            b.volume(v);
        }
        return b.build();
    }

    // ------------------------------------------------------------------------- request size

    @Test
    void maximumRequestSizeIsTheLargestLengthAnNbdRequestCanCarry() {
        assertThat(MAX).isEqualTo((1L << 32) - 1);
    }

    @Test
    void requestLargerThanTheMaximumIsRejectedAtEnqueueAndNothingIsQueued() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(config(VolumeSpec.of("v", "t")), 0);
        assertThatThrownBy(() -> s.enqueue("v", IoKind.READ, MAX + 1, "big", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("4294967296")
                .hasMessageContaining("4294967295");
        assertThatThrownBy(() -> s.enqueue(s.volume("v"), IoKind.WRITE, 192L << 40, "huge", 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(s.queuedCount()).isZero();
        assertThat(s.enqueue("v", IoKind.READ, MAX, "largest", 0)).isNotNull();
    }

    @Test
    void requestLargerThanTheMaximumIsRejectedAtSubmit() throws Exception {
        try (QosExecutor ex = QosExecutor.builder(config(VolumeSpec.of("v", "t"))).workers(1).build()) {
            assertThatThrownBy(() -> ex.submit("v", IoKind.WRITE, 10_000_000_000L, () -> 1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("10000000000");
            CompletableFuture<Integer> ok = ex.submit("v", IoKind.WRITE, MAX, () -> 1);
            assertThat(ok.get(30, TimeUnit.SECONDS)).isEqualTo(1);
        }
    }

    @Test
    void largestRequestIsChargedInFullSoASmallRequestSiblingCatchesUpBeforeItRunsAgain() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(
                config(VolumeSpec.of("big", "t").withWeight(1), VolumeSpec.of("small", "t").withWeight(1)), 0);
        long small = 1L << 20;
        s.enqueue("big", IoKind.READ, MAX, "big", 0);
        s.enqueue("big", IoKind.READ, MAX, "big", 0);
        s.enqueue("small", IoKind.READ, small, "small", 0);
        int bigServed = 0;
        int smallServed = 0;
        for (int i = 0; i < 4_098; i++) {
            Ticket<String> t = s.next(0);
            if (t.request().equals("big")) {
                bigServed++;
            } else {
                smallServed++;
                s.enqueue("small", IoKind.READ, small, "small", 0);
            }
            s.complete(t, 1, 0);
        }
        // 4 GiB / 1 MiB = 4,096 small requests per big one, by the SFQ bound
        assertThat(bigServed).isEqualTo(2);
        assertThat(smallServed).isEqualTo(4_096);
    }

    @Test
    void largestRequestOnAByteLimitedVolumeHoldsTheNextOneBackForItsFullSize() {
        long rate = 1_000_000_000L; // 1 GB/s
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(
                config(VolumeSpec.of("v", "t").withMaxBytesPerSec(rate)), 0);
        s.enqueue("v", IoKind.WRITE, MAX, "first", 0);
        s.enqueue("v", IoKind.WRITE, 4096, "second", 0);
        s.complete(s.next(0), 1, 0);
        assertThat(s.next(1)).isNull();
        // 4,294,967,295 bytes at 1e9 bytes/s: the next may start 4.29 s later (less the 2 ms tolerance)
        assertThat(s.nextEligibleTime()).isBetween(4_292_000_000L, 4_295_000_000L);
    }

    @Test
    void largestRequestOnAVolumeLimitedNearTheLongRangeDoesNotOverflowTheLimiter() {
        long rate = Long.MAX_VALUE - 1;
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(
                config(VolumeSpec.of("v", "t").withMaxBytesPerSec(rate)), 0);
        for (int i = 0; i < 3; i++) {
            s.enqueue("v", IoKind.WRITE, MAX, "r" + i, 0);
        }
        for (int i = 0; i < 3; i++) {
            Ticket<String> t = s.next(0);
            assertThat(t).as("request %d at an effectively unlimited rate", i).isNotNull();
            s.complete(t, 1, 0);
        }
    }

    // ------------------------------------------------------------------------------ tickets

    @Test
    void completingATicketAgainAfterThePoolReusedItThrowsAndLeavesTheNewRequestRunning() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(config(VolumeSpec.of("v", "t")), 0);
        s.enqueue("v", IoKind.READ, 4096, "first", 0);
        Ticket<String> first = s.next(0);
        s.complete(first, 1, 0);
        s.enqueue("v", IoKind.READ, 4096, "second", 0);
        Ticket<String> second = s.next(0);

        assertThatThrownBy(() -> s.complete(first, 1, 0))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("stale");
        assertThat(s.runningCount()).isEqualTo(1);
        assertThat(second.request()).isEqualTo("second");
        s.complete(second, 1, 0);
        assertThat(s.runningCount()).isZero();
    }

    @Test
    void completingATicketTwiceThrows() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(config(VolumeSpec.of("v", "t")), 0);
        s.enqueue("v", IoKind.READ, 4096, "only", 0);
        Ticket<String> t = s.next(0);
        s.complete(t, 1, 0);
        assertThatThrownBy(() -> s.complete(t, 1, 0)).isInstanceOf(IllegalStateException.class);
        assertThat(s.runningCount()).isZero();
    }

    @Test
    void completingATicketOfAnotherSchedulerThrowsAndChangesNeitherScheduler() {
        HierarchicalScheduler<String> a = new HierarchicalScheduler<>(config(VolumeSpec.of("v", "t")), 0);
        HierarchicalScheduler<String> b = new HierarchicalScheduler<>(config(VolumeSpec.of("v", "t")), 0);
        a.enqueue("v", IoKind.READ, 4096, "a", 0);
        Ticket<String> fromA = a.next(0);

        assertThatThrownBy(() -> b.complete(fromA, 1, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("another scheduler");
        assertThat(b.runningCount()).isZero();
        assertThat(a.runningCount()).isEqualTo(1);
        a.complete(fromA, 1, 0);
        assertThat(a.runningCount()).isZero();
    }

    @Test
    void queuedTicketCannotBeCompleted() {
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(config(VolumeSpec.of("v", "t")), 0);
        Ticket<String> queued = s.enqueue("v", IoKind.READ, 4096, "q", 0);
        assertThatThrownBy(() -> s.complete(queued, 1, 0)).isInstanceOf(IllegalStateException.class);
        assertThat(s.queuedCount()).isEqualTo(1);
    }
}
