-- Issue 22: resync is the replication task's work, and its urgency grows with how long a volume
-- has been under-replicated (the data node reports that as the task's utilization: 0 when every
-- copy is in sync, 1 after five minutes out of sync). The cluster default's replication share
-- becomes dynamic: 50 (of the default 1000) until 5% of that (15 s), rising linearly to 300 at 1.
-- Only the shipped default is changed (its version moves, so its ETag does): a share an
-- administrator set is left as it is.
WITH changed AS (
    UPDATE task_share
    SET dynamic_t1 = 0.05, dynamic_t2 = 1.0, dynamic_low = 50, dynamic_high = 300, dynamic_curve = 'linear'
    WHERE set_id = '00000000-0000-4000-8000-0000000000a0'
      AND name = 'replication'
      AND share = 50
      AND dynamic_t1 IS NULL
    RETURNING set_id
)
UPDATE task_share_set SET version = version + 1, updated_at = now()
WHERE id IN (SELECT set_id FROM changed);
