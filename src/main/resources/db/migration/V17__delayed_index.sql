-- Delayed pending jobs of one shard by due time: the owner's step that makes them due when their
-- time comes, and the earliest still ahead, read without touching the queue of due jobs. Built
-- concurrently, outside a transaction; a cut-off attempt leaves an invalid index of that name,
-- dropped first.
DROP INDEX CONCURRENTLY IF EXISTS jobs_delayed_idx;
CREATE INDEX CONCURRENTLY jobs_delayed_idx ON jobs (kind, shard, delayed_until)
    WHERE status = 'pending' AND delayed_until IS NOT NULL;
