package io.weir.controlplane.usage;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;

/**
 * The three levels usage is kept at: raw samples, 1-minute and 1-hour rollups. Each level has its
 * tables, its bucket width, the period of its partitions and its own retention.
 */
enum UsageLevel {

    /** One row per volume or task per agent report; daily partitions. */
    RAW(null, Period.DAY, List.of("usage_volume_raw", "usage_task_raw"), "ts"),
    /** Sums per minute; daily partitions. */
    MINUTE(Duration.ofMinutes(1), Period.DAY, List.of("usage_volume_1m", "usage_tenant_1m", "usage_task_1m"), "bucket"),
    /** Sums per hour; monthly partitions. */
    HOUR(Duration.ofHours(1), Period.MONTH, List.of("usage_volume_1h", "usage_tenant_1h", "usage_task_1h"), "bucket");

    /** Bucket width, or null for raw samples (each sample is its own row). */
    final Duration width;
    final Period period;
    final List<String> tables;
    /** The time column, which is also the partition key. */
    final String timeColumn;

    UsageLevel(Duration width, Period period, List<String> tables, String timeColumn) {
        this.width = width;
        this.period = period;
        this.tables = tables;
        this.timeColumn = timeColumn;
    }

    /** Lower-case name used in API responses and configuration. */
    String wireName() {
        return switch (this) {
            case RAW -> "raw";
            case MINUTE -> "1m";
            case HOUR -> "1h";
        };
    }

    /** The start of the bucket containing {@code t} (t itself for raw samples). */
    Instant bucket(Instant t) {
        if (width == null) {
            return t;
        }
        long w = width.toMillis();
        return Instant.ofEpochMilli(Math.floorDiv(t.toEpochMilli(), w) * w);
    }

    /** Partition periods: a partition covers [start, next(start)). */
    enum Period {
        DAY(DateTimeFormatter.ofPattern("yyyyMMdd")),
        MONTH(DateTimeFormatter.ofPattern("yyyyMM"));

        private final DateTimeFormatter suffix;

        Period(DateTimeFormatter suffix) {
            this.suffix = suffix;
        }

        LocalDate start(Instant t) {
            LocalDate d = LocalDate.ofInstant(t, ZoneOffset.UTC);
            return this == DAY ? d : d.withDayOfMonth(1);
        }

        LocalDate next(LocalDate start) {
            return this == DAY ? start.plusDays(1) : start.plusMonths(1);
        }

        String suffix(LocalDate start) {
            return start.format(suffix);
        }

        /** The start a partition suffix names, or null if it is not one of this period's. */
        LocalDate parse(String s) {
            try {
                if (this == DAY && s.length() == 8) {
                    return LocalDate.parse(s, suffix);
                }
                if (this == MONTH && s.length() == 6) {
                    return LocalDate.parse(s + "01", DAY.suffix);
                }
            } catch (java.time.format.DateTimeParseException e) {
                return null;
            }
            return null;
        }
    }
}
