-- Deletes no longer cascade to other features' rows. Deleting a tenant or a data node revokes its
-- tokens (and removes a node's task-share override) explicitly, each removal recorded in the
-- audit log; a dependant that appears concurrently makes the delete fail on the foreign key
-- rather than vanish unrecorded.
ALTER TABLE api_token
    DROP CONSTRAINT api_token_tenant_id_fkey,
    ADD CONSTRAINT api_token_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenant (id);
ALTER TABLE api_token
    DROP CONSTRAINT api_token_node_id_fkey,
    ADD CONSTRAINT api_token_node_id_fkey FOREIGN KEY (node_id) REFERENCES data_node (id);
ALTER TABLE task_share_set
    DROP CONSTRAINT task_share_set_node_id_fkey,
    ADD CONSTRAINT task_share_set_node_id_fkey FOREIGN KEY (node_id) REFERENCES data_node (id);
CREATE INDEX api_token_tenant_idx ON api_token (tenant_id) WHERE tenant_id IS NOT NULL;
CREATE INDEX api_token_node_idx ON api_token (node_id) WHERE node_id IS NOT NULL;

-- The data nodes a tenant's volumes may be placed on: those carrying every label of the tenant's
-- node selector. Set by admins only. A tenant without one may place nothing (existing placements
-- stay; only new ones are checked).
CREATE TABLE tenant_node_selector (
    tenant_id   uuid         NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    label_key   varchar(63)  NOT NULL,
    label_value varchar(255) NOT NULL,
    PRIMARY KEY (tenant_id, label_key)
);

-- Label selectors (GET /nodes?label=, placement checks) look rows up by key and value.
CREATE INDEX data_node_label_key_value_idx ON data_node_label (label_key, label_value);
