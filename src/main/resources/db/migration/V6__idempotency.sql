-- An owner may enqueue with an idempotency key; the same key from the same owner gets the first job.
ALTER TABLE jobs ADD COLUMN idempotency_key text;
COMMENT ON COLUMN jobs.idempotency_key IS 'Caller-chosen key; the same key from the same owner returns the first job instead of a new one.';
CREATE UNIQUE INDEX jobs_idempotency_idx ON jobs (owner_kind, owner_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
