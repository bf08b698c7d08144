-- Two claim indexes that no release still in service reads, dropped: every enqueue paid for
-- maintaining them (an index entry each, and for the second an expression computed per row).
--
-- - jobs_pending_claim_idx (V2: kind, uid, pending rows): the claim by kind alone, which V11's
--   per-shard index replaced. Any query of this release or the one before that filters a kind's
--   pending rows by uid finds the same order in jobs_kind_status_idx (kind, status, uid).
-- - jobs_fair_claim_idx (V14: the owner key in the database's collation): V23 replaced it by the
--   owner key in byte order, which the release before this one (0.1.0, which has V23) already
--   walks. No statement of either release names the key without COLLATE "C".
--
-- Dropped concurrently, outside a transaction, so that enqueues and claims go on meanwhile.
DROP INDEX CONCURRENTLY IF EXISTS jobs_pending_claim_idx;
DROP INDEX CONCURRENTLY IF EXISTS jobs_fair_claim_idx;
