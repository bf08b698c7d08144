-- Costs that do not grow with history. Finished jobs stay for their retention (seven days by
-- default), so the table may hold tens of millions of rows; nothing that runs on a timer or on a
-- page view may read them all. This migration adds:
--   * job_totals and job_finished_minutes, aggregates of finished jobs kept by statement-level
--     triggers, so that counts, sums and jobs finished per minute are read in O(kinds);
--   * indexes that serve each hot statement on its own: active rows by kind, finished rows by kind
--     and completion time, expired rows by kind, an owner's rows in uid order;
--   * autovacuum settings for a table that is a queue (at the end).
-- The backfill reads the table once; on a table of 10^7 finished rows it takes seconds.

-- Pending and running rows: the queue-depth gauges and the oldest pending job (index-only), and a
-- listing of every pending or running job whatever its kind, newest first.
CREATE INDEX jobs_active_idx ON jobs (status, uid) INCLUDE (kind, created_at)
    WHERE status IN ('pending', 'running');

-- Finished rows of one kind by completion time: the service cards' duration percentiles.
CREATE INDEX jobs_finished_idx ON jobs (kind, completed_at) INCLUDE (duration_ms)
    WHERE status = 'done';

-- Expired rows of one kind, oldest first: the sweep. Replaces the index on expiry alone, which made
-- each kind's sweep walk every other kind's expired rows.
CREATE INDEX jobs_expiry_idx ON jobs (kind, expires_at) WHERE status IN ('done', 'failed');
DROP INDEX jobs_expires_at_idx;

-- An owner's rows in uid order: a listing page walks it backwards from its cursor, whatever the
-- planner believes about how many rows an owner has.
CREATE INDEX jobs_owner_uid_idx ON jobs (owner_kind, owner_id, uid);
DROP INDEX jobs_owner_idx;

CREATE TABLE job_totals (
    kind      text   NOT NULL,
    status    text   NOT NULL CHECK (status IN ('done', 'failed')),
    jobs      bigint NOT NULL,
    bytes_in  bigint NOT NULL,
    bytes_out bigint NOT NULL,
    items     bigint NOT NULL,
    PRIMARY KEY (kind, status)
);
COMMENT ON TABLE job_totals IS 'Finished jobs in the jobs table by kind and status, with their sums; kept by triggers on jobs.';
COMMENT ON COLUMN job_totals.jobs IS 'Rows of this kind and status in jobs.';
COMMENT ON COLUMN job_totals.bytes_in IS 'Sum of their bytes_in.';
COMMENT ON COLUMN job_totals.bytes_out IS 'Sum of their bytes_out.';
COMMENT ON COLUMN job_totals.items IS 'Sum of their item_count.';

CREATE TABLE job_finished_minutes (
    kind     text        NOT NULL,
    minute   timestamptz NOT NULL,
    finished bigint      NOT NULL,
    PRIMARY KEY (kind, minute)
);
COMMENT ON TABLE job_finished_minutes IS 'Jobs that reached done or failed, by kind and minute of completed_at; kept by triggers on jobs, older minutes removed by the sweep.';
COMMENT ON COLUMN job_finished_minutes.minute IS 'The minute (date_trunc) the jobs finished in.';
COMMENT ON COLUMN job_finished_minutes.finished IS 'How many jobs finished in it.';

-- One function for the three statement-level triggers (a trigger with transition tables handles
-- one event). Per statement, not per row: a batch of outcomes costs one upsert per kind. Changes
-- that leave the sums as they were (a download touching a done job) write nothing. Rows are
-- upserted in key order, so two statements never wait on each other's rows crosswise.
CREATE FUNCTION jobs_keep_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
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
    INSERT INTO job_totals AS t (kind, status, jobs, bytes_in, bytes_out, items)
    SELECT kind, status, -count(*), -coalesce(sum(bytes_in), 0), -coalesce(sum(bytes_out), 0),
           -coalesce(sum(item_count), 0)
      FROM old_rows WHERE status IN ('done', 'failed')
     GROUP BY kind, status ORDER BY kind, status
    ON CONFLICT (kind, status) DO UPDATE
       SET jobs = t.jobs + excluded.jobs, bytes_in = t.bytes_in + excluded.bytes_in,
           bytes_out = t.bytes_out + excluded.bytes_out, items = t.items + excluded.items;
  ELSE
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
COMMENT ON FUNCTION jobs_keep_totals() IS 'Keeps job_totals and job_finished_minutes in step with jobs, once per statement.';

CREATE TRIGGER jobs_totals_insert AFTER INSERT ON jobs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION jobs_keep_totals();
CREATE TRIGGER jobs_totals_update AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION jobs_keep_totals();
CREATE TRIGGER jobs_totals_delete AFTER DELETE ON jobs
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION jobs_keep_totals();

CREATE FUNCTION jobs_clear_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM job_totals;
  DELETE FROM job_finished_minutes;
  RETURN NULL;
END $$;
CREATE TRIGGER jobs_totals_truncate AFTER TRUNCATE ON jobs
    FOR EACH STATEMENT EXECUTE FUNCTION jobs_clear_totals();

INSERT INTO job_totals (kind, status, jobs, bytes_in, bytes_out, items)
SELECT kind, status, count(*), coalesce(sum(bytes_in), 0), coalesce(sum(bytes_out), 0),
       coalesce(sum(item_count), 0)
  FROM jobs WHERE status IN ('done', 'failed') GROUP BY kind, status;
INSERT INTO job_finished_minutes (kind, minute, finished)
SELECT kind, date_trunc('minute', completed_at), count(*)
  FROM jobs WHERE status IN ('done', 'failed') AND completed_at >= now() - interval '2 hours'
 GROUP BY 1, 2;

-- Autovacuum for a table that is a queue. The defaults vacuum after a fifth of the table has died
-- (2,000,000 dead rows at 10^7 rows), so the pending and active partial indexes would fill with
-- the dead entries of claimed jobs long before a vacuum, and every claim would step over them.
-- A fixed threshold instead: vacuum after 10,000 dead rows (some 3,000 finished jobs; on PostgreSQL
-- 14+ a vacuum that finds few dead rows skips the index passes, so it stays cheap on a big table),
-- after 50,000 inserts (keeps the visibility map fresh, so the active-rows index stays index-only),
-- and analyse after 50,000 changes, whatever the table's size.
ALTER TABLE jobs SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 10000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 50000,
    autovacuum_analyze_scale_factor = 0,
    autovacuum_analyze_threshold = 50000
);
