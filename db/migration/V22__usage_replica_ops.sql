-- Replicated volumes count each client request once (issue 22). A copy reports what it applied
-- for its primary (the clients' writes, trims, write-zeroes and flushes the primary forwarded, the
-- primary's own flushes, resync steps) as replica ops and bytes, apart from the reads and writes,
-- which the primary alone counts. Rows stored before this migration, and reports of agents that
-- do not send the figures, hold 0 (their copies' work was counted as writes).
ALTER TABLE usage_volume_raw ADD COLUMN replica_ops bigint NOT NULL DEFAULT 0,
                             ADD COLUMN replica_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_volume_1m ADD COLUMN replica_ops bigint NOT NULL DEFAULT 0,
                            ADD COLUMN replica_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_volume_1h ADD COLUMN replica_ops bigint NOT NULL DEFAULT 0,
                            ADD COLUMN replica_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_tenant_1m ADD COLUMN replica_ops bigint NOT NULL DEFAULT 0,
                            ADD COLUMN replica_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_tenant_1h ADD COLUMN replica_ops bigint NOT NULL DEFAULT 0,
                            ADD COLUMN replica_bytes bigint NOT NULL DEFAULT 0;
