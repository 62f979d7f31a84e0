-- The fixed cost of a request in the scheduler's linear cost model travels with the task shares:
-- the cluster default set and each node's override carry the bytes a read and a write cost the
-- node apart from their size (pushed to the agents in their desired config as ioCost). The
-- defaults are what a 2-core data node measured (io.weir.protocol.IoCost).
ALTER TABLE task_share_set
    ADD COLUMN read_per_io_bytes bigint NOT NULL DEFAULT 30720
        CHECK (read_per_io_bytes BETWEEN 0 AND 67108864),
    ADD COLUMN write_per_io_bytes bigint NOT NULL DEFAULT 157696
        CHECK (write_per_io_bytes BETWEEN 0 AND 67108864);
