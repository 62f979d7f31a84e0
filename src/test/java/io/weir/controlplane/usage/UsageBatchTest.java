package io.weir.controlplane.usage;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.protocol.UsageReport;
import io.weir.protocol.UsageReport.Gap;
import io.weir.protocol.UsageReport.TaskUsage;
import io.weir.protocol.UsageReport.VolumeUsage;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** What stored usage reports become before any SQL ({@link UsageBatch}): raw rows, rollup sums, gaps. */
class UsageBatchTest {

    private static final Instant T = Instant.parse("2026-12-02T05:00:00Z");
    private static final UUID NODE = UUID.randomUUID();
    private static final UUID TENANT = UUID.randomUUID();
    private static final UUID VOLUME = UUID.randomUUID();
    private static final UUID STRAY = UUID.randomUUID();
    private static final Map<UUID, Optional<UUID>> TENANT_OF = Map.of(VOLUME, Optional.of(TENANT), STRAY, Optional.empty());
    private static final UsageBatch.Retention EVERYTHING = (level, start) -> true;

    private static UsageIngest.Delivery report(long sequence, Instant from, List<VolumeUsage> volumes, List<Gap> gaps) {
        return new UsageIngest.Delivery(NODE, new UsageReport(sequence, from, from.plusSeconds(10), volumes,
                List.of(new TaskUsage("foreground", 30, 9_000, 9_000, 700)), gaps));
    }

    private static VolumeUsage usage(UUID volume, long reads, long p50) {
        return new VolumeUsage(volume, reads, 0, reads * 4096, 0, p50, 2 * p50, 10 * p50, 2.0, 0, 0, 1_000);
    }

    @Test
    void twoReportsOfOneMinuteAddUpInTheVolumesAndTheTenantsRollupsOfBothLevels() {
        UsageBatch b = new UsageBatch();
        b.add(report(1, T, List.of(usage(VOLUME, 10, 100)), List.of()), TENANT_OF, EVERYTHING);
        b.add(report(2, T.plusSeconds(10), List.of(usage(VOLUME, 30, 200)), List.of()), TENANT_OF, EVERYTHING);

        for (UsageLevel level : List.of(UsageLevel.MINUTE, UsageLevel.HOUR)) {
            UsageBatch.Sums v = b.volumeRollups.get(level).get(new UsageBatch.VolumeKey(VOLUME, level.bucket(T)));
            assertThat(v.samples).isEqualTo(2);
            assertThat(v.readOps).isEqualTo(40);
            assertThat(v.readBytes).isEqualTo(40 * 4096);
            assertThat(v.p50Wsum).as("ops-weighted: 10 x 100 + 30 x 200").isEqualTo(7_000);
            assertThat(v.maxUs).isEqualTo(2_000);
            assertThat(v.queueDepthMs).as("depth 2 over two 10 s intervals").isEqualTo(40_000.0);
            assertThat(v.tenant).isEqualTo(TENANT);
            assertThat(b.tenantRollups.get(level).get(new UsageBatch.VolumeKey(TENANT, level.bucket(T))).readOps)
                    .isEqualTo(40);
        }
        assertThat(b.volumeCopy.toString().lines()).hasSize(2);
        assertThat(b.taskCopy.toString().lines()).hasSize(2);
        assertThat(b.volumeSamples).isEqualTo(2);
        assertThat(b.tenantTotals.get(TENANT)).containsExactly(40, 40 * 4096);
    }

    @Test
    void aVolumeOfNoKnownTenantHasItsOwnRowsButAddsToNoTenant() {
        UsageBatch b = new UsageBatch();
        b.add(report(1, T, List.of(usage(STRAY, 5, 100)), List.of()), TENANT_OF, EVERYTHING);
        assertThat(b.volumeRollups.get(UsageLevel.MINUTE)).containsKey(new UsageBatch.VolumeKey(STRAY, T));
        assertThat(b.tenantRollups).isEmpty();
        assertThat(b.tenantTotals).isEmpty();
        assertThat(b.volumeCopy.toString()).contains("\t\\N\t"); // its tenant column is NULL
    }

    @Test
    void aSampleOlderThanALevelsRetentionIsLeftOutOfThatLevelOnly() {
        UsageBatch b = new UsageBatch();
        b.add(report(1, T, List.of(usage(VOLUME, 10, 100)), List.of()), TENANT_OF, (level, start) -> level == UsageLevel.HOUR);
        assertThat(b.volumeCopy).isEmpty();
        assertThat(b.skippedSamples).isEqualTo(1);
        assertThat(b.volumeRollups).containsOnlyKeys(UsageLevel.HOUR);
    }

    @Test
    void gapsOfOneNodeAndFirstSequenceAreWidenedIntoOne() {
        UsageBatch b = new UsageBatch();
        b.add(report(5, T, List.of(), List.of(new Gap(2, 3, T.minusSeconds(30), T.minusSeconds(10)))), TENANT_OF, EVERYTHING);
        b.add(report(6, T, List.of(), List.of(new Gap(2, 4, T.minusSeconds(30), T))), TENANT_OF, EVERYTHING);
        assertThat(b.gaps).containsExactly(Map.entry(new UsageBatch.GapKey(NODE, 2),
                new UsageBatch.GapRow(4, T.minusSeconds(30), T)));
    }

    @Test
    void sumsClampAtTheLargestLongInsteadOfOverflowing() {
        assertThat(UsageBatch.plus(Long.MAX_VALUE - 10, 11)).isEqualTo(Long.MAX_VALUE);
        assertThat(UsageBatch.plus(5, 6)).isEqualTo(11);
        assertThat(UsageBatch.times(1L << 40, 1L << 30)).isEqualTo(Long.MAX_VALUE);
        assertThat(UsageBatch.times(1L << 20, 1L << 20)).isEqualTo(1L << 40);
    }
}
