-- lifecycle_after_fold — what a fold's counts decide for the groups'
-- lifecycle: ignores that ran out of reports, and spikes (SPEC §11).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Called by fold_group_deltas with its deltas' level-1 keys and days,
-- after every counter row: status rows come last in every writer's lock
-- order. Both checks start with probes by key that lock nothing, so the
-- common fold (no ignored group counting reports, no group reaching ten
-- reports on a day it has not spiked yet) writes nothing here.
-- Temporary groups (waits_for_symbols) raise no event. A spike is the
-- day's reports reaching 10 and 3 × the mean of the 7 days before (days
-- without reports count as 0); an ignored or resolved group does not
-- spike: being told about it is what ignoring or resolving turned off.

CREATE OR REPLACE FUNCTION lifecycle_after_fold(p_app bigint, p_key1s text[], p_days date[])
RETURNS void
LANGUAGE plpgsql
-- As ingest_reports: one plan, on the indexes.
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
  r record;
  now_status text;
BEGIN
  -- Nearly every app has no group ignored until a number of reports: one
  -- probe of the status index says so, before any per-key one.
  IF EXISTS (SELECT 1 FROM group_status s
              WHERE s.app_id = p_app AND s.status = 'ignored' AND s.until_reports IS NOT NULL)
  THEN
    FOR r IN
      SELECT u.k AS key1, u.n
        FROM (SELECT k, count(*) AS n FROM unnest(p_key1s) AS v(k) GROUP BY k) u
       WHERE (SELECT true FROM group_status s
               WHERE s.app_id = p_app AND s.key1 = u.k AND s.status = 'ignored'
                 AND s.until_reports IS NOT NULL)
         AND NOT (SELECT g.waits_for_symbols FROM groups g
                   WHERE g.app_id = p_app AND g.level = 1 AND g.key = u.k)
       ORDER BY u.k COLLATE "C"
    LOOP
      UPDATE group_status s
         SET reports_since = CASE WHEN s.reports_since + r.n > s.until_reports THEN 0
                                  ELSE s.reports_since + r.n END,
             status = CASE WHEN s.reports_since + r.n > s.until_reports THEN 'open'
                           ELSE 'ignored' END,
             until_at = CASE WHEN s.reports_since + r.n > s.until_reports THEN NULL
                             ELSE s.until_at END,
             until_reports = CASE WHEN s.reports_since + r.n > s.until_reports THEN NULL
                                  ELSE s.until_reports END,
             changed_at = CASE WHEN s.reports_since + r.n > s.until_reports THEN now()
                               ELSE s.changed_at END
       WHERE s.app_id = p_app AND s.key1 = r.key1 AND s.status = 'ignored'
         AND s.until_reports IS NOT NULL
      RETURNING s.status INTO now_status;
      IF now_status = 'open' THEN
        INSERT INTO group_events (app_id, key1, type, status, cause)
        VALUES (p_app, r.key1, 'open', 'open', 'report');
      END IF;
    END LOOP;
  END IF;

  -- Spikes, in stages each narrower than the last: the day's count read
  -- once per group and day this fold touched, then only those at 10 or
  -- more, then only those without the day's spike (nearly every busy
  -- group has it after its first minutes), then the week before summed.
  FOR r IN
    WITH touched AS MATERIALIZED (
      SELECT u.k AS key1, u.d AS day,
             (SELECT d.reports FROM group_days d
               WHERE d.app_id = p_app AND d.level = 1 AND d.key = u.k AND d.day = u.d)
               AS reports
        FROM (SELECT DISTINCT k, d FROM unnest(p_key1s, p_days) AS v(k, d)) u
    ), busy AS MATERIALIZED (
      SELECT t.* FROM touched t
       WHERE t.reports >= 10
         AND NOT EXISTS (SELECT 1 FROM group_events e
                          WHERE e.app_id = p_app AND e.key1 = t.key1 AND e.type = 'spike'
                            AND e.day = t.day)
    )
    SELECT b.key1, b.day, b.reports FROM busy b
     WHERE b.reports >= 3 * coalesce((SELECT sum(p.reports) FROM group_days p
                                       WHERE p.app_id = p_app AND p.level = 1
                                         AND p.key = b.key1 AND p.day >= b.day - 7
                                         AND p.day < b.day), 0) / 7.0
       AND NOT (SELECT g.waits_for_symbols FROM groups g
                 WHERE g.app_id = p_app AND g.level = 1 AND g.key = b.key1)
       AND coalesce((SELECT s.status FROM group_status s
                      WHERE s.app_id = p_app AND s.key1 = b.key1), 'open')
           IN ('open', 'regressed')
     ORDER BY b.key1 COLLATE "C", b.day
  LOOP
    INSERT INTO group_events (app_id, key1, type, status, cause, day, reports)
    VALUES (p_app, r.key1, 'spike',
            coalesce((SELECT s.status FROM group_status s
                       WHERE s.app_id = p_app AND s.key1 = r.key1), 'open'),
            'report', r.day, r.reports)
    ON CONFLICT (app_id, key1, day) WHERE type = 'spike' DO NOTHING;
  END LOOP;
END $$;
COMMENT ON FUNCTION lifecycle_after_fold(bigint, text[], date[]) IS
  'After a fold of app P_APP counted reports of level-1 groups P_KEY1S on days P_DAYS (element by element, one per report): opens, with an event, ignored groups whose until_reports ran out, and records a spike event for each group and day whose reports reach 10 and 3 × the mean of the 7 days before, once per group and day.';
