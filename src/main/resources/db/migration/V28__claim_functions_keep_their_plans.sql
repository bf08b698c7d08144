-- The claim's functions (V27) plan their statements once per session and keep that plan. PL/pgSQL
-- left the choice to the plan cache, which plans a statement again on each call while a plan for
-- the call's own values looks cheaper than the generic one: one element in the array of addresses
-- costs less than the ten a generic plan assumes, so every claim planned its update and its walk
-- again, about 70 us of a single job's claim. The plans cannot differ in how they read the table
-- (the walk has only the due-claim index without a penalty, the update and the lock only the tid
-- scan), so the first is kept. The release before this one does not call these functions.
ALTER FUNCTION jobs_due_for_claim_tids(text, text, smallint, uuid, int)
    SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION jobs_start_tids(tid[], timestamptz, bigint)
    SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION jobs_lock_pending_tids(tid[])
    SET plan_cache_mode = force_generic_plan;
