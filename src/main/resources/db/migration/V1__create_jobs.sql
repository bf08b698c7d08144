-- The jobs table is the queue: one row per job, of every kind.
CREATE TABLE jobs (
    uid              uuid        PRIMARY KEY,
    kind             text        NOT NULL,
    status           text        NOT NULL DEFAULT 'pending',
    owner_kind       text,
    owner_id         text,
    preferred_name   text,
    payload          jsonb       NOT NULL DEFAULT '{}'::jsonb,
    result           jsonb,
    error            text,
    retry_count      int         NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL,
    started_at       timestamptz,
    completed_at     timestamptz,
    updated_at       timestamptz NOT NULL,
    duration_ms      bigint,
    last_accessed_at timestamptz,
    expires_at       timestamptz NOT NULL,
    bytes_in         bigint,
    bytes_out        bigint,
    item_count       bigint,
    CONSTRAINT jobs_status_check CHECK (status IN ('pending', 'running', 'done', 'failed')),
    CONSTRAINT jobs_retry_count_check CHECK (retry_count >= 0)
);

COMMENT ON TABLE jobs IS 'Every job of every kind; the rows in status pending are the queue.';
COMMENT ON COLUMN jobs.uid IS 'UUIDv7 job id; sorts in creation order, so ORDER BY uid is FIFO.';
COMMENT ON COLUMN jobs.kind IS 'Which JobService processes the job (zip, fork, seo, ...).';
COMMENT ON COLUMN jobs.status IS 'pending -> running -> done | failed; see jobs_status_check.';
COMMENT ON COLUMN jobs.owner_kind IS 'Kind of principal the job belongs to (user, service, ...); attribution only.';
COMMENT ON COLUMN jobs.owner_id IS 'Id of the principal the job belongs to; attribution only.';
COMMENT ON COLUMN jobs.preferred_name IS 'File name the caller asked for, used when the artifact is downloaded.';
COMMENT ON COLUMN jobs.payload IS 'Kind-specific input, as given at enqueue.';
COMMENT ON COLUMN jobs.result IS 'Kind-specific output, written when the job finishes.';
COMMENT ON COLUMN jobs.error IS 'Why the job failed: exception type and message, never a stack trace.';
COMMENT ON COLUMN jobs.retry_count IS 'How many times the job was recovered after its processor vanished.';
COMMENT ON COLUMN jobs.created_at IS 'When the job was enqueued.';
COMMENT ON COLUMN jobs.started_at IS 'When processing last started.';
COMMENT ON COLUMN jobs.completed_at IS 'When the job reached done or failed.';
COMMENT ON COLUMN jobs.updated_at IS 'When the row last changed state.';
COMMENT ON COLUMN jobs.duration_ms IS 'Processing time of the final attempt, in milliseconds.';
COMMENT ON COLUMN jobs.last_accessed_at IS 'When the result was last downloaded or otherwise touched.';
COMMENT ON COLUMN jobs.expires_at IS 'After this instant a finished job and its artifact are swept; never applied to pending or running jobs.';
COMMENT ON COLUMN jobs.bytes_in IS 'Bytes the job read, as reported by its kind.';
COMMENT ON COLUMN jobs.bytes_out IS 'Bytes the job wrote, as reported by its kind.';
COMMENT ON COLUMN jobs.item_count IS 'Items (files, pages, hits) the job handled, as reported by its kind.';

-- (kind, status) lookups; uid as the last key hands back each (kind, status) group in uid order,
-- so the claim and per-kind listings never sort, whatever the planner believes about row counts.
CREATE INDEX jobs_kind_status_idx ON jobs (kind, status, uid);
CREATE INDEX jobs_owner_idx ON jobs (owner_kind, owner_id);
-- Only finished jobs are ever swept, so only their expiry is indexed: enqueues and claims,
-- the hot writes, skip this index entirely.
CREATE INDEX jobs_expires_at_idx ON jobs (expires_at) WHERE status IN ('done', 'failed');
-- Serves the claim: the oldest pending jobs of one kind, in uid (creation) order.
CREATE INDEX jobs_pending_claim_idx ON jobs (kind, uid) WHERE status = 'pending';
