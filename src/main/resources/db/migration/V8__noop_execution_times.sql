-- Diagnostics for fault tests: each recorded noop execution gets a row when it starts and its end
-- when it returns, whether or not its effect landed, so two executions of one job that overlapped in
-- time can be seen. executed_at stays the time the effect landed (null when it did not).
ALTER TABLE noop_executions ADD COLUMN started_at timestamptz;
ALTER TABLE noop_executions ADD COLUMN ended_at timestamptz;
ALTER TABLE noop_executions ADD COLUMN replica text;
ALTER TABLE noop_executions ALTER COLUMN executed_at DROP NOT NULL;
ALTER TABLE noop_executions ALTER COLUMN executed_at DROP DEFAULT;
ALTER TABLE noop_executions ADD COLUMN id uuid;
CREATE UNIQUE INDEX noop_executions_id_idx ON noop_executions (id);
COMMENT ON COLUMN noop_executions.started_at IS 'When the execution began, on the executing replica''s clock.';
COMMENT ON COLUMN noop_executions.ended_at IS 'When the execution returned, null while it runs (or if the replica died).';
COMMENT ON COLUMN noop_executions.replica IS 'Identity of the replica that executed it.';
COMMENT ON COLUMN noop_executions.executed_at IS 'When the execution took effect; null when it was fenced off or interrupted.';
COMMENT ON COLUMN noop_executions.id IS 'Identifies one execution, chosen by the executing replica, so that its end can be written even when the answer to its start was lost.';
