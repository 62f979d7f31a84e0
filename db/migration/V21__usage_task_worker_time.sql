-- Task shares divide worker time (issue 18): a request's CPU time plus the time it held its
-- worker blocked, in a store slower than the CPU for one. Agents report each task's worker time
-- beside its CPU time, so that operators see the split the shares govern. Rows stored before this
-- migration, and reports of agents that do not send it, hold 0.
ALTER TABLE usage_task_raw ADD COLUMN worker_ns bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_task_1m ADD COLUMN worker_ns bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_task_1h ADD COLUMN worker_ns bigint NOT NULL DEFAULT 0;
