-- move_version_day — reprocessing: one report moved between two groups'
-- group_version_days rows of one level, day and version (schema/023).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- As move_day_row does for group_days and group_dim_days: reports move
-- exactly; the old row's in-sample users are recounted from the kept
-- reports (the moved one still has its old keys; one report of p_user at
-- p_at is left out) while the group-day holds at most 1,000 reports, else
-- the group-day is marked for recount_group_day. A whitelisted user's
-- report changes no sketch. The two rows are locked in key order.

CREATE OR REPLACE FUNCTION move_version_day(p_app bigint, p_level smallint, p_from_key1 text,
                                            p_from_key2 text, p_to_key text, p_day date,
                                            p_at timestamptz, p_user text, p_app_version text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  from_key text := CASE p_level WHEN 1 THEN p_from_key1 ELSE p_from_key2 END;
  moved_in_sample boolean := report_in_sample(p_app, p_day, p_from_key1,
                                              CASE p_level WHEN 2 THEN p_from_key2 END,
                                              p_user, p_at);
  step integer;
  left_users hll;
BEGIN
  FOR step IN 1..2 LOOP
    IF (step = 1) = (from_key COLLATE "C" <= p_to_key COLLATE "C") THEN
      left_users := NULL;
      IF moved_in_sample
         AND coalesce((SELECT d.reports <= 1000 FROM group_days d
                        WHERE d.app_id = p_app AND d.level = p_level AND d.key = from_key
                          AND d.day = p_day), true) THEN
        SELECT coalesce(hll_add_agg(hll_hash_text(k.user_id), 12, 5, 1024, 0),
                        hll_empty(12, 5, 1024, 0))
          INTO left_users
          FROM (SELECT r.user_id, r.received_at,
                       row_number() OVER (PARTITION BY r.user_id = p_user
                                                       AND r.received_at = p_at) AS nth
                  FROM reports r
                 WHERE r.app_id = p_app AND r.received_day = p_day AND r.key1 = p_from_key1
                   AND (p_level = 1 OR r.key2 = p_from_key2) AND r.in_sample
                   AND coalesce(r.app_version, '') = p_app_version) AS k
         WHERE NOT (k.user_id = p_user AND k.received_at = p_at AND k.nth = 1);
      ELSIF moved_in_sample THEN
        INSERT INTO group_day_recounts (app_id, level, key, day, key1)
        VALUES (p_app, p_level, from_key, p_day, p_from_key1)
        ON CONFLICT DO NOTHING;
      END IF;
      UPDATE group_version_days SET reports = reports - 1, users = coalesce(left_users, users),
             affected = coalesce(hll_cardinality(left_users)::bigint, affected)
       WHERE app_id = p_app AND level = p_level AND key = from_key AND day = p_day
         AND app_version = p_app_version AND reports > 0;
      DELETE FROM group_version_days
       WHERE app_id = p_app AND level = p_level AND key = from_key AND day = p_day
         AND app_version = p_app_version AND reports = 0;
    ELSE
      INSERT INTO group_version_days AS v (app_id, level, key, day, app_version, reports,
                                           affected, users)
      VALUES (p_app, p_level, p_to_key, p_day, p_app_version, 1,
              CASE WHEN moved_in_sample THEN 1 ELSE 0 END,
              CASE WHEN moved_in_sample
                   THEN hll_add(hll_empty(12, 5, 1024, 0), hll_hash_text(p_user))
                   ELSE hll_empty(12, 5, 1024, 0) END)
      ON CONFLICT (app_id, level, key, day, app_version) DO UPDATE SET
        reports = v.reports + 1,
        affected = hll_cardinality(hll_union(v.users, excluded.users)),
        users = hll_union(v.users, excluded.users);
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION move_version_day(bigint, smallint, text, text, text, date, timestamptz,
                                    text, text) IS
  'Reprocessing: one report of p_user at p_at moved from its old group''s group_version_days row of one level, day and version to p_to_key''s: reports exactly, the old row''s in-sample users recomputed from its kept reports (or, for a group-day of over 1,000 reports, left to recount_group_day); called by move_report after the dimension rows, in key order.';
