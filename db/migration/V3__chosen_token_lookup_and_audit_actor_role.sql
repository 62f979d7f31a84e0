-- Operator-chosen tokens (WEIR_BOOTSTRAP_TOKEN) carry no id in their text, and their id is now
-- random rather than derived from the secret (a derived id, shown in the audit log, was an
-- offline guessing oracle). They are found by the SHA-256 of their text instead.
CREATE UNIQUE INDEX api_token_secret_hash_idx ON api_token (secret_hash);

-- The role of the actor of each entry, so a tenant-admin reading its tenant's entries is shown
-- the name of an admin (or node, or the system) that made a change, but not its token id.
-- Entries from before this column have NULL, and are treated like an admin's.
ALTER TABLE audit_event ADD COLUMN actor_role varchar(16);
