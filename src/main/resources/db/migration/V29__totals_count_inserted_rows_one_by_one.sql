-- The totals of finished jobs (V9) were kept for inserts by a statement trigger with a transition
-- table. Since V26 it returns at once when no inserted row is finished, but PostgreSQL still
-- collected the new rows, queued the trigger and called the function for every enqueue: about an
-- eighth of a one-job enqueue's time in the database (pgbench, the engine's insert statement,
-- 2026-12-07). Jobs are only ever inserted pending by this service and the release before it, so
-- the insert's count moves to a row trigger whose WHEN clause the executor checks for each row
-- without calling anything: a pending job costs one comparison. A row inserted finished (a restore,
-- a hand-made row) is still counted, one upsert per row. The update, delete and truncate triggers
-- stay as they were: the engine finishes jobs many at once, which one statement's upsert counts
-- best. Creating the new trigger and dropping the old one commit together, so no insert is counted
-- twice or missed; both take a short lock on jobs, as V20's trigger did.
CREATE FUNCTION jobs_count_inserted_finished() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO job_totals AS t (kind, status, jobs, bytes_in, bytes_out, items)
  VALUES (NEW.kind, NEW.status, 1, coalesce(NEW.bytes_in, 0), coalesce(NEW.bytes_out, 0),
          coalesce(NEW.item_count, 0))
  ON CONFLICT (kind, status) DO UPDATE
     SET jobs = t.jobs + excluded.jobs, bytes_in = t.bytes_in + excluded.bytes_in,
         bytes_out = t.bytes_out + excluded.bytes_out, items = t.items + excluded.items;
  IF NEW.completed_at IS NOT NULL THEN
    INSERT INTO job_finished_minutes AS m (kind, minute, finished)
    VALUES (NEW.kind, date_trunc('minute', NEW.completed_at), 1)
    ON CONFLICT (kind, minute) DO UPDATE SET finished = m.finished + excluded.finished;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION jobs_count_inserted_finished() IS
    'Counts a job inserted finished in job_totals and job_finished_minutes.';

CREATE TRIGGER jobs_totals_insert_finished AFTER INSERT ON jobs
    FOR EACH ROW WHEN (NEW.status IN ('done', 'failed'))
    EXECUTE FUNCTION jobs_count_inserted_finished();
DROP TRIGGER jobs_totals_insert ON jobs;
