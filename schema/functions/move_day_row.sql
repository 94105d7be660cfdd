-- move_day_row — reprocessing: one report moved between two groups' rows
-- of one level and day, in group_days or (p_dims) group_dim_days.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Reports move exactly (one less, one more). A sketch cannot remove a
-- user, so the old row's users, first and last seen are recomputed from
-- the reports kept for it: the report being moved is one of them, so its
-- day is kept, and it still has its old keys (move_report runs before
-- st_report_update_symbols), so one report of p_user at p_at is left out.
-- (received_at is whole seconds, as p_at is: two reports of one user in
-- one second of one row are interchangeable here.) The two rows are
-- locked in key order, as ingest_reports locks them. The cost is a read
-- of the old group's reports of that day (the partition's index on
-- (key1, key2, …)), per moved report: so only while the group-day holds
-- at most RECOUNT_NOW reports. A bigger one (a late dSYM for a popular
-- stall moves thousands of reports of one group-day: n² reads) is marked
-- in group_day_recounts instead, and recount_group_day recounts it once,
-- after the moves.
-- Durations (schema/021): P_DURATION (NULL when unknown) moves exactly
-- from the sum and the histogram. A max cannot be decremented: the old
-- row's is recomputed from its kept reports with its users (the report
-- left out is one of p_user at p_at with that duration, so the others
-- are exactly the kept ones), and for a big group-day it stays an upper
-- bound until recount_group_day.

