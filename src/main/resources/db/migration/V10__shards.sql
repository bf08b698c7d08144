-- Ownership in shards (docs/design/shards.md). Every job belongs to one shard, written when it is
-- enqueued; the owner of a shard's lock acts on that shard's rows alone. The shard 'all' is the one
-- lock of the unsharded default (jobs.lock.name), which every existing row belongs to. A constant
-- default adds the column without rewriting the table.
ALTER TABLE jobs ADD COLUMN shard text NOT NULL DEFAULT 'all';
COMMENT ON COLUMN jobs.shard IS 'The shard the job belongs to, fixed at enqueue: ''all'' (one lock for every kind), the kind, or the kind and a number.';

-- Which holdings were taken by a release that knows shards: such a release writes its epoch here as
-- well, a release before shards leaves the column alone, so the holding is shard-aware exactly when
-- the two are equal. A release before shards acts on every shard's rows under the lock 'all'; a
-- sharded replica competes for nothing while such a holding is live.
ALTER TABLE job_owner_epochs ADD COLUMN shard_aware_epoch bigint;
COMMENT ON COLUMN job_owner_epochs.shard_aware_epoch IS 'Equal to epoch when the holding was taken by a release that acts on its own shard''s rows only.';

-- Epochs come from one sequence for every lock, so an epoch names its holding whichever lock it is
-- of: the fence looks a holding up by its epoch alone, and a rescue asks whether a row's epoch is
-- some lock's current holding.
CREATE UNIQUE INDEX job_owner_epochs_epoch_idx ON job_owner_epochs (epoch);
