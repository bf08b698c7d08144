-- The claim reads one shard's pending rows of a kind, oldest first: an index that begins with both,
-- so that a shard's claim does not walk the pending rows of the kind's other shards. Built
-- concurrently, so enqueues go on while it is built (Flyway runs this script outside a
-- transaction); the index it replaces goes the same way.
CREATE INDEX CONCURRENTLY IF NOT EXISTS jobs_pending_shard_claim_idx ON jobs (kind, shard, uid)
    WHERE status = 'pending';
DROP INDEX CONCURRENTLY IF EXISTS jobs_pending_claim_idx;
