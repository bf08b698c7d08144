-- The claim's read of due jobs, in a function planned with sorting disabled. The planner chooses
-- between the pending indexes by the statistics of the moment, and a queue's statistics usually
-- say that no job waits (the table not yet analysed, or analysed while drained). Every pending
-- index then looks empty, and the cheapest by size wins. After a drained burst the due-claim index
-- still holds the dead entries of the jobs that ran, while the per-owner index, whose equal keys
-- PostgreSQL deduplicates, stays a few pages: the claim then read every pending job of the kind
-- through it and sorted them to take the first few (10,000 rows read to claim 10). Each pooled
-- session kept that plan until the next ANALYZE, so a backlog drained in time that grew with its
-- square. With sorting disabled, only the due-claim index, which returns the jobs in the claim's
-- order, is left without a penalty, whatever the statistics say.
--
-- Returns up to p_limit due jobs of a kind in one shard after the cursor (negated priority, uid; a
-- negated priority below -10 is before every job), in the claim's order, locked FOR UPDATE SKIP
-- LOCKED as the claim's own subquery was. VOLATILE, as it locks rows. The release before this one
-- does not call it.
CREATE FUNCTION jobs_due_for_claim(p_kind text, p_shard text, p_after_priority smallint,
                                   p_after_uid uuid, p_limit int)
    RETURNS SETOF uuid
    LANGUAGE plpgsql VOLATILE
    SET enable_sort = off
AS $$
BEGIN
  RETURN QUERY
    SELECT j.uid FROM jobs j
     WHERE j.kind = p_kind AND j.shard = p_shard AND j.status = 'pending'
       AND j.delayed_until IS NULL AND ((-j.priority), j.uid) > (p_after_priority, p_after_uid)
     ORDER BY (-j.priority), j.uid
     LIMIT p_limit
       FOR UPDATE SKIP LOCKED;
END $$;
COMMENT ON FUNCTION jobs_due_for_claim(text, text, smallint, uuid, int)
    IS 'The claim''s due jobs in its order, read through the due-claim index whatever the statistics say.';

