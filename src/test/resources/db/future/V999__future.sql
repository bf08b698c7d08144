-- A migration of a release newer than this build, as such a release would add it under the policy
-- in docs/operations.md ("Upgrades and rollbacks"): a nullable column and a table, nothing this
-- build reads or writes narrowed, renamed or dropped. Tests apply it to check that this build still
-- starts and works on that schema, as it must after `kubectl rollout undo`.
ALTER TABLE jobs ADD COLUMN future_note text;
CREATE TABLE future_things (id bigint PRIMARY KEY);
