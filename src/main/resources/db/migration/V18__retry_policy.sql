-- Retry policy (docs/design/sharing.md): a failure the kind calls transient sends the job back to
-- pending after a backoff, until max-attempts. attempt counts the failed attempts of the job
-- (orphan recoveries keep their own count, retry_count); attempts keeps the last 20 of them, each
-- with its error, start and end. New columns with constant defaults only change the catalog.
ALTER TABLE jobs ADD COLUMN attempt int NOT NULL DEFAULT 0;
COMMENT ON COLUMN jobs.attempt IS 'Failed attempts so far; a retryable failure is tried again while attempt < max-attempts.';
ALTER TABLE jobs ADD COLUMN attempts jsonb;
COMMENT ON COLUMN jobs.attempts IS 'The last 20 failed attempts: attempt, error, started_at, ended_at, retry_at (when tried again).';

ALTER TABLE service_settings ADD COLUMN max_attempts int
    CONSTRAINT service_settings_max_attempts_check CHECK (max_attempts BETWEEN 1 AND 100);
COMMENT ON COLUMN service_settings.max_attempts IS 'Overrides jobs.services.<name>.max-attempts: attempts of a job whose failures are retryable, 1 (no retry) to 100.';
