-- The claims' updates, and the fair claim's locking of the jobs it picked, find their rows by their
-- address (ctid) in functions where no other way to read the table is left without a penalty.
-- They looked the rows up by uid in the claim's own statement, and the planner chose how by the
-- size of jobs at planning time. A pooled session plans its statements once and keeps the plan;
-- one made while the table had no pages (a new database, a TRUNCATE) read it whole, which costs
-- nothing while it is empty, and kept doing so on every claim as a backlog grew, until autovacuum
-- first analysed the table: 20,000 rows read to claim 10. Disabling sequential scans alone is not
-- enough: the planner then reads a whole index instead, which costs as little on an empty table.
-- A row's address is exact while the claim holds its lock, and a tid scan reads just those rows.
-- None of the three is called by the release before this one; jobs_due_for_claim (V24) stays for
-- it.
--
-- jobs_due_for_claim_tids: jobs_due_for_claim's walk, returning the addresses of the rows it locked.
CREATE FUNCTION jobs_due_for_claim_tids(p_kind text, p_shard text, p_after_priority smallint,
                                        p_after_uid uuid, p_limit int)
    RETURNS SETOF tid
    LANGUAGE plpgsql VOLATILE
    SET enable_sort = off
AS $$
BEGIN
  RETURN QUERY
    SELECT j.ctid FROM jobs j
     WHERE j.kind = p_kind AND j.shard = p_shard AND j.status = 'pending'
       AND j.delayed_until IS NULL AND ((-j.priority), j.uid) > (p_after_priority, p_after_uid)
     ORDER BY (-j.priority), j.uid
     LIMIT p_limit
       FOR UPDATE SKIP LOCKED;
END $$;
COMMENT ON FUNCTION jobs_due_for_claim_tids(text, text, smallint, uuid, int)
    IS 'The claim''s due jobs in its order, locked, by row address; read through the due-claim index whatever the statistics say.';

-- jobs_start_tids: the pending jobs at p_tids, which the caller has locked, become running under
-- p_epoch at p_now; returns them as they now are.
CREATE FUNCTION jobs_start_tids(p_tids tid[], p_now timestamptz, p_epoch bigint)
    RETURNS SETOF jobs
    LANGUAGE plpgsql VOLATILE
    SET enable_seqscan = off SET enable_indexscan = off SET enable_indexonlyscan = off
    SET enable_bitmapscan = off
AS $$
BEGIN
  RETURN QUERY
    UPDATE jobs
       SET status = 'running', started_at = p_now, updated_at = p_now, epoch = p_epoch
     WHERE ctid = ANY (p_tids) AND status = 'pending'
    RETURNING jobs.*;
END $$;
COMMENT ON FUNCTION jobs_start_tids(tid[], timestamptz, bigint)
    IS 'The claim''s update: locked pending jobs become running, read by row address whatever the table''s size.';

-- jobs_lock_pending_tids: locks FOR UPDATE SKIP LOCKED the jobs at p_tids that are still pending,
-- and returns their addresses.
CREATE FUNCTION jobs_lock_pending_tids(p_tids tid[])
    RETURNS SETOF tid
    LANGUAGE plpgsql VOLATILE
    SET enable_seqscan = off SET enable_indexscan = off SET enable_indexonlyscan = off
    SET enable_bitmapscan = off
AS $$
BEGIN
  RETURN QUERY
    SELECT j.ctid FROM jobs j
     WHERE j.ctid = ANY (p_tids) AND j.status = 'pending'
       FOR UPDATE SKIP LOCKED;
END $$;
COMMENT ON FUNCTION jobs_lock_pending_tids(tid[])
    IS 'Locks the still pending jobs among a fair claim''s picks, read by row address whatever the table''s size.';
