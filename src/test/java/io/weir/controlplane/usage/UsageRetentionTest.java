package io.weir.controlplane.usage;

import static io.weir.controlplane.usage.UsageFixtures.figures;
import static io.weir.controlplane.usage.UsageFixtures.report;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.IntegrationTest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Retention drops whole partitions of one level and nothing else. The test works in January
 * 2001, far from the data of other tests in the shared database: it stores with a retention of a
 * century, then drops with retentions whose horizon falls on a day boundary of 2001.
 */
class UsageRetentionTest extends IntegrationTest {

    private static final Instant JAN_1 = Instant.parse("2001-01-01T00:00:00Z");

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    DataSource dataSource;

    @Autowired
    TransactionTemplate transactions;

    @Autowired
    UsageDirectory directory;

    @Autowired
    UsageMetrics metrics;

    private UsagePartitions partitions(Duration raw, Duration minute, Duration hour) {
        return new UsagePartitions(jdbc, new UsageProperties(new UsageProperties.Retention(raw, minute, hour), 3,
                Duration.ofHours(1), 2000, 100), clock);
    }

    private long count(String sql, Object... args) {
        return jdbc.queryForObject(sql, Long.class, args);
    }

    @Test
    void retentionDropsTheExpiredPartitionsOfEachLevelAndNothingElse() {
        Duration century = Duration.ofDays(36_500);
        UsagePartitions keepAll = partitions(century, century, century);
        UsageIngest ingest = new UsageIngest(dataSource, transactions, keepAll, directory, metrics, clock);
        UUID volume = UUID.randomUUID();
        UUID node = UUID.randomUUID();
        for (int day = 0; day < 3; day++) {
            ingest.ingest(node, report(day + 1, JAN_1.plus(Duration.ofDays(day)).plus(Duration.ofHours(12)),
                    Duration.ofSeconds(10), List.of(figures(volume, day + 1))));
        }
        assertThat(keepAll.partitionsOf("usage_volume_raw")).contains("usage_volume_raw_p20010101",
                "usage_volume_raw_p20010102", "usage_volume_raw_p20010103");
        List<String> otherRaw = keepAll.partitionsOf("usage_volume_raw").stream()
                .filter(p -> !p.startsWith("usage_volume_raw_p200101")).toList();
        long otherRawRows = count("SELECT count(*) FROM usage_volume_raw WHERE ts >= '2001-02-01'");
        long otherMinuteRows = count("SELECT count(*) FROM usage_volume_1m WHERE bucket >= '2001-02-01'");

        Instant now = clock.instant();
        // Raw samples kept until 2001-01-02T00:00: only the partitions of 2001-01-01 end by then.
        UsagePartitions rawGoes = partitions(Duration.between(JAN_1.plus(Duration.ofDays(1)), now), century, century);
        assertThat(rawGoes.dropExpired(now)).containsExactlyInAnyOrder("usage_volume_raw_p20010101", "usage_task_raw_p20010101");
        assertThat(count("SELECT count(*) FROM usage_volume_raw WHERE volume_id = ?", volume)).isEqualTo(2);
        assertThat(count("SELECT sum(read_ops) FROM usage_volume_1m WHERE volume_id = ?", volume)).isEqualTo(1 + 2 + 3);
        assertThat(count("SELECT count(*) FROM usage_report WHERE node_id = ?", node)).isEqualTo(2);
        assertThat(rawGoes.partitionsOf("usage_volume_raw")).containsAll(otherRaw);

        // Minute rollups kept until 2001-01-03T00:00: two daily partitions of each 1m table go.
        UsagePartitions minuteGoes = partitions(Duration.between(JAN_1.plus(Duration.ofDays(1)), now),
                Duration.between(JAN_1.plus(Duration.ofDays(2)), now), century);
        assertThat(minuteGoes.dropExpired(now)).containsExactlyInAnyOrder(
                "usage_volume_1m_p20010101", "usage_volume_1m_p20010102", "usage_tenant_1m_p20010101",
                "usage_tenant_1m_p20010102", "usage_task_1m_p20010101", "usage_task_1m_p20010102");
        assertThat(count("SELECT sum(read_ops) FROM usage_volume_1m WHERE volume_id = ?", volume)).isEqualTo(3);
        assertThat(count("SELECT sum(read_ops) FROM usage_volume_1h WHERE volume_id = ?", volume)).isEqualTo(1 + 2 + 3);
        assertThat(minuteGoes.partitionsOf("usage_volume_1h")).contains("usage_volume_1h_p200101");

        // everything outside January 2001 is untouched
        assertThat(count("SELECT count(*) FROM usage_volume_raw WHERE ts >= '2001-02-01'")).isEqualTo(otherRawRows);
        assertThat(count("SELECT count(*) FROM usage_volume_1m WHERE bucket >= '2001-02-01'")).isEqualTo(otherMinuteRows);
    }

    @Test
    void maintenanceCreatesPartitionsAhead() {
        UsagePartitions p = partitions(Duration.ofDays(2), Duration.ofDays(14), Duration.ofDays(400));
        Instant now = clock.instant();
        p.createAhead(now);
        String today = UsageLevel.Period.DAY.suffix(UsageLevel.Period.DAY.start(now));
        String inThreeDays = UsageLevel.Period.DAY.suffix(UsageLevel.Period.DAY.start(now.plus(Duration.ofDays(3))));
        String nextMonth = UsageLevel.Period.MONTH.suffix(UsageLevel.Period.MONTH.next(UsageLevel.Period.MONTH.start(now)));
        assertThat(p.partitionsOf("usage_volume_raw")).contains("usage_volume_raw_p" + today, "usage_volume_raw_p" + inThreeDays);
        assertThat(p.partitionsOf("usage_tenant_1m")).contains("usage_tenant_1m_p" + inThreeDays);
        assertThat(p.partitionsOf("usage_task_1h")).contains("usage_task_1h_p" + nextMonth);
    }
}
