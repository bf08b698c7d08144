-- The job engine: fencing epochs and run-time settings.

ALTER TABLE jobs ADD COLUMN epoch bigint;
COMMENT ON COLUMN jobs.epoch IS 'Fencing epoch of the owner that claimed the job; writes to a running row must match it.';

-- Epochs for owners that have no external counter (the single-process and advisory-lock owners).
CREATE SEQUENCE jobs_owner_epoch_seq;
COMMENT ON SEQUENCE jobs_owner_epoch_seq IS 'Source of fencing epochs: each new owner takes the next value.';

-- Settings an admin changed at run time; a null column keeps the configured value.
CREATE TABLE service_settings (
    service             text        PRIMARY KEY,
    retention_seconds   bigint      CHECK (retention_seconds >= 1),
    max_concurrent      int         CHECK (max_concurrent BETWEEN 1 AND 256),
    job_timeout_seconds bigint      CHECK (job_timeout_seconds >= 1),
    max_retries         int         CHECK (max_retries BETWEEN 0 AND 100),
    updated_at          timestamptz NOT NULL
);
COMMENT ON TABLE service_settings IS 'Run-time overrides of a service''s configured settings; the owner reads them every tick.';
COMMENT ON COLUMN service_settings.service IS 'Service (job kind) the overrides apply to.';
COMMENT ON COLUMN service_settings.retention_seconds IS 'Overrides jobs.services.<name>.retention-seconds.';
COMMENT ON COLUMN service_settings.max_concurrent IS 'Overrides jobs.services.<name>.max-concurrent.';
COMMENT ON COLUMN service_settings.job_timeout_seconds IS 'Overrides jobs.services.<name>.job-timeout-seconds.';
COMMENT ON COLUMN service_settings.max_retries IS 'Overrides jobs.services.<name>.max-retries.';
COMMENT ON COLUMN service_settings.updated_at IS 'When an admin last changed the overrides.';

-- Orphan recovery reads the running rows of one kind; (kind, status) already serves it.
