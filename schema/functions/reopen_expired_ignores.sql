-- reopen_expired_ignores — groups ignored until a time that has passed
-- are open again (SPEC §11.1).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Run by every server's fold loop each second, for all apps: the partial
-- index makes the common call one empty probe. Two servers at once
-- reopen a group once (the UPDATE re-reads a row it waited for).

CREATE OR REPLACE FUNCTION reopen_expired_ignores()
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  reopened integer;
BEGIN
  WITH due AS (
    SELECT s.app_id, s.key1 FROM group_status s
     WHERE s.status = 'ignored' AND s.until_at IS NOT NULL AND s.until_at <= now()
     ORDER BY s.app_id, s.key1 COLLATE "C"
       FOR UPDATE SKIP LOCKED
  ), opened AS (
    UPDATE group_status s
       SET status = 'open', until_at = NULL, until_reports = NULL, reports_since = 0,
           changed_at = now()
      FROM due
     WHERE s.app_id = due.app_id AND s.key1 = due.key1
    RETURNING s.app_id, s.key1
  ), events AS (
    INSERT INTO group_events (app_id, key1, type, status, cause)
    SELECT app_id, key1, 'open', 'open', 'until' FROM opened
  )
  SELECT count(*) INTO reopened FROM opened;
  RETURN reopened;
END $$;
COMMENT ON FUNCTION reopen_expired_ignores() IS
  'Opens again, with an event each, every group of every app ignored until a time now past; returns how many.';
