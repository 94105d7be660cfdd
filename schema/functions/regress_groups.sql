-- regress_groups — resolved groups that got a report from a version at or
-- after their fix become regressed (SPEC §11.1).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Called by ingest_reports (only when a probe without a lock found one of
-- its keys resolved) and by lifecycle_report_moved, after they have taken
-- the groups rows: status rows come last in every writer's lock order,
-- in key order. The UPDATE re-reads the row once it holds it (READ
-- COMMITTED): of two batches racing to regress one group, the second
-- finds it regressed already and writes nothing, so there is one event.

CREATE OR REPLACE FUNCTION regress_groups(p_app bigint, p_key1s text[], p_versions text[])
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  offer record;
  regressed integer := 0;
BEGIN
  -- Per key the newest version offered: if any report regresses it, that
  -- one does. A report of unknown version regresses only a group resolved
  -- without a version.
  FOR offer IN
    SELECT k AS key1,
           (array_agg(v ORDER BY app_version_key(v, NULL) DESC) FILTER (WHERE v <> ''))[1]
             AS version
      FROM unnest(p_key1s, p_versions) AS u(k, v)
     GROUP BY k ORDER BY k COLLATE "C"
  LOOP
    UPDATE group_status s
       SET status = 'regressed', resolved_in = NULL, changed_at = now(), reports_since = 0
     WHERE s.app_id = p_app AND s.key1 = offer.key1 AND s.status = 'resolved'
       AND (s.resolved_in IS NULL
            OR app_version_key(offer.version, NULL) >= app_version_key(s.resolved_in, NULL)
               AND offer.version IS NOT NULL);
    IF FOUND THEN
      INSERT INTO group_events (app_id, key1, type, status, cause, version)
      VALUES (p_app, offer.key1, 'regressed', 'regressed', 'report', offer.version);
      regressed := regressed + 1;
    END IF;
  END LOOP;
  RETURN regressed;
END $$;
COMMENT ON FUNCTION regress_groups(bigint, text[], text[]) IS
  'Marks regressed, with one event each, the resolved level-1 groups among P_KEY1S that got a report (of P_VERSIONS, element by element) from a version at or after resolved_in (any, when none); returns how many.';
