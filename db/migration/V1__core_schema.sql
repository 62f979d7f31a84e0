-- Weir control plane: core configuration schema.
--
-- Everything a data node enforces lives here: tenants, QoS policies, volumes and their
-- placement on data nodes, and task CPU shares. Every change to what a node enforces bumps the
-- single global revision in config_revision, in the same transaction.

-- One row, updated with UPDATE ... RETURNING: the row lock serialises writers, so revisions are
-- committed in order and never reused.
CREATE TABLE config_revision (
    id       smallint PRIMARY KEY CHECK (id = 1),
    revision bigint   NOT NULL CHECK (revision >= 0)
);
INSERT INTO config_revision (id, revision) VALUES (1, 0);

CREATE TABLE tenant (
    id                uuid         PRIMARY KEY,
    name              varchar(63)  NOT NULL UNIQUE,
    display_name      varchar(255),
    weight            integer      NOT NULL CHECK (weight BETWEEN 1 AND 10000),
    max_iops          bigint       CHECK (max_iops > 0),
    max_bytes_per_sec bigint       CHECK (max_bytes_per_sec > 0),
    version           bigint       NOT NULL,
    created_at        timestamptz  NOT NULL,
    updated_at        timestamptz  NOT NULL
);
CREATE INDEX tenant_created_idx ON tenant (created_at, id);

CREATE TABLE qos_policy (
    id                  uuid          PRIMARY KEY,
    name                varchar(63)   NOT NULL UNIQUE,
    description         varchar(1024),
    built_in            boolean       NOT NULL DEFAULT false,
    weight              integer       NOT NULL CHECK (weight BETWEEN 1 AND 10000),
    min_iops            bigint        CHECK (min_iops > 0),
    max_iops            bigint        CHECK (max_iops > 0),
    burst_iops          bigint        CHECK (burst_iops > 0),
    max_bytes_per_sec   bigint        CHECK (max_bytes_per_sec > 0),
    burst_bytes_per_sec bigint        CHECK (burst_bytes_per_sec > 0),
    min_charge_bytes    integer       NOT NULL CHECK (min_charge_bytes BETWEEN 0 AND 16777216),
    version             bigint        NOT NULL,
    created_at          timestamptz   NOT NULL,
    updated_at          timestamptz   NOT NULL
);
CREATE INDEX qos_policy_created_idx ON qos_policy (created_at, id);

-- Three editable built-in policies.
INSERT INTO qos_policy (id, name, description, built_in, weight, min_iops, max_iops, burst_iops,
                        max_bytes_per_sec, burst_bytes_per_sec, min_charge_bytes, version, created_at, updated_at)
VALUES
    ('00000000-0000-4000-8000-000000000001', 'best-effort',
     'Low weight, no reservation and no limits: takes what is left.',
     true, 25, NULL, NULL, NULL, NULL, NULL, 4096, 0, now(), now()),
    ('00000000-0000-4000-8000-000000000002', 'standard',
     'The default: ordinary weight, capped at 5000 IOPS (bursting to 10000) and 200 MiB/s (burst 400 MiB/s).',
     true, 100, NULL, 5000, 10000, 209715200, 419430400, 4096, 0, now(), now()),
    ('00000000-0000-4000-8000-000000000003', 'premium',
     'High weight with a 1000 IOPS reservation, capped at 20000 IOPS (bursting to 40000).',
     true, 400, 1000, 20000, 40000, NULL, NULL, 4096, 0, now(), now());

CREATE TABLE data_node (
    id               uuid         PRIMARY KEY,
    name             varchar(63)  NOT NULL UNIQUE,
    address          varchar(255),
    applied_revision bigint,
    last_ack_at      timestamptz,
    last_error       varchar(2048),
    version          bigint       NOT NULL,
    created_at       timestamptz  NOT NULL,
    updated_at       timestamptz  NOT NULL
);
CREATE INDEX data_node_created_idx ON data_node (created_at, id);

