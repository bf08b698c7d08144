-- V31's fold asked, for each staged row's deferred event, whether that row was still staged (a
-- lookup by primary key), so that only the first event of a transaction moved anything. The
-- lookup was planned once per session and kept: a session that had folded a few single rows kept
-- a plan that read the whole staging table, and an insert of many finished jobs in that session
-- then read every staged row once per row (20,000 rows: 4.7 s, against 1.3 s for 10,000; a
-- QueryPlansTest fill of 300,000 ran for more than twenty minutes in a full test run).
--
-- The fold now notes, for the rest of its transaction only (set_config with is_local, undone with
-- a rolled-back savepoint like the rows it moved), the last staged id this session drew from the
-- identity's sequence: every row the transaction staged so far has it or a lower one, and the
-- fold has moved them all (or a truncate has dropped them). An event at or below it returns at
-- once, without a query. Rows staged later in the same transaction draw higher ids and fold at
-- their own events. What it writes, and in which order (job_totals, then
-- job_finished_minutes, V32), is unchanged. Replacing the body takes no lock on jobs.
CREATE OR REPLACE FUNCTION job_totals_fold_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id <= NULLIF(current_setting('jobs.totals_folded_through', true), '')::bigint THEN
    RETURN NULL;
  END IF;
  -- job_totals first, then job_finished_minutes (the WITH that nothing reads runs last), as V26.
  WITH moved AS (
         DELETE FROM job_totals_inserted
         RETURNING kind, status, bytes_in, bytes_out, item_count, completed_at),
       minutes AS (
         INSERT INTO job_finished_minutes AS m (kind, minute, finished)
         SELECT kind, date_trunc('minute', completed_at), count(*)
           FROM moved WHERE completed_at IS NOT NULL
          GROUP BY 1, 2 ORDER BY 1, 2
         ON CONFLICT (kind, minute) DO UPDATE SET finished = m.finished + excluded.finished)
  INSERT INTO job_totals AS t (kind, status, jobs, bytes_in, bytes_out, items)
  SELECT kind, status, count(*), coalesce(sum(bytes_in), 0), coalesce(sum(bytes_out), 0),
         coalesce(sum(item_count), 0)
    FROM moved
   GROUP BY kind, status ORDER BY kind, status
  ON CONFLICT (kind, status) DO UPDATE
     SET jobs = t.jobs + excluded.jobs, bytes_in = t.bytes_in + excluded.bytes_in,
         bytes_out = t.bytes_out + excluded.bytes_out, items = t.items + excluded.items;
  PERFORM set_config('jobs.totals_folded_through',
                     currval(pg_get_serial_sequence('job_totals_inserted', 'id'))::text, true);
  RETURN NULL;
END $$;
