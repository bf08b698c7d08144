-- Progress a running job reports, written by the owner at most about once a second per job.
ALTER TABLE jobs ADD COLUMN progress double precision CHECK (progress BETWEEN 0 AND 1);
ALTER TABLE jobs ADD COLUMN progress_items bigint CHECK (progress_items >= 0);
ALTER TABLE jobs ADD COLUMN progress_at timestamptz;
COMMENT ON COLUMN jobs.progress IS 'Fraction of the work done, 0 to 1, as the running job last reported it.';
COMMENT ON COLUMN jobs.progress_items IS 'Items done so far, as the running job last reported it.';
COMMENT ON COLUMN jobs.progress_at IS 'When the reported progress was written.';
