-- 047_claimed_arrivals.sql — the arrivals of debug files become a queue
-- whose rows servers claim, instead of a log each server reads after the
-- last id it saw (issue 43, SPEC §12).
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: an id is taken when a row is inserted, not when its transaction
-- commits. An arrival inserted by a long transaction (an upload, or an
-- ingest batch recording a late arrival) could commit after a higher id
-- was read, and every reader's cursor had passed it: its reports stayed
-- pending until the next restart's sweep. And every server followed every
-- arrival, repeating each other's work. Now an arrival is claimed by one
-- server for a while (claimed_until, FOR UPDATE SKIP LOCKED), deleted when
-- its reports moved, released when some were busy; a claim that runs out
-- (its server died) is taken by another. A row is a row until it is
-- handled, whenever it committed.

ALTER TABLE debug_file_arrivals ADD COLUMN claimed_until timestamptz;
COMMENT ON COLUMN debug_file_arrivals.claimed_until IS
  'Until when a server works on this arrival (NULL: nobody has yet); another takes it after. Renewed while its reports move.';
COMMENT ON TABLE debug_file_arrivals IS
  'A debug file of app_id (NULL: a system symbol file, for every app) with this UUID was stored, or a report was stored waiting for a UUID that had a file already: a queue. A server claims rows (claimed_until; woken by NOTIFY stallscope_arrivals, at its interval, or after its listening connection came back), moves the reports waiting for the UUID and deletes the row; a row whose reports were held by another transaction is released to be looked at again.';
COMMENT ON INDEX debug_file_arrivals_pkey IS
  'Claims take the oldest unclaimed arrivals first.';
