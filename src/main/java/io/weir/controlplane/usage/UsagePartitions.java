package io.weir.controlplane.usage;

import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Creates the partitions of the usage tables ahead of time and drops those past their level's
 * retention.
 *
 * <p>A partition of {@code usage_volume_raw} for 2026-12-02 is named
 * {@code usage_volume_raw_p20261202}; a monthly one of the hourly rollups
 * {@code usage_volume_1h_p202612}. Maintenance runs at start and every
 * {@code weir.usage.maintenance-interval}: it creates the current and the next
 * {@code partitions-ahead} partitions of every table, drops every partition whose whole range is
 * older than its level's retention, and deletes ledger and gap rows older than that. Ingest also
 * calls {@link #ensure} for the partitions a report needs, so a late or early report (within
 * retention) never fails for want of one.
 *
 * <p>Partitions are created outside the ingest transaction, in their own statement
 * ({@code CREATE TABLE IF NOT EXISTS ... PARTITION OF}); a race with another replica creating the
 * same one is retried once.
 */
@Component
class UsagePartitions {

    private static final Logger log = LoggerFactory.getLogger(UsagePartitions.class);

    private final JdbcTemplate jdbc;
    private final UsageProperties properties;
    private final Clock clock;
    /** Partitions known to exist, by name. */
    private final Set<String> known = ConcurrentHashMap.newKeySet();

    UsagePartitions(JdbcTemplate jdbc, UsageProperties properties, Clock clock) {
        this.jdbc = jdbc;
        this.properties = properties;
        this.clock = clock;
    }

    /** The scheduled maintenance; also runs once at start. */
    @Scheduled(initialDelay = 0, fixedDelayString = "${weir.usage.maintenance-interval:1h}")
    void maintain() {
        Instant now = clock.instant();
        createAhead(now);
        dropExpired(now);
    }

    /** Creates the partition containing {@code now} and the next {@code partitionsAhead} of every table. */
    void createAhead(Instant now) {
        for (UsageLevel level : UsageLevel.values()) {
            LocalDate start = level.period.start(now);
            for (int i = 0; i <= properties.partitionsAhead(); i++) {
                for (String table : level.tables) {
                    create(level, table, start);
                }
                start = level.period.next(start);
            }
        }
    }

    /**
     * Whether {@code level} keeps data at {@code t} at time {@code now}: false for data older than
     * the level's retention, which ingest leaves out rather than create a partition doomed to go.
     */
    boolean retains(UsageLevel level, Instant t, Instant now) {
        return !t.isBefore(now.minus(properties.retention().of(level)));
    }

    /** Makes sure the partitions of {@code level}'s tables containing {@code t} exist. */
    void ensure(UsageLevel level, Instant t) {
        LocalDate start = level.period.start(t);
        for (String table : level.tables) {
            create(level, table, start);
        }
    }

    private void create(UsageLevel level, String table, LocalDate start) {
        String name = table + "_p" + level.period.suffix(start);
        if (known.contains(name)) {
            return;
        }
        String sql = "CREATE TABLE IF NOT EXISTS " + name + " PARTITION OF " + table + " FOR VALUES FROM ('"
                + start + "T00:00:00Z') TO ('" + level.period.next(start) + "T00:00:00Z')";
        try {
            jdbc.execute(sql);
        } catch (DataAccessException e) {
            // Another replica created it between our check and our create: its catalog row wins.
            jdbc.execute(sql);
        }
        known.add(name);
    }

    /**
     * Drops every partition whose whole range ends at or before {@code now} minus its level's
     * retention, and the ledger and gap rows older than the raw and hourly retention.
     *
     * @return the names of the partitions dropped
     */
    List<String> dropExpired(Instant now) {
        List<String> dropped = new ArrayList<>();
        for (UsageLevel level : UsageLevel.values()) {
            Instant horizon = now.minus(properties.retention().of(level));
            for (String table : level.tables) {
                for (String partition : partitionsOf(table)) {
                    LocalDate start = partition.startsWith(table + "_p")
                            ? level.period.parse(partition.substring(table.length() + 2)) : null;
                    if (start == null) {
                        continue; // not one of ours
                    }
                    Instant end = level.period.next(start).atStartOfDay(ZoneOffset.UTC).toInstant();
                    if (!end.isAfter(horizon)) {
                        jdbc.execute("DROP TABLE IF EXISTS " + partition);
                        known.remove(partition);
                        dropped.add(partition);
                    }
                }
            }
        }
        jdbc.update("DELETE FROM usage_report WHERE interval_to < ?",
                java.sql.Timestamp.from(now.minus(properties.retention().raw())));
        jdbc.update("DELETE FROM usage_gap WHERE gap_to < ?",
                java.sql.Timestamp.from(now.minus(properties.retention().hour())));
        if (!dropped.isEmpty()) {
            log.info("Usage retention dropped {} partitions: {}", dropped.size(), dropped);
        }
        return dropped;
    }

    /** The partitions attached to {@code table}, by name. */
    List<String> partitionsOf(String table) {
        return jdbc.queryForList("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                + "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = ? ORDER BY c.relname", String.class, table);
    }
}
