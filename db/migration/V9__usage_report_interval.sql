-- The usage reporting interval travels with the task shares: the cluster default set and each
-- node's override carry the seconds between the usage reports of the nodes that enforce them,
-- pushed to the agents in their desired config (usageReportIntervalSeconds).
ALTER TABLE task_share_set
    ADD COLUMN usage_report_interval_seconds integer NOT NULL DEFAULT 10
        CHECK (usage_report_interval_seconds BETWEEN 1 AND 3600);
