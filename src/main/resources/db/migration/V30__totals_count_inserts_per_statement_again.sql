-- V29 counted inserted jobs with a row trigger, so that an enqueue (always a pending job) fired no
-- statement trigger. It made a statement that inserts many finished jobs quadratic: each row's
-- upsert updated the same totals row again inside one transaction, and each upsert's lookup walked
-- every version of that row the transaction had written (300,000 finished rows inserted by one
-- statement, as QueryPlansTest fills its table, ran for more than eight minutes instead of a few
-- seconds). Its gain did not show in the app either (an enqueue one at a time moved within its
-- noise). The statement trigger of V9 is back, calling V26's function, unchanged: one upsert per
-- statement, whatever it inserts, and the same totals for the release before. Creating it and
-- dropping the row trigger commit together, so no insert is counted twice or missed.
CREATE TRIGGER jobs_totals_insert AFTER INSERT ON jobs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION jobs_keep_totals();
DROP TRIGGER jobs_totals_insert_finished ON jobs;
DROP FUNCTION jobs_count_inserted_finished();
