-- The claim reads one shard's pending rows of a kind, oldest first: an index that begins with both,
-- so that a shard's claim does not walk the pending rows of the kind's other shards. Built
-- concurrently, so enqueues and claims go on while it is built (Flyway runs this script outside a
-- transaction). An earlier attempt that was cut off leaves an invalid index of that name: it is
-- dropped first. The index by kind alone stays for replicas of the release before, which claim
-- through it while a rolling update runs; a later release drops it.
DROP INDEX CONCURRENTLY IF EXISTS jobs_pending_shard_claim_idx;
CREATE INDEX CONCURRENTLY jobs_pending_shard_claim_idx ON jobs (kind, shard, uid)
    WHERE status = 'pending';
