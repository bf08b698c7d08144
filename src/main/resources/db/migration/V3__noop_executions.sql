-- Diagnostics: the noop kind records each execution here when its payload asks (record: true),
-- so that failover tests can see whether a job's work took effect more than once.
CREATE TABLE noop_executions (
    uid         uuid        NOT NULL,
    epoch       bigint      NOT NULL,
    executed_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE noop_executions IS 'Executions of noop jobs that asked to be recorded; diagnostics only.';
COMMENT ON COLUMN noop_executions.uid IS 'The job executed.';
COMMENT ON COLUMN noop_executions.epoch IS 'Fencing epoch the execution ran under.';
COMMENT ON COLUMN noop_executions.executed_at IS 'When the execution took effect.';
CREATE INDEX noop_executions_uid_idx ON noop_executions (uid);
