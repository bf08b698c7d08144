-- Sharing one service between many callers (docs/design/sharing.md): a job's priority, its due
-- time, and each kind's claim order as a run-time setting. New columns with constant defaults
-- only change the catalog; no row is rewritten. The range check is added NOT VALID, so adding it
-- does not scan the table under its lock (every existing row has the default, which passes; new
-- and updated rows are checked).
ALTER TABLE jobs ADD COLUMN priority smallint NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD CONSTRAINT jobs_priority_check CHECK (priority BETWEEN -10 AND 10) NOT VALID;
COMMENT ON COLUMN jobs.priority IS 'Claim priority, -10 to 10, higher first; 0 unless the caller asked.';
ALTER TABLE jobs ADD COLUMN run_after timestamptz;
COMMENT ON COLUMN jobs.run_after IS 'The earliest start the caller asked for, or null.';
ALTER TABLE jobs ADD COLUMN delayed_until timestamptz;
COMMENT ON COLUMN jobs.delayed_until IS 'While set, the pending job is not due: the owner clears it at that time, and only then may it be claimed.';

ALTER TABLE service_settings ADD COLUMN claim_order text
    CONSTRAINT service_settings_claim_order_check CHECK (claim_order IN ('fifo', 'fair'));
COMMENT ON COLUMN service_settings.claim_order IS 'Overrides jobs.services.<name>.claim-order: fifo (enqueue order) or fair (turns between owners).';
