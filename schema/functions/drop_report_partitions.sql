-- drop_report_partitions — retention: an app's day partitions before a day.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).

CREATE OR REPLACE FUNCTION drop_report_partitions(p_app bigint, p_before date)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  part record;
  dropped integer := 0;
  hashes uuid[];
  counts bigint[];
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
    -- Its stacks are counted out once the day is gone (count_stacks): the
    -- drop waits for the app's writers, which count stacks after writing
    -- reports, so no one holds a count this needs.
    EXECUTE format('SELECT array_agg(h), array_agg(-n) FROM (SELECT h, count(*) AS n'
                   ' FROM %I, LATERAL (SELECT stack_at(raw_stacks || symbolized_stacks, i) AS h'
                   ' FROM generate_series(1, length(raw_stacks || symbolized_stacks) / 16) i) x'
                   ' GROUP BY h) c',
                   part.relname) INTO hashes, counts;
    EXECUTE format('DROP TABLE %I', part.relname);
    -- The tree is of retained reports: the day's counts go with them
    -- (schema/024), locked after the partition, before the stacks.
    DELETE FROM group_stack_days g
     WHERE g.app_id = p_app AND g.day = to_date(right(part.relname, 8), 'YYYYMMDD');
    PERFORM count_stacks(p_app, hashes, counts, '{}', '{}');
    dropped := dropped + 1;
  END LOOP;
  RETURN dropped;
END $$;
COMMENT ON FUNCTION drop_report_partitions(bigint, date) IS
  'Retention: drops every day partition of one app older than p_before, counting their reports'' stacks out (count_stacks) and deleting their call-tree counts (group_stack_days); returns how many.';
