-- Time queued at the scheduler (issue 18: operators see where contention is). Agents report,
-- per volume, the median and 99th percentile of the time a request waited in the scheduler's
-- queue before its service began: the queued part of the latency percentiles beside them.
-- Rollups keep their ops-weighted sums, as for the latencies. Rows stored before this migration,
-- and reports of agents that do not send the figures, hold 0.
ALTER TABLE usage_volume_raw ADD COLUMN queued_p50_us bigint NOT NULL DEFAULT 0,
                             ADD COLUMN queued_p99_us bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_volume_1m ADD COLUMN queued_p50_wsum bigint NOT NULL DEFAULT 0,
                            ADD COLUMN queued_p99_wsum bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_volume_1h ADD COLUMN queued_p50_wsum bigint NOT NULL DEFAULT 0,
                            ADD COLUMN queued_p99_wsum bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_tenant_1m ADD COLUMN queued_p50_wsum bigint NOT NULL DEFAULT 0,
                            ADD COLUMN queued_p99_wsum bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_tenant_1h ADD COLUMN queued_p50_wsum bigint NOT NULL DEFAULT 0,
                            ADD COLUMN queued_p99_wsum bigint NOT NULL DEFAULT 0;
