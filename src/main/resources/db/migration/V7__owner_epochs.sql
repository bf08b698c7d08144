-- Fencing that does not trust the lock alone: the epoch of the current holding of each owner lock,
-- written by the holder when it takes the lock. A claim (and every other write that starts work)
-- succeeds only while its epoch is the one recorded here, so an owner that was superseded while it
-- still believed itself the owner cannot start anything. The row is transactional, unlike the
-- sequence's last value, which a crash recovery may move ahead.
CREATE TABLE job_owner_epochs (
    lock_name text        PRIMARY KEY,
    epoch     bigint      NOT NULL,
    holder    text        NOT NULL,
    taken_at  timestamptz NOT NULL
);
COMMENT ON TABLE job_owner_epochs IS 'The fencing epoch of the current holding of each owner lock; claims must carry it.';
COMMENT ON COLUMN job_owner_epochs.lock_name IS 'The owner lock (jobs.lock.name): Lease name or advisory-lock name.';
COMMENT ON COLUMN job_owner_epochs.epoch IS 'Epoch of the newest holding, from jobs_owner_epoch_seq.';
COMMENT ON COLUMN job_owner_epochs.holder IS 'Identity of the replica that took it.';
COMMENT ON COLUMN job_owner_epochs.taken_at IS 'When the holder took the epoch.';
