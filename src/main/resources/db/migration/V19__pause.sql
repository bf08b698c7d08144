-- Pausing a kind (docs/design/sharing.md): while a kind has a row here its runners claim nothing;
-- running jobs finish, due delayed jobs are released, orphans are recovered and expired jobs swept
-- as before, and enqueues are accepted. A table of its own rather than a column of
-- service_settings, so that resetting a kind's overrides (which deletes its service_settings row)
-- never resumes it. The owner reads it with the settings, every tick.
CREATE TABLE service_pauses (
    service   text        PRIMARY KEY,
    paused_at timestamptz NOT NULL,
    paused_by text,
    reason    text        CONSTRAINT service_pauses_reason_check CHECK (length(reason) <= 500)
);
COMMENT ON TABLE service_pauses IS 'Paused services (job kinds): their owners claim nothing until an admin resumes them.';
COMMENT ON COLUMN service_pauses.service IS 'Service (job kind) that is paused.';
COMMENT ON COLUMN service_pauses.paused_at IS 'When an admin paused it; a second pause keeps the first one''s time.';
COMMENT ON COLUMN service_pauses.paused_by IS 'Who paused it: the admin token''s owner, or cli:<user> for the admin CLI.';
COMMENT ON COLUMN service_pauses.reason IS 'Why, as the admin wrote it (at most 500 characters), or null.';
