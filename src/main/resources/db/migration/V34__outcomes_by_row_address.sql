-- The outcomes of finished tasks find their rows by key whatever the statistics say (issue 33).
-- JobCompleteMany joined jobs with its outcomes in the statement itself, and each pooled session
-- keeps the generic plan it made at its sixth call, from the statistics of that moment. Made while
-- they said a dozen jobs ran (a queue that was quiet at its last ANALYZE, or emptied), the plan
-- read every running row through jobs_active_shard_idx and scanned the outcomes once per row: with
-- claims ahead, 500 running rows and 450 outcomes, 37-75 ms a call instead of about 10 (the peers
-- suite's drain stayed at 6,500 jobs/s in such processes, against 35,000-43,000 in others). As V27
-- did for the claim, the rows are now locked and found by key in one function, where only a probe
-- of the primary key per outcome is left without a penalty, and updated by their address in
-- another, where only a TID scan and a hash join are; each keeps its first plan, as V28's do (the
-- plans cannot differ in how they read the table). Neither is called by the release before this
-- one.
--
-- jobs_lock_running_tids: the rows of p_uids still running under p_epoch, locked, by address.
CREATE FUNCTION jobs_lock_running_tids(p_uids uuid[], p_epoch bigint)
    RETURNS SETOF tid
    LANGUAGE plpgsql VOLATILE
    SET enable_seqscan = off SET enable_bitmapscan = off SET enable_tidscan = off
    SET enable_indexscan = on SET enable_nestloop = on SET enable_hashjoin = off
    SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  -- One probe of the primary key per job (a LATERAL with LIMIT is run once per row of the
  -- outcomes, so no plan can read jobs first); a row no longer running under the epoch is locked
  -- for the moment of the statement and left alone.
  RETURN QUERY
    SELECT l.ctid FROM unnest(p_uids) AS u(uid),
           LATERAL (SELECT j.ctid, j.status, j.epoch FROM jobs j WHERE j.uid = u.uid
                     LIMIT 1 FOR UPDATE) AS l
     WHERE l.status = 'running' AND l.epoch = p_epoch;
END $$;
COMMENT ON FUNCTION jobs_lock_running_tids(uuid[], bigint)
    IS 'Locks the rows of the given jobs still running under the epoch and returns their addresses, read by key whatever the statistics say.';

-- jobs_complete_many: JobCompleteMany's update, of the rows jobs_lock_running_tids locked; returns
-- each row written with the status written.
CREATE FUNCTION jobs_complete_many(p_retention bigint, p_uids uuid[], p_status text[],
                                   p_result text[], p_error text[], p_started timestamptz[],
                                   p_completed timestamptz[], p_duration bigint[],
                                   p_bytes_in bigint[], p_bytes_out bigint[], p_items bigint[],
                                   p_progress float8[], p_progress_items bigint[], p_epoch bigint)
    RETURNS TABLE (uid uuid, status text)
    LANGUAGE plpgsql VOLATILE
    SET enable_seqscan = off SET enable_indexscan = off SET enable_indexonlyscan = off
    SET enable_bitmapscan = off SET enable_nestloop = off SET enable_mergejoin = off
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN QUERY
    UPDATE jobs j
       SET status = c.status,
           result = c.result::jsonb,
           error = c.error,
           started_at = c.started_at,
           completed_at = c.completed_at,
           updated_at = c.completed_at,
           duration_ms = c.duration_ms,
           expires_at = c.completed_at + make_interval(secs => p_retention),
           bytes_in = c.bytes_in,
           bytes_out = c.bytes_out,
           item_count = c.item_count,
           progress = CASE WHEN c.status = 'done' AND COALESCE(c.progress, j.progress) IS NOT NULL
                           THEN 1 ELSE COALESCE(c.progress, j.progress) END,
           progress_items = COALESCE(c.progress_items, j.progress_items),
           progress_at = CASE WHEN c.progress IS NOT NULL OR c.progress_items IS NOT NULL
                                OR (c.status = 'done' AND j.progress IS NOT NULL)
                              THEN c.completed_at ELSE j.progress_at END
      FROM unnest(p_uids, p_status, p_result, p_error, p_started, p_completed, p_duration,
                  p_bytes_in, p_bytes_out, p_items, p_progress, p_progress_items)
           AS c(uid, status, result, error, started_at, completed_at, duration_ms, bytes_in,
                bytes_out, item_count, progress, progress_items)
     WHERE j.ctid = ANY (ARRAY(SELECT jobs_lock_running_tids(p_uids, p_epoch)))
       AND j.uid = c.uid AND j.status = 'running' AND j.epoch = p_epoch
    RETURNING j.uid, j.status;
END $$;
COMMENT ON FUNCTION jobs_complete_many(bigint, uuid[], text[], text[], text[], timestamptz[], timestamptz[], bigint[], bigint[], bigint[], bigint[], float8[], bigint[], bigint)
    IS 'Writes finished tasks'' outcomes to rows still running under the epoch, found by key and updated by address whatever the statistics say.';