CREATE OR REPLACE FUNCTION move_day_row(p_app bigint, p_level smallint, p_from_key1 text,
                                        p_from_key2 text, p_to_key text, p_day date,
                                        p_at timestamptz, p_user text, p_dims boolean,
                                        p_app_version text, p_os_version text,
                                        p_device text, p_kind text, p_duration bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  from_key text := CASE p_level WHEN 1 THEN p_from_key1 ELSE p_from_key2 END;
  step integer;
  left_users hll;
  left_first timestamptz;
  left_last timestamptz;
  left_reports bigint;
  left_max bigint;
  recount_now boolean;
  moved_in_sample boolean;
  moved_combo integer;
BEGIN
  IF p_dims THEN
    -- The dimension rows keep whitelisted users apart (schema/023).
    moved_in_sample := report_in_sample(p_app, p_day, p_from_key1,
                                        CASE p_level WHEN 2 THEN p_from_key2 END, p_user, p_at);
    -- Added by the report's ingest (schema/039).
    SELECT c.id INTO STRICT moved_combo FROM dim_combos c
     WHERE c.app_id = p_app AND c.app_version = p_app_version
       AND c.os_version = p_os_version AND c.device = p_device AND c.kind = p_kind;
  END IF;
  FOR step IN 1..2 LOOP
    IF (step = 1) = (from_key COLLATE "C" <= p_to_key COLLATE "C") THEN
      recount_now := coalesce((SELECT d.reports <= 1000 FROM group_days d
                                WHERE d.app_id = p_app AND d.level = p_level
                                  AND d.key = from_key AND d.day = p_day), true);
      IF NOT recount_now THEN
        INSERT INTO group_day_recounts (app_id, level, key, day, key1)
        VALUES (p_app, p_level, from_key, p_day, p_from_key1)
        ON CONFLICT DO NOTHING;
      END IF;
      left_users := NULL;
      left_first := NULL;
      left_last := NULL;
      IF recount_now THEN
        SELECT hll_add_agg(hll_hash_text(k.user_id), 12, 5, 1024, 0), min(k.received_at),
               max(k.received_at), count(*), max(k.duration_ms)
          INTO left_users, left_first, left_last, left_reports, left_max
          FROM (SELECT r.user_id, r.received_at, r.duration_ms,
                       row_number() OVER (PARTITION BY r.user_id = p_user
                                                       AND r.received_at = p_at
                                                       AND r.duration_ms IS NOT DISTINCT FROM
                                                           p_duration) AS nth
                  FROM reports r
                 WHERE r.app_id = p_app AND r.received_day = p_day
                   AND group_key_hash(r.key1) = group_key_hash(p_from_key1)
                   AND r.key1 = p_from_key1
                   AND (p_level = 1 OR r.key2 = p_from_key2)
                   AND (NOT p_dims OR (coalesce(r.app_version, '') = p_app_version
                                       AND coalesce(r.os_version, '') = p_os_version
                                       AND coalesce(r.device, '') = p_device
                                       AND r.kind = p_kind
                                       AND r.in_sample = moved_in_sample))) AS k
         WHERE NOT (k.user_id = p_user AND k.received_at = p_at
                    AND k.duration_ms IS NOT DISTINCT FROM p_duration AND k.nth = 1);
        left_users := coalesce(left_users, hll_empty(12, 5, 1024, 0));
      END IF;
      IF p_dims THEN
        UPDATE group_dim_days SET reports = reports - 1, users = coalesce(left_users, users),
               first_seen = coalesce(left_first, first_seen),
               last_seen = coalesce(left_last, last_seen),
               stall_ms = stall_ms - coalesce(p_duration, 0),
               max_duration_ms = CASE WHEN recount_now THEN left_max ELSE max_duration_ms END,
               duration_hist = add_hists(kept_duration_hist(duration_hist, max_duration_ms),
                                         count_durations(ARRAY[p_duration], -1)),
               duration_fine = CASE WHEN p_duration IS NULL THEN duration_fine
                                    ELSE fine_hist_add(kept_fine_hist(duration_fine,
                                                                      max_duration_ms),
                                                       fine_hist_of(ARRAY[p_duration], -1)) END
         WHERE app_id = p_app AND level = p_level AND key = from_key AND day = p_day
           AND combo = moved_combo AND in_sample = moved_in_sample AND reports > 0;
        DELETE FROM group_dim_days
         WHERE app_id = p_app AND level = p_level AND key = from_key AND day = p_day
           AND combo = moved_combo AND in_sample = moved_in_sample AND reports = 0;
      ELSE
        UPDATE group_days SET reports = reports - 1, users = coalesce(left_users, users),
               first_seen = coalesce(left_first, first_seen),
               last_seen = coalesce(left_last, last_seen),
               stall_ms = stall_ms - coalesce(p_duration, 0),
               max_duration_ms = CASE WHEN recount_now THEN left_max ELSE max_duration_ms END,
               duration_hist = add_hists(duration_hist, count_durations(ARRAY[p_duration], -1)),
               duration_fine = fine_hist_add(duration_fine, fine_hist_of(ARRAY[p_duration], -1))
         WHERE app_id = p_app AND level = p_level AND key = from_key AND day = p_day
           AND reports > 0;
        DELETE FROM group_days
         WHERE app_id = p_app AND level = p_level AND key = from_key AND day = p_day
           AND reports = 0;
      END IF;
    ELSIF p_dims THEN
      INSERT INTO group_dim_days AS d (app_id, level, key, day, combo, in_sample, reports,
                                       users, first_seen, last_seen, stall_ms,
                                       max_duration_ms, duration_hist, duration_fine)
      -- One report: its duration is the max, no fine histogram (044).
      VALUES (p_app, p_level, p_to_key, p_day, moved_combo, moved_in_sample, 1,
              hll_add(hll_empty(12, 5, 1024, 0), hll_hash_text(p_user)),
              p_at, p_at, coalesce(p_duration, 0), p_duration,
              count_durations(ARRAY[p_duration], 1), NULL)
      ON CONFLICT (app_id, level, key, combo, day, in_sample)
      DO UPDATE SET reports = d.reports + 1, users = hll_union(d.users, excluded.users),
                    first_seen = least(d.first_seen, excluded.first_seen),
                    last_seen = greatest(d.last_seen, excluded.last_seen),
                    stall_ms = d.stall_ms + excluded.stall_ms,
                    max_duration_ms = greatest(d.max_duration_ms, excluded.max_duration_ms),
                    duration_hist = kept_duration_hists_sum(d.duration_hist,
                                                            d.max_duration_ms,
                                                            excluded.duration_hist,
                                                            excluded.max_duration_ms),
                    duration_fine = fine_hist_add(
                      kept_fine_hist(d.duration_fine, d.max_duration_ms),
                      kept_fine_hist(excluded.duration_fine, excluded.max_duration_ms));
    ELSE
      INSERT INTO group_days AS d (app_id, level, key, day, reports, users, first_seen,
                                   last_seen, stall_ms, max_duration_ms, duration_hist,
                                   duration_fine)
      VALUES (p_app, p_level, p_to_key, p_day, 1,
              hll_add(hll_empty(12, 5, 1024, 0), hll_hash_text(p_user)), p_at, p_at,
              coalesce(p_duration, 0), p_duration, count_durations(ARRAY[p_duration], 1),
              fine_hist_of(ARRAY[p_duration], 1))
      ON CONFLICT (app_id, level, key, day)
      DO UPDATE SET reports = d.reports + 1, users = hll_union(d.users, excluded.users),
                    first_seen = least(d.first_seen, excluded.first_seen),
                    last_seen = greatest(d.last_seen, excluded.last_seen),
                    stall_ms = d.stall_ms + excluded.stall_ms,
                    max_duration_ms = greatest(d.max_duration_ms, excluded.max_duration_ms),
                    duration_hist = add_hists(d.duration_hist, excluded.duration_hist),
                    duration_fine = fine_hist_add(d.duration_fine, excluded.duration_fine);
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION move_day_row(bigint, smallint, text, text, text, date, timestamptz, text,
                                 boolean, text, text, text, text, bigint) IS
  'Reprocessing: one report of p_user at p_at (duration p_duration, NULL when unknown) moved from its old group''s row of one level and day to p_to_key''s, in group_days or (p_dims) group_dim_days: reports and durations exactly, the old row''s users, bounds and longest duration recomputed from its kept reports (or, for a group-day of over 1,000 reports, left to recount_group_day); the caller (move_report) holds the user''s lock and keeps the lock order.';
