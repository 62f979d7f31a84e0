-- Weir control plane: API tokens and the audit log.

-- Bearer tokens. A token's secret is shown once, at creation; only its SHA-256 is stored. A
-- token is looked up by id (the id is part of the secret's text) and verified by hash.
-- Revoking a token deletes its row, so revocation takes effect on the next request.
CREATE TABLE api_token (
    id          uuid         PRIMARY KEY,
    name        varchar(63)  NOT NULL UNIQUE,
    role        varchar(16)  NOT NULL CHECK (role IN ('admin', 'tenant-admin', 'viewer', 'node')),
    -- The tenant a tenant-admin (always) or a viewer (optionally) is bound to.
    tenant_id   uuid         REFERENCES tenant (id) ON DELETE CASCADE,
    -- The data node a node token belongs to.
    node_id     uuid         REFERENCES data_node (id) ON DELETE CASCADE,
    secret_hash bytea        NOT NULL CHECK (length(secret_hash) = 32),
    expires_at  timestamptz,
    version     bigint       NOT NULL,
    created_at  timestamptz  NOT NULL,
    updated_at  timestamptz  NOT NULL,
    CHECK (role <> 'tenant-admin' OR (tenant_id IS NOT NULL AND node_id IS NULL)),
    CHECK (role <> 'node' OR (node_id IS NOT NULL AND tenant_id IS NULL)),
    CHECK (role <> 'admin' OR (tenant_id IS NULL AND node_id IS NULL)),
    CHECK (role <> 'viewer' OR node_id IS NULL)
);
CREATE INDEX api_token_created_idx ON api_token (created_at, id);

-- Every mutating API call, written in the same transaction as the change it records.
CREATE TABLE audit_event (
    id            uuid          PRIMARY KEY,
    occurred_at   timestamptz   NOT NULL,
    -- token, jwt or system
    actor_type    varchar(16)   NOT NULL,
    -- the token id or the JWT subject
    actor_id      varchar(255)  NOT NULL,
    actor_name    varchar(255),
    action        varchar(63)   NOT NULL,
    resource_type varchar(63)   NOT NULL,
    resource_id   varchar(255)  NOT NULL,
    -- The tenant the resource belongs to, if any. No foreign key: the log outlives tenants.
    tenant_id     uuid,
    before_state  jsonb,
    after_state   jsonb
);
CREATE INDEX audit_event_time_idx ON audit_event (occurred_at, id);
CREATE INDEX audit_event_resource_idx ON audit_event (resource_type, resource_id);
CREATE INDEX audit_event_tenant_idx ON audit_event (tenant_id, occurred_at);
