-- Quotas per owner, as run-time overrides of a kind's settings (docs/design/sharing.md): how many
-- pending jobs one owner may hold, and how many may run at once. 0 sets no limit.
ALTER TABLE service_settings ADD COLUMN max_pending_per_owner int
    CONSTRAINT service_settings_max_pending_per_owner_check
    CHECK (max_pending_per_owner BETWEEN 0 AND 1000000000);
COMMENT ON COLUMN service_settings.max_pending_per_owner IS 'Overrides jobs.services.<name>.max-pending-per-owner; 0: no limit.';
ALTER TABLE service_settings ADD COLUMN max_running_per_owner int
    CONSTRAINT service_settings_max_running_per_owner_check
    CHECK (max_running_per_owner BETWEEN 0 AND 10000);
COMMENT ON COLUMN service_settings.max_running_per_owner IS 'Overrides jobs.services.<name>.max-running-per-owner; 0: no limit.';
