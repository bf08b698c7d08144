-- The fair claim walks owner keys in byte order (COLLATE "C"), whatever the database's collation,
-- so that the database and the runner agree on whose turn is next (under en_US, 'user:alice' sorts
-- before 'user:Bob', in byte order after it). V14's fair index holds the key in the database's
-- collation, which a walk in byte order cannot use: this one holds it in byte order. Built
-- concurrently, outside a transaction, so enqueues and claims go on meanwhile; a cut-off attempt
-- leaves an invalid index of that name, dropped first. V14's jobs_fair_claim_idx stays for the
-- release before during a rolling update; the release after this one drops it.
DROP INDEX CONCURRENTLY IF EXISTS jobs_fair_claim_bytes_idx;
CREATE INDEX CONCURRENTLY jobs_fair_claim_bytes_idx
    ON jobs (kind, shard, (-priority),
             (COALESCE(owner_kind, '') || ':' || COALESCE(owner_id, '')) COLLATE "C", uid)
    WHERE status = 'pending' AND delayed_until IS NULL;
