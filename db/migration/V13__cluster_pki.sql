-- Weir control plane: the cluster PKI (io.weir.controlplane.pki).

-- The cluster CA when the control plane generated it (first start without operator-given CA
-- files): one row, written once by whichever replica gets there first. The key is PKCS#8 PEM,
-- encrypted under weir.pki.ca-key-password when one is set. No API reads this table.
CREATE TABLE pki_authority (
    id              smallint     PRIMARY KEY CHECK (id = 1),
    certificate_pem text         NOT NULL,
    private_key_pem text         NOT NULL,
    key_encrypted   boolean      NOT NULL,
    created_at      timestamptz  NOT NULL
);

-- Certificates the cluster CA issued: tenants' client certificates (kind 'client', with their
-- tenant) and data nodes' server certificates (kind 'server', with their node). Never a key.
-- A revoked certificate keeps its row (revoked_at set) until it has expired, so that every node's
-- desired config lists it as revoked while it could still be presented.
CREATE TABLE pki_certificate (
    id              uuid          PRIMARY KEY,
    kind            varchar(8)    NOT NULL CHECK (kind IN ('client', 'server')),
    name            varchar(63)   NOT NULL,
    -- the certificate's serial number, lower-case hex without leading zeros
    serial          varchar(40)   NOT NULL UNIQUE,
    -- no foreign key: a revoked certificate is listed until it expires, also after its tenant is deleted
    tenant_id       uuid,
    node_id         uuid          REFERENCES data_node (id) ON DELETE CASCADE,
    certificate_pem text          NOT NULL,
    key_generated   boolean       NOT NULL,
    not_before      timestamptz   NOT NULL,
    not_after       timestamptz   NOT NULL,
    revoked_at      timestamptz,
    created_at      timestamptz   NOT NULL,
    CHECK (kind <> 'client' OR (tenant_id IS NOT NULL AND node_id IS NULL)),
    CHECK (kind <> 'server' OR (node_id IS NOT NULL AND tenant_id IS NULL))
);
CREATE INDEX pki_certificate_tenant_idx ON pki_certificate (tenant_id, created_at, id) WHERE kind = 'client';
CREATE INDEX pki_certificate_revoked_idx ON pki_certificate (not_after) WHERE revoked_at IS NOT NULL;
