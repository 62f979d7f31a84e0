-- Replicated volumes (issue 22): a volume keeps 1 to 3 copies, on distinct data nodes. One copy,
-- the primary, serves the export and forwards writes to the copies in sync; the epoch rises with
-- every promotion, and the sync sequence is the last change of the in-sync set that the primary
-- reported (see io.weir.protocol.ReplicationConfig).
--
-- Existing volumes keep one copy. One placed on a single node gets that node as its primary. One
-- placed on several nodes by a release that refused nothing (a "legacy" placement, whose copies
-- are unrelated) keeps replicas = 1 and no primary: it is reported with its placementWarning as
-- before, and never converted behind its owner's back.
ALTER TABLE volume
    ADD COLUMN replicas        smallint NOT NULL DEFAULT 1 CHECK (replicas BETWEEN 1 AND 3),
    ADD COLUMN epoch           bigint   NOT NULL DEFAULT 1 CHECK (epoch >= 1),
    ADD COLUMN primary_node_id uuid     REFERENCES data_node (id),
    ADD COLUMN sync_sequence   bigint   NOT NULL DEFAULT 0 CHECK (sync_sequence >= 0);

UPDATE volume v SET primary_node_id = p.node_id
  FROM volume_placement p
 WHERE p.volume_id = v.id
   AND (SELECT count(*) FROM volume_placement q WHERE q.volume_id = v.id) = 1;

-- The failover scanner reads the replicated volumes only.
CREATE INDEX volume_replicated_idx ON volume (primary_node_id) WHERE replicas > 1;

-- Each copy's state as the volume's primary last reported it. in_sync is what the nodes are told
-- (it changes only with a higher sync sequence, or by a promotion, or when a copy is added);
-- copy_state and resync_remaining_bytes follow every report of the current primary.
ALTER TABLE volume_placement
    ADD COLUMN in_sync                boolean NOT NULL DEFAULT true,
    ADD COLUMN copy_state             text    NOT NULL DEFAULT 'inSync'
        CHECK (copy_state IN ('inSync', 'resyncing', 'outOfSync')),
    ADD COLUMN resync_remaining_bytes bigint  NOT NULL DEFAULT 0 CHECK (resync_remaining_bytes >= 0);

-- host:port of the node's replication listener, as its data node last reported it; null until then.
ALTER TABLE data_node ADD COLUMN replication_address text;
