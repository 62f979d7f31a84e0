-- Per-flow usage: what each volume, tenant and scheduler task got, as reported by the agents.
--
-- Three levels: raw samples (one row per volume or task per agent report), 1-minute rollups and
-- 1-hour rollups. Every level is range-partitioned by time; the service creates partitions ahead
-- (UsagePartitions) and drops whole partitions past each level's retention, never single rows.
-- Rollups are kept in step with the raw rows in the ingest transaction, so each level holds the
-- same sums. A sample belongs to the bucket that contains the start of its interval.
--
-- Latency percentiles cannot be summed, so levels keep ops-weighted sums of the samples'
-- percentiles (p50 x ops) and a point shows their ops-weighted mean; queue depth is kept as
-- depth x milliseconds, so a point shows the time-weighted mean over its step.

-- Ingested reports: the (node, sequence) key makes every report count once, however often and
-- in whatever order it arrives. Rows older than the raw retention are deleted by maintenance.
CREATE TABLE usage_report (
    node_id       uuid        NOT NULL,
    sequence      bigint      NOT NULL CHECK (sequence >= 1),
    interval_from timestamptz NOT NULL,
    interval_to   timestamptz NOT NULL,
    received_at   timestamptz NOT NULL,
    PRIMARY KEY (node_id, sequence)
);
CREATE INDEX usage_report_received_brin ON usage_report USING brin (received_at);

-- Reports an agent dropped unacknowledged (its buffer overflowed): shown with every series they
-- touch, never hidden. An agent repeats a growing gap; the row keeps its widest extent.
CREATE TABLE usage_gap (
    node_id        uuid        NOT NULL,
    first_sequence bigint      NOT NULL,
    last_sequence  bigint      NOT NULL CHECK (last_sequence >= first_sequence),
    gap_from       timestamptz NOT NULL,
    gap_to         timestamptz NOT NULL,
    recorded_at    timestamptz NOT NULL,
    PRIMARY KEY (node_id, first_sequence)
);
CREATE INDEX usage_gap_time_idx ON usage_gap (gap_from, gap_to);

-- Raw per-volume samples. tenant_id is the volume's tenant at ingest (null if the volume was
-- unknown), so a tenant's history survives the volume.
CREATE TABLE usage_volume_raw (
    ts             timestamptz      NOT NULL,
    duration_ms    integer          NOT NULL CHECK (duration_ms >= 0),
    node_id        uuid             NOT NULL,
    volume_id      uuid             NOT NULL,
    tenant_id      uuid,
    read_ops       bigint           NOT NULL,
    write_ops      bigint           NOT NULL,
    read_bytes     bigint           NOT NULL,
    write_bytes    bigint           NOT NULL,
    latency_p50_us bigint           NOT NULL,
    latency_p99_us bigint           NOT NULL,
    latency_max_us bigint           NOT NULL,
    queue_depth    double precision NOT NULL,
    throttled_ns   bigint           NOT NULL,
    rejected       bigint           NOT NULL,
    cpu_ns         bigint           NOT NULL
) PARTITION BY RANGE (ts);
CREATE INDEX usage_volume_raw_ts_brin ON usage_volume_raw USING brin (ts);
CREATE INDEX usage_volume_raw_volume_idx ON usage_volume_raw (volume_id, ts);
CREATE INDEX usage_volume_raw_tenant_idx ON usage_volume_raw (tenant_id, ts);

