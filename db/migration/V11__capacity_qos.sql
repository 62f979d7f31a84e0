-- Capacity-based QoS (io.weir.protocol.CapacityQos): per-GiB rates, their named floors and the
-- capacity basis, on policies, volume overrides (null inherits the policy's) and tenants. The
-- absolute columns beside a rate are its cap.
ALTER TABLE qos_policy
    ADD COLUMN min_iops_per_gib          double precision CHECK (min_iops_per_gib > 0),
    ADD COLUMN max_iops_per_gib          double precision CHECK (max_iops_per_gib > 0),
    ADD COLUMN burst_iops_per_gib        double precision CHECK (burst_iops_per_gib > 0),
    ADD COLUMN max_bytes_per_sec_per_gib double precision CHECK (max_bytes_per_sec_per_gib > 0),
    ADD COLUMN min_iops_floor            bigint CHECK (min_iops_floor > 0),
    ADD COLUMN max_iops_floor            bigint CHECK (max_iops_floor > 0),
    ADD COLUMN burst_iops_floor          bigint CHECK (burst_iops_floor > 0),
    ADD COLUMN max_bytes_per_sec_floor   bigint CHECK (max_bytes_per_sec_floor > 0),
    ADD COLUMN capacity_basis            varchar(16) CHECK (capacity_basis IN ('allocated', 'used'));

ALTER TABLE volume
    ADD COLUMN min_iops_per_gib          double precision CHECK (min_iops_per_gib > 0),
    ADD COLUMN max_iops_per_gib          double precision CHECK (max_iops_per_gib > 0),
    ADD COLUMN burst_iops_per_gib        double precision CHECK (burst_iops_per_gib > 0),
    ADD COLUMN max_bytes_per_sec_per_gib double precision CHECK (max_bytes_per_sec_per_gib > 0),
    ADD COLUMN min_iops_floor            bigint CHECK (min_iops_floor > 0),
    ADD COLUMN max_iops_floor            bigint CHECK (max_iops_floor > 0),
    ADD COLUMN burst_iops_floor          bigint CHECK (burst_iops_floor > 0),
    ADD COLUMN max_bytes_per_sec_floor   bigint CHECK (max_bytes_per_sec_floor > 0),
    ADD COLUMN capacity_basis            varchar(16) CHECK (capacity_basis IN ('allocated', 'used')),
    -- What the data nodes last reported allocated in the volume's file (the largest over its
    -- nodes), and the figure the per-GiB terms scale with under capacityBasis 'used': it follows
    -- the report only past the hysteresis of CapacityQos.hysteresisBytes, so that a volume being
    -- written does not re-scale (and re-push) at every report.
    ADD COLUMN used_bytes                bigint CHECK (used_bytes >= 0),
    ADD COLUMN used_bytes_in_force       bigint NOT NULL DEFAULT 0 CHECK (used_bytes_in_force >= 0),
    ADD COLUMN used_reported_at          timestamptz,
    -- The most IOPS the volume can reserve: its effective minIops at its allocated size (used
    -- space never exceeds it), kept by the volume feature on every write and policy change, so
    -- that a reservation which scales counts against the tenant's limit as an absolute one does.
    ADD COLUMN reserved_iops             bigint CHECK (reserved_iops > 0);
UPDATE volume v SET reserved_iops = coalesce(v.min_iops, p.min_iops) FROM qos_policy p WHERE p.id = v.policy_id;

ALTER TABLE tenant
    ADD COLUMN max_iops_per_gib          double precision CHECK (max_iops_per_gib > 0),
    ADD COLUMN max_bytes_per_sec_per_gib double precision CHECK (max_bytes_per_sec_per_gib > 0),
    ADD COLUMN max_iops_floor            bigint CHECK (max_iops_floor > 0),
    ADD COLUMN max_bytes_per_sec_floor   bigint CHECK (max_bytes_per_sec_floor > 0),
    ADD COLUMN capacity_basis            varchar(16) CHECK (capacity_basis IN ('allocated', 'used'));

-- The history of each volume's used bytes as its data nodes report them (usage feature), one
-- row per change reported by a node; pruned past the raw samples' retention.
CREATE TABLE usage_volume_used (
    ts         timestamptz NOT NULL,
    node_id    uuid        NOT NULL,
    volume_id  uuid        NOT NULL,
    used_bytes bigint      NOT NULL CHECK (used_bytes >= 0),
    PRIMARY KEY (volume_id, ts, node_id)
);
CREATE INDEX usage_volume_used_ts_idx ON usage_volume_used (ts);
