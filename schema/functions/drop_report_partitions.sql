-- drop_report_partitions — retention: an app's day partitions before a day.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).

CREATE OR REPLACE FUNCTION drop_report_partitions(p_app bigint, p_before date)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  part record;
  dropped integer := 0;
BEGIN
  -- One purge at a time (a server's retention pass, `stallscope purge`),
  -- under the lock partitions are made under: a second purge would list
  -- a day the first is dropping, then find it gone (42P01) once the first
  -- commits. Taken first, the list below is read after that commit.
  PERFORM pg_advisory_xact_lock(hashtext('stallscope.partitions'));
  FOR part IN
    SELECT c.relname
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      JOIN pg_class p ON p.oid = i.inhparent
     WHERE p.relname = format('reports_a%s', p_app)
       AND c.relname ~ '^reports_a[0-9]+_[0-9]{8}$'
       AND to_date(right(c.relname, 8), 'YYYYMMDD') < p_before
  LOOP
    EXECUTE format('DROP TABLE %I', part.relname);
    dropped := dropped + 1;
  END LOOP;
  IF dropped = 0 THEN
    RETURN 0;
  END IF;
  -- The tree is of retained reports (schema/024): the dropped days' counts
  -- go with them, locked after the partitions, before the stacks. A delta
  -- of a dropped day not folded yet (a report stored on a past day) is
  -- let go first, so the fold leaves the tree alone; waiting here for a
  -- fold that holds it makes that fold's counts visible to the delete.
  UPDATE group_deltas d SET stack = NULL, stack_frames = NULL, stack_ms = NULL
   WHERE d.app_id = p_app AND d.day < p_before AND d.stack IS NOT NULL;
  DELETE FROM group_stack_days g WHERE g.app_id = p_app AND g.day < p_before;
  -- The stacks whose last day is gone (schema/041): a batch that stored a
  -- report on one of those days had its partition locked, and the DROP
  -- waited for its commit, whose raised days this statement sees; a batch
  -- still to create one waits for the lock above and stores its stacks
  -- anew (keep_stacks).
  DELETE FROM stacks s WHERE s.app_id = p_app AND s.last_day < p_before;
  RETURN dropped;
END $$;
COMMENT ON FUNCTION drop_report_partitions(bigint, date) IS
  'Retention: drops every day partition of one app older than p_before, deleting their call-tree counts (group_stack_days) and the stacks no retained day refers to (stacks.last_day); returns how many.';
