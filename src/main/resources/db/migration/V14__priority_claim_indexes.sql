-- The claims of V13's order: due pending jobs of one shard by priority (higher first, so the
-- index holds its negation ascending, which a row comparison can resume from), then enqueue
-- order; and the same within each owner for fair turns, the owner written as one key so a
-- loose scan can step from owner to owner. Built concurrently, outside a transaction, so enqueues
-- and claims go on meanwhile; a cut-off attempt leaves an invalid index of that name, dropped
-- first. V11's claim index stays for the release before during a rolling update.
DROP INDEX CONCURRENTLY IF EXISTS jobs_due_claim_idx;
CREATE INDEX CONCURRENTLY jobs_due_claim_idx ON jobs (kind, shard, (-priority), uid)
    WHERE status = 'pending' AND delayed_until IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS jobs_fair_claim_idx;
CREATE INDEX CONCURRENTLY jobs_fair_claim_idx
    ON jobs (kind, shard, (-priority), (COALESCE(owner_kind, '') || ':' || COALESCE(owner_id, '')), uid)
    WHERE status = 'pending' AND delayed_until IS NULL;
