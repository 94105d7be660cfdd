-- set_group_status — a user's PATCH of a group's status (SPEC §11.1).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Locks only the status row: it waits for no fold. The caller checked the
-- arguments (server/api/groups/h_group_patch.c); the table's checks hold
-- them too.

CREATE OR REPLACE FUNCTION set_group_status(p_app bigint, p_key1 text, p_status text,
                                            p_resolved_in text, p_until timestamptz,
                                            p_until_reports bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  was record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM groups g WHERE g.app_id = p_app AND g.level = 1
                                         AND g.key = p_key1) THEN
    RETURN false;
  END IF;
  -- Every change is an event, and only a change: the same status with the
  -- same terms again (open on an open group) writes nothing.
  SELECT s.status, s.resolved_in, s.until_at, s.until_reports INTO was
    FROM group_status s WHERE s.app_id = p_app AND s.key1 = p_key1 FOR UPDATE;
  IF coalesce(was.status, 'open') = p_status
     AND was.resolved_in IS NOT DISTINCT FROM p_resolved_in
     AND was.until_at IS NOT DISTINCT FROM p_until
     AND was.until_reports IS NOT DISTINCT FROM p_until_reports THEN
    RETURN true;
  END IF;
  INSERT INTO group_status AS s (app_id, key1, status, resolved_in, until_at, until_reports,
                                 reports_since, changed_at)
  VALUES (p_app, p_key1, p_status, p_resolved_in, p_until, p_until_reports, 0, now())
  ON CONFLICT (app_id, key1) DO UPDATE SET
    status = excluded.status, resolved_in = excluded.resolved_in,
    until_at = excluded.until_at, until_reports = excluded.until_reports,
    reports_since = 0, changed_at = excluded.changed_at;
  INSERT INTO group_events (app_id, key1, type, status, cause, version)
  VALUES (p_app, p_key1, p_status, p_status, 'user', p_resolved_in);
  RETURN true;
END $$;
COMMENT ON FUNCTION set_group_status(bigint, text, text, text, timestamptz, bigint) IS
  'Sets level-1 group P_KEY1''s status as a user asked (open, resolved in P_RESOLVED_IN, ignored until P_UNTIL or P_UNTIL_REPORTS more reports), with its event when anything changed; false when the app has no such group.';
