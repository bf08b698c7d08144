-- The callbacks due in one shard, found by the shard's owner each tick without reading the queue:
-- a partial index that holds only callbacks waiting for a delivery. Built concurrently, outside a
-- transaction; a cut-off attempt leaves an invalid index of that name, dropped first.
DROP INDEX CONCURRENTLY IF EXISTS jobs_callback_due_idx;
CREATE INDEX CONCURRENTLY jobs_callback_due_idx ON jobs (kind, shard, callback_due)
    WHERE callback_due IS NOT NULL;
