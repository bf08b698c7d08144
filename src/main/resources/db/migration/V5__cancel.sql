-- A caller asked a running job to stop; the owner interrupts it and fails it on its next tick.
ALTER TABLE jobs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN jobs.cancel_requested IS 'A caller asked this running job to stop; the owner interrupts and fails it.';
