-- The agent channel (io.weir.controlplane.push) and the per-node desired revision (io.weir.controlplane.config).
-- Everything here is shared by all control-plane replicas: any replica answers for any node.

-- The revision of each node's own latest desired config: the global revision at which a snapshot
-- with the current content was first seen, and that content's SHA-256 (of its JSON, revision left out).
-- A change that does not touch a node leaves its row alone.
CREATE TABLE node_desired_revision (
    node_id     uuid        PRIMARY KEY REFERENCES data_node (id) ON DELETE CASCADE,
    revision    bigint      NOT NULL CHECK (revision >= 0),
    fingerprint varchar(64) NOT NULL
);

-- Control-plane replicas, each stamping its heartbeat; a connection counts only while its replica's
-- heartbeat is fresh, so a replica that died does not leave its nodes shown as connected.
CREATE TABLE control_plane_replica (
    id           varchar(128) PRIMARY KEY,
    started_at   timestamptz  NOT NULL,
    heartbeat_at timestamptz  NOT NULL
);

-- The live agent connection of each node: at most one, on one replica.
CREATE TABLE agent_connection (
    node_id       uuid         PRIMARY KEY REFERENCES data_node (id) ON DELETE CASCADE,
    replica_id    varchar(128) NOT NULL,
    session_id    varchar(64)  NOT NULL,
    agent_version varchar(64),
    connected_at  timestamptz  NOT NULL
);
CREATE INDEX agent_connection_replica_idx ON agent_connection (replica_id);

-- The last status message of each node's data node (listen address, exports), as sent.
CREATE TABLE agent_report (
    node_id     uuid        PRIMARY KEY REFERENCES data_node (id) ON DELETE CASCADE,
    status      jsonb       NOT NULL,
    reported_at timestamptz NOT NULL
);
