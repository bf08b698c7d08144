-- Two mends of V31, found in review. Both replace a function body in place, which takes no lock on
-- jobs; what each function writes for the release before is unchanged.
--
-- * A transaction that inserted finished jobs and then truncated jobs still had them staged, and
--   its commit folded them into the totals: jobs counted that no longer existed. The truncate now
--   drops what is staged as well. TRUNCATE waits for every other transaction that wrote jobs, so
--   what it sees staged is its own.
-- * The fold wrote job_finished_minutes before job_totals (a data-modifying WITH that the main
--   statement does not read runs after it), the reverse of the order in which a completion's
--   trigger (V26) writes them. A fold committing while the engine finished jobs of the same kind
--   in the same minute could deadlock with it. The fold now writes job_totals first.
CREATE OR REPLACE FUNCTION jobs_clear_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM job_totals;
  DELETE FROM job_finished_minutes;
  DELETE FROM job_totals_inserted;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION job_totals_fold_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The first staged row to fire has moved every one this transaction can see.
  IF NOT EXISTS (SELECT FROM job_totals_inserted WHERE id = NEW.id) THEN
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
  RETURN NULL;
END $$;
