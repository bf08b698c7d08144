-- An owner's pending jobs of a kind, counted at enqueue against its pending quota: a partial index
-- that holds only what waits. Built concurrently, outside a transaction; a cut-off attempt leaves
-- an invalid index of that name, dropped first.
DROP INDEX CONCURRENTLY IF EXISTS jobs_pending_owner_idx;
CREATE INDEX CONCURRENTLY jobs_pending_owner_idx ON jobs (kind, owner_kind, owner_id)
    WHERE status = 'pending';
