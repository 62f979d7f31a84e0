package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.scheduler.HierarchicalScheduler.VolumeStatus;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import org.junit.jupiter.api.Test;

/** What a snapshot and the status queries tell an operator about a volume's place and life. */
class SchedulerObservabilityTest {

    private static final long MS = 1_000_000L;

    @Test
    void removedVolumeIsDrainingUntilItsLastRequestCompletesAndThenGone() {
        SchedulerConfig both = SchedulerConfig.builder()
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("a", "t"))
                .volume(VolumeSpec.of("b", "t"))
                .build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(both, 0);
        s.enqueue("a", IoKind.READ, 4096, "a", 0);
        Ticket<String> running = s.next(0);
        s.reconfigure(SchedulerConfig.builder().tenant(TenantSpec.of("t")).volume(VolumeSpec.of("b", "t")).build(), 0);

        assertThat(s.hasVolume("a")).isFalse();
        assertThat(s.volumeStatus("a")).isEqualTo(VolumeStatus.DRAINING);
        assertThat(s.volumeStatus("b")).isEqualTo(VolumeStatus.LIVE);
        SchedulerSnapshot draining = s.snapshot(0);
        assertThat(draining.volumes()).containsKey("a");
        assertThat(draining.isDraining("a")).isTrue();
        assertThat(draining.isDraining("b")).isFalse();

        s.complete(running, 1, 0);
        assertThat(s.hasVolume("a")).isFalse();
        assertThat(s.volumeStatus("a")).isEqualTo(VolumeStatus.GONE);
        SchedulerSnapshot gone = s.snapshot(0);
        assertThat(gone.volumes()).doesNotContainKey("a");
        assertThat(gone.isDraining("a")).isFalse();
        assertThat(s.volumeStatus("never-configured")).isEqualTo(VolumeStatus.GONE);
    }

    @Test
    void snapshotShowsEachLevelsVirtualTimeEveryChildsLeadAndTheReservationLag() {
        SchedulerConfig c = SchedulerConfig.builder()
                .tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("r", "t").withMinIops(1_000))
                .volume(VolumeSpec.of("x", "t"))
                .build();
        HierarchicalScheduler<String> s = new HierarchicalScheduler<>(c, 0);
        for (int i = 0; i < 4; i++) {
            s.enqueue("r", IoKind.READ, 4096, "r", 0);
            s.enqueue("x", IoKind.READ, 4096, "x", 0);
        }
        // at time 0 r's reservation tag is due: the reservation phase serves it, charging its counter
        Ticket<String> first = s.next(0);
        assertThat(first.reservationPhase()).isTrue();
        s.complete(first, 1, 0);

        SchedulerSnapshot snap = s.snapshot(0);
        long oneRequest = 4096 * SchedulerSnapshot.COUNTER_UNITS_PER_BYTE / 100;
        assertThat(snap.levels().volumeLevels().get("t").virtualTime()).isZero();
        assertThat(snap.volumeLead("r")).isEqualTo(oneRequest);
        assertThat(snap.volumeLead("x")).isZero();
        assertThat(snap.levels().tenantLevel().leads()).containsEntry("t", oneRequest);
        // r's next reservation tag is 1 ms ahead of the clock: served ahead of its reservation
        assertThat(snap.levels().reservationLagNanos()).containsOnlyKeys("r").containsEntry("r", -MS);
        assertThat(s.snapshot(3 * MS).levels().reservationLagNanos()).containsEntry("r", 2 * MS);
        assertThat(snap.levels().root().leads()).containsKey(SchedulerConfig.FOREGROUND);
    }
}
