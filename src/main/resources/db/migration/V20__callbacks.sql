-- Completion callbacks (docs/design/sharing.md): the URL a caller asked to be told at, the state of
-- the delivery (attempts, last answer, delivered or given up) and when the next delivery is due.
-- New columns without defaults only change the catalog.
ALTER TABLE jobs ADD COLUMN callback_url text;
COMMENT ON COLUMN jobs.callback_url IS 'Where the status view is POSTed once the job is done or failed, or null.';
ALTER TABLE jobs ADD COLUMN callback jsonb;
COMMENT ON COLUMN jobs.callback IS 'The delivery so far: attempts, last_status, last_error, last_attempt_at, delivered_at, gave_up_at.';
ALTER TABLE jobs ADD COLUMN callback_due timestamptz;
COMMENT ON COLUMN jobs.callback_due IS 'When the callback is to be delivered next; null once delivered, given up, or before the job ends.';

-- Every path that ends a job (an outcome, a cancel, a recovery that gives up, a bulk action) makes
-- its callback due, here in one place rather than in each statement. The WHEN clause keeps rows
-- without a callback from calling the function at all.
CREATE FUNCTION jobs_callback_due() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.callback_due := COALESCE(NEW.completed_at, NEW.updated_at, now());
  NEW.callback := jsonb_build_object('attempts', 0);
  RETURN NEW;
END
$$;

CREATE TRIGGER jobs_callback_due BEFORE UPDATE OF status ON jobs
  FOR EACH ROW
  WHEN (NEW.callback_url IS NOT NULL AND NEW.status IN ('done', 'failed')
        AND OLD.status NOT IN ('done', 'failed'))
  EXECUTE FUNCTION jobs_callback_due();
