-- Indexes for the periodic statements that read the usage tables whole without them: the hourly
-- cleanup of the report ledger (one row per report of every node, not partitioned) and of the
-- gaps, and the top volumes of one tenant on the rollups, which the dashboard asks for every few
-- seconds. On a partitioned table the index is made on every partition.
CREATE INDEX usage_report_interval_to_idx ON usage_report (interval_to);
CREATE INDEX usage_gap_to_idx ON usage_gap (gap_to);
CREATE INDEX usage_volume_1m_tenant_idx ON usage_volume_1m (tenant_id, bucket);
CREATE INDEX usage_volume_1h_tenant_idx ON usage_volume_1h (tenant_id, bucket);