-- Rollups of volumes (per volume) and of tenants (per tenant, summed over its volumes), at
-- 1 minute and 1 hour. Columns: sums, except latency_max_us (a maximum).
CREATE TABLE usage_volume_1m (
    bucket         timestamptz      NOT NULL,
    volume_id      uuid             NOT NULL,
    tenant_id      uuid,
    samples        bigint           NOT NULL,
    read_ops       bigint           NOT NULL,
    write_ops      bigint           NOT NULL,
    read_bytes     bigint           NOT NULL,
    write_bytes    bigint           NOT NULL,
    latency_p50_wsum bigint         NOT NULL,
    latency_p99_wsum bigint         NOT NULL,
    latency_max_us bigint           NOT NULL,
    queue_depth_ms double precision NOT NULL,
    throttled_ns   bigint           NOT NULL,
    rejected       bigint           NOT NULL,
    cpu_ns         bigint           NOT NULL,
    PRIMARY KEY (volume_id, bucket)
) PARTITION BY RANGE (bucket);
CREATE INDEX usage_volume_1m_bucket_brin ON usage_volume_1m USING brin (bucket);

CREATE TABLE usage_volume_1h (LIKE usage_volume_1m INCLUDING DEFAULTS, PRIMARY KEY (volume_id, bucket))
    PARTITION BY RANGE (bucket);
CREATE INDEX usage_volume_1h_bucket_brin ON usage_volume_1h USING brin (bucket);

CREATE TABLE usage_tenant_1m (
    bucket         timestamptz      NOT NULL,
    tenant_id      uuid             NOT NULL,
    samples        bigint           NOT NULL,
    read_ops       bigint           NOT NULL,
    write_ops      bigint           NOT NULL,
    read_bytes     bigint           NOT NULL,
    write_bytes    bigint           NOT NULL,
    latency_p50_wsum bigint         NOT NULL,
    latency_p99_wsum bigint         NOT NULL,
    latency_max_us bigint           NOT NULL,
    queue_depth_ms double precision NOT NULL,
    throttled_ns   bigint           NOT NULL,
    rejected       bigint           NOT NULL,
    cpu_ns         bigint           NOT NULL,
    PRIMARY KEY (tenant_id, bucket)
) PARTITION BY RANGE (bucket);
CREATE INDEX usage_tenant_1m_bucket_brin ON usage_tenant_1m USING brin (bucket);

CREATE TABLE usage_tenant_1h (LIKE usage_tenant_1m INCLUDING DEFAULTS, PRIMARY KEY (tenant_id, bucket))
    PARTITION BY RANGE (bucket);
CREATE INDEX usage_tenant_1h_bucket_brin ON usage_tenant_1h USING brin (bucket);

-- Scheduler tasks of each node (foreground, gc, flush, ...): CPU time and the share in force.
CREATE TABLE usage_task_raw (
    ts          timestamptz      NOT NULL,
    duration_ms integer          NOT NULL CHECK (duration_ms >= 0),
    node_id     uuid             NOT NULL,
    task        varchar(63)      NOT NULL,
    ops         bigint           NOT NULL,
    cpu_ns      bigint           NOT NULL,
    share       double precision NOT NULL
) PARTITION BY RANGE (ts);
CREATE INDEX usage_task_raw_ts_brin ON usage_task_raw USING brin (ts);
CREATE INDEX usage_task_raw_node_idx ON usage_task_raw (node_id, ts);

-- share_ms: share x milliseconds, so a point shows the time-weighted mean share.
CREATE TABLE usage_task_1m (
    bucket      timestamptz      NOT NULL,
    node_id     uuid             NOT NULL,
    task        varchar(63)      NOT NULL,
    samples     bigint           NOT NULL,
    ops         bigint           NOT NULL,
    cpu_ns      bigint           NOT NULL,
    share_ms    double precision NOT NULL,
    duration_ms bigint           NOT NULL,
    PRIMARY KEY (node_id, bucket, task)
) PARTITION BY RANGE (bucket);
CREATE INDEX usage_task_1m_bucket_brin ON usage_task_1m USING brin (bucket);

CREATE TABLE usage_task_1h (LIKE usage_task_1m INCLUDING DEFAULTS, PRIMARY KEY (node_id, bucket, task))
    PARTITION BY RANGE (bucket);
CREATE INDEX usage_task_1h_bucket_brin ON usage_task_1h USING brin (bucket);
