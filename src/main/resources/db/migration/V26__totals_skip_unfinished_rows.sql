-- The totals triggers (V9) count finished jobs only, but ran their upserts for every statement
-- that wrote jobs: each enqueue and each claim planned and ran two INSERT ... ON CONFLICT over
-- transition rows none of which was finished, and wrote nothing. The function now first looks
-- for a finished row among the rows the statement wrote and returns at once when there is none;
-- what it writes when there is one is unchanged, so the release before, whose writes fire the
-- same triggers, keeps the same totals. The body is replaced in place: CREATE OR REPLACE FUNCTION
-- takes no lock on jobs, where replacing the triggers would take an exclusive one.
CREATE OR REPLACE FUNCTION jobs_keep_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NOT EXISTS (SELECT FROM new_rows WHERE status IN ('done', 'failed')) THEN
      RETURN NULL;
    END IF;
    INSERT INTO job_totals AS t (kind, status, jobs, bytes_in, bytes_out, items)
    SELECT kind, status, count(*), coalesce(sum(bytes_in), 0), coalesce(sum(bytes_out), 0),
           coalesce(sum(item_count), 0)
      FROM new_rows WHERE status IN ('done', 'failed')
     GROUP BY kind, status ORDER BY kind, status
    ON CONFLICT (kind, status) DO UPDATE
       SET jobs = t.jobs + excluded.jobs, bytes_in = t.bytes_in + excluded.bytes_in,
           bytes_out = t.bytes_out + excluded.bytes_out, items = t.items + excluded.items;
    INSERT INTO job_finished_minutes AS m (kind, minute, finished)
    SELECT kind, date_trunc('minute', completed_at), count(*)
      FROM new_rows WHERE status IN ('done', 'failed') AND completed_at IS NOT NULL
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (kind, minute) DO UPDATE SET finished = m.finished + excluded.finished;
  ELSIF TG_OP = 'DELETE' THEN
    IF NOT EXISTS (SELECT FROM old_rows WHERE status IN ('done', 'failed')) THEN
      RETURN NULL;
    END IF;
    INSERT INTO job_totals AS t (kind, status, jobs, bytes_in, bytes_out, items)
    SELECT kind, status, -count(*), -coalesce(sum(bytes_in), 0), -coalesce(sum(bytes_out), 0),
           -coalesce(sum(item_count), 0)
      FROM old_rows WHERE status IN ('done', 'failed')
     GROUP BY kind, status ORDER BY kind, status
    ON CONFLICT (kind, status) DO UPDATE
       SET jobs = t.jobs + excluded.jobs, bytes_in = t.bytes_in + excluded.bytes_in,
           bytes_out = t.bytes_out + excluded.bytes_out, items = t.items + excluded.items;
  ELSE
    IF NOT EXISTS (SELECT FROM new_rows WHERE status IN ('done', 'failed'))
       AND NOT EXISTS (SELECT FROM old_rows WHERE status IN ('done', 'failed')) THEN
      RETURN NULL;
    END IF;
    INSERT INTO job_totals AS t (kind, status, jobs, bytes_in, bytes_out, items)
    SELECT kind, status, sum(n), sum(b_in), sum(b_out), sum(it)
      FROM (SELECT kind, status, 1 AS n, coalesce(bytes_in, 0) AS b_in,
                   coalesce(bytes_out, 0) AS b_out, coalesce(item_count, 0) AS it
              FROM new_rows WHERE status IN ('done', 'failed')
            UNION ALL
            SELECT kind, status, -1, -coalesce(bytes_in, 0), -coalesce(bytes_out, 0),
                   -coalesce(item_count, 0)
              FROM old_rows WHERE status IN ('done', 'failed')) AS d
     GROUP BY kind, status
    HAVING sum(n) <> 0 OR sum(b_in) <> 0 OR sum(b_out) <> 0 OR sum(it) <> 0
     ORDER BY kind, status
    ON CONFLICT (kind, status) DO UPDATE
       SET jobs = t.jobs + excluded.jobs, bytes_in = t.bytes_in + excluded.bytes_in,
           bytes_out = t.bytes_out + excluded.bytes_out, items = t.items + excluded.items;
    INSERT INTO job_finished_minutes AS m (kind, minute, finished)
    SELECT n.kind, date_trunc('minute', n.completed_at), count(*)
      FROM new_rows n JOIN old_rows o ON o.uid = n.uid
     WHERE n.status IN ('done', 'failed') AND o.status NOT IN ('done', 'failed')
       AND n.completed_at IS NOT NULL
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (kind, minute) DO UPDATE SET finished = m.finished + excluded.finished;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION jobs_keep_totals() IS 'Keeps job_totals and job_finished_minutes in step with jobs, once per statement that wrote a finished job.';
