-- Pending and running rows by shard: the queue-depth gauges per shard count them from the index
-- alone, as the per-kind gauges did from jobs_active_idx, which this index replaces (same key,
-- with the shard among the included columns, so every query that used the old one can use it).
-- Built and dropped concurrently, outside a transaction, so enqueues and claims go on meanwhile;
-- a cut-off earlier attempt leaves an invalid index of that name, dropped first.
DROP INDEX CONCURRENTLY IF EXISTS jobs_active_shard_idx;
CREATE INDEX CONCURRENTLY jobs_active_shard_idx ON jobs (status, uid) INCLUDE (kind, shard, created_at)
    WHERE status IN ('pending', 'running');
DROP INDEX CONCURRENTLY IF EXISTS jobs_active_idx;
