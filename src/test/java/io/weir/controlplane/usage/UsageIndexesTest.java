package io.weir.controlplane.usage;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.IntegrationTest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * The periodic statements on the usage tables find their rows by an index, not by reading the
 * table: the hourly cleanup of the report ledger and of the gaps (the ledger is the largest table
 * that is not partitioned: one row per report of every node), and the dashboard's top volumes of
 * one tenant, every few seconds, on the minute and hour rollups. The planner is told to avoid a
 * sequential scan wherever it can; a plan that still reads the whole table has no index to use.
 */
class UsageIndexesTest extends IntegrationTest {

    @Autowired
    DataSource dataSource;

    private String plan(String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("SET enable_seqscan = off");
            try {
                StringBuilder plan = new StringBuilder();
                try (ResultSet rs = s.executeQuery("EXPLAIN " + sql)) {
                    while (rs.next()) {
                        plan.append(rs.getString(1)).append('\n');
                    }
                }
                return plan.toString();
            } finally {
                s.execute("RESET enable_seqscan");
            }
        }
    }

    @Test
    void theLedgerAndGapCleanupsAndATenantsTopVolumesReadByIndex() throws SQLException {
        assertThat(plan("DELETE FROM usage_report WHERE interval_to < now() - interval '2 days'"))
                .contains("usage_report_interval_to_idx");
        assertThat(plan("DELETE FROM usage_gap WHERE gap_to < now() - interval '2 days'"))
                .contains("usage_gap_to_idx");
        for (String level : new String[] {"1m", "1h"}) {
            assertThat(plan("SELECT volume_id, sum(read_ops) FROM usage_volume_" + level + " WHERE bucket >= now() - interval '6 hours'"
                    + " AND bucket < now() AND tenant_id = '00000000-0000-0000-0000-000000000001' GROUP BY volume_id"))
                    .as(level).containsPattern("usage_volume_" + level + "_\\w*tenant\\w*_idx");
        }
    }
}