CREATE TABLE data_node_label (
    node_id     uuid         NOT NULL REFERENCES data_node (id) ON DELETE CASCADE,
    label_key   varchar(63)  NOT NULL,
    label_value varchar(255) NOT NULL,
    PRIMARY KEY (node_id, label_key)
);

CREATE TABLE volume (
    id                  uuid         PRIMARY KEY,
    tenant_id           uuid         NOT NULL REFERENCES tenant (id),
    name                varchar(63)  NOT NULL,
    size_bytes          bigint       NOT NULL CHECK (size_bytes > 0),
    policy_id           uuid         NOT NULL REFERENCES qos_policy (id),
    -- Per-volume overrides of the policy; NULL means "inherit from the policy".
    weight              integer      CHECK (weight BETWEEN 1 AND 10000),
    min_iops            bigint       CHECK (min_iops > 0),
    max_iops            bigint       CHECK (max_iops > 0),
    burst_iops          bigint       CHECK (burst_iops > 0),
    max_bytes_per_sec   bigint       CHECK (max_bytes_per_sec > 0),
    burst_bytes_per_sec bigint       CHECK (burst_bytes_per_sec > 0),
    version             bigint       NOT NULL,
    created_at          timestamptz  NOT NULL,
    updated_at          timestamptz  NOT NULL,
    UNIQUE (tenant_id, name)
);
CREATE INDEX volume_created_idx ON volume (created_at, id);
CREATE INDEX volume_policy_idx ON volume (policy_id);

-- Placement: the data nodes that serve a volume.
CREATE TABLE volume_placement (
    volume_id uuid NOT NULL REFERENCES volume (id) ON DELETE CASCADE,
    node_id   uuid NOT NULL REFERENCES data_node (id),
    PRIMARY KEY (volume_id, node_id)
);
CREATE INDEX volume_placement_node_idx ON volume_placement (node_id);

-- Task CPU shares: one set for the cluster default (node_id NULL) and at most one override set
-- per data node.
CREATE TABLE task_share_set (
    id         uuid        PRIMARY KEY,
    node_id    uuid        UNIQUE REFERENCES data_node (id) ON DELETE CASCADE,
    version    bigint      NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX task_share_set_one_default ON task_share_set ((node_id IS NULL)) WHERE node_id IS NULL;

CREATE TABLE task_share (
    set_id      uuid             NOT NULL REFERENCES task_share_set (id) ON DELETE CASCADE,
    position    integer          NOT NULL,
    name        varchar(63)      NOT NULL,
    share       integer          NOT NULL CHECK (share BETWEEN 1 AND 10000),
    dynamic_t1  double precision,
    dynamic_t2  double precision,
    dynamic_low  integer,
    dynamic_high integer,
    dynamic_curve varchar(16)    CHECK (dynamic_curve IN ('linear', 'exponential')),
    PRIMARY KEY (set_id, position),
    UNIQUE (set_id, name)
);

INSERT INTO task_share_set (id, node_id, version, updated_at)
VALUES ('00000000-0000-4000-8000-0000000000a0', NULL, 0, now());
INSERT INTO task_share (set_id, position, name, share, dynamic_t1, dynamic_t2, dynamic_low, dynamic_high, dynamic_curve)
VALUES
    ('00000000-0000-4000-8000-0000000000a0', 0, 'foreground', 700, NULL, NULL, NULL, NULL, NULL),
    ('00000000-0000-4000-8000-0000000000a0', 1, 'gc', 100, NULL, NULL, NULL, NULL, NULL),
    ('00000000-0000-4000-8000-0000000000a0', 2, 'flush', 100, 0.5, 0.9, 50, 500, 'linear'),
    ('00000000-0000-4000-8000-0000000000a0', 3, 'replication', 50, NULL, NULL, NULL, NULL, NULL),
    ('00000000-0000-4000-8000-0000000000a0', 4, 'scrub', 50, NULL, NULL, NULL, NULL, NULL);
