-- V34's jobs_complete_many locked each outcome's row FOR UPDATE (jobs_lock_running_tids) and then
-- updated it by address: two writes to every row where one does, and the drain's own two statements
-- one after the other ran 9% slower in the engine suite (28,270 and 31,507 jobs/s against 31,991
-- and 34,418 before V34, 2026-12-08). The body is now a single update that finds the rows by key
-- through the one index scan no setting here penalises, a bitmap scan of the primary key on the
-- outcomes' uids (index and TID scans are off, and the status test is written so that no index,
-- partial or not, can serve it: otherwise a plan made while a dozen jobs ran could read every
-- running row through jobs_active_shard_idx again), joined to the outcomes by a hash join (nested
-- loops and merge joins are off). The update keeps the key in its join, so a row that a concurrent
-- write (progress, a cancel, an adoption) moved is followed and re-checked, as before V34, with no
-- lock taken first. jobs_lock_running_tids is called by nothing now, in this release or the one
-- before, and is dropped. Replacing a body takes no lock on jobs.
CREATE OR REPLACE FUNCTION jobs_complete_many(p_retention bigint, p_uids uuid[], p_status text[],
                                   p_result text[], p_error text[], p_started timestamptz[],
                                   p_completed timestamptz[], p_duration bigint[],
                                   p_bytes_in bigint[], p_bytes_out bigint[], p_items bigint[],
                                   p_progress float8[], p_progress_items bigint[], p_epoch bigint)
    RETURNS TABLE (uid uuid, status text)
    LANGUAGE plpgsql VOLATILE
    SET enable_seqscan = off SET enable_indexscan = off SET enable_indexonlyscan = off
    SET enable_tidscan = off SET enable_nestloop = off SET enable_mergejoin = off
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
     WHERE j.uid = ANY (p_uids) AND j.uid = c.uid AND (j.status = 'running') IS TRUE
       AND j.epoch = p_epoch
    RETURNING j.uid, j.status;
END $$;
COMMENT ON FUNCTION jobs_complete_many(bigint, uuid[], text[], text[], text[], timestamptz[], timestamptz[], bigint[], bigint[], bigint[], bigint[], float8[], bigint[], bigint)
    IS 'Writes finished tasks'' outcomes to rows still running under the epoch, found by key through the primary key whatever the statistics say.';

DROP FUNCTION jobs_lock_running_tids(uuid[], bigint);
