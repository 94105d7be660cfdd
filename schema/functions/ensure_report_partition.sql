-- ensure_report_partition — the reports partition of one app and day.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Day partitions are made on demand (and a few days ahead) by the server;
-- names derive from integers only.

CREATE OR REPLACE FUNCTION ensure_report_partition(p_app bigint, p_day date)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  app_part text := format('reports_a%s', p_app);
  day_part text := format('reports_a%s_%s', p_app, to_char(p_day, 'YYYYMMDD'));
  idx record;
BEGIN
  IF to_regclass(day_part) IS NOT NULL THEN
    RETURN;
  END IF;
  -- Serialize creators: two servers may need the same partition at once.
  PERFORM pg_advisory_xact_lock(hashtext('stallscope.partitions'));
  IF to_regclass(app_part) IS NULL THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF reports FOR VALUES IN (%s) PARTITION BY RANGE (received_day)',
                   app_part, p_app);
    EXECUTE format('COMMENT ON TABLE %I IS %L', app_part,
                   format('Reports of app %s, partitioned by UTC day received.', p_app));
  END IF;
  IF to_regclass(day_part) IS NULL THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                   day_part, app_part, p_day, p_day + 1);
    EXECUTE format('COMMENT ON TABLE %I IS %L', day_part,
                   format('Reports of app %s received on %s; retention drops it whole.',
                          p_app, p_day));
  END IF;
  -- Indexes of partitions are the parent's, made by PostgreSQL: say so.
  FOR idx IN
    SELECT c.relname, p.relname AS parent
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indexrelid
      JOIN pg_inherits h ON h.inhrelid = i.indexrelid
      JOIN pg_class p ON p.oid = h.inhparent
     WHERE i.indrelid IN (to_regclass(app_part), to_regclass(day_part))
       AND obj_description(c.oid, 'pg_class') IS NULL
  LOOP
    EXECUTE format('COMMENT ON INDEX %I IS %L', idx.relname,
                   format('Partition of %s.', idx.parent));
  END LOOP;
END $$;
COMMENT ON FUNCTION ensure_report_partition(bigint, date) IS
  'Creates the reports partition of one app and UTC day if it is missing.';
