-- move_facet_days — reprocessing: one report moved between two groups'
-- group_facet_days rows of one level and day, its four dimensions' values
-- (schema/025).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- As move_day_row does for group_days and group_dim_days: reports and
-- durations move exactly; the old rows' users, in-sample users, bounds and
-- longest duration are recounted from the kept reports while the group-day
-- holds at most 1,000 reports, else the group-day is marked for
-- recount_group_day. One read of the old group-day's reports serves the
-- four rows: each kept report counts in the rows whose value it shares,
-- and the one report left out is one of p_user at p_at with the moved
-- report's duration and values (so the others are exactly the kept ones).
-- The rows are locked in ingest_reports' order, (key, day, dim, value):
-- all four of the group first in key order, then the other's, under the
-- groups rows' locks that move_report holds.

CREATE OR REPLACE FUNCTION move_facet_days(p_app bigint, p_level smallint, p_from_key1 text,
                                           p_from_key2 text, p_to_key text, p_day date,
                                           p_at timestamptz, p_user text,
                                           p_app_version text, p_os_version text,
                                           p_device text, p_kind text, p_duration bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  from_key text := CASE p_level WHEN 1 THEN p_from_key1 ELSE p_from_key2 END;
  moved_in_sample boolean := report_in_sample(p_app, p_day, p_from_key1,
                                              CASE p_level WHEN 2 THEN p_from_key2 END,
                                              p_user, p_at);
  recount_now boolean := coalesce((SELECT d.reports <= 1000 FROM group_days d
                                    WHERE d.app_id = p_app AND d.level = p_level
                                      AND d.key = from_key AND d.day = p_day), true);
  dims text[];
  vals text[];
  kept_users hll[];
  kept_sample_users hll[];
  firsts timestamptz[];
  lasts timestamptz[];
  maxes bigint[];
  step integer;
  i integer;
BEGIN
  IF NOT recount_now THEN
    INSERT INTO group_day_recounts (app_id, level, key, day, key1)
    VALUES (p_app, p_level, from_key, p_day, p_from_key1)
    ON CONFLICT DO NOTHING;
  END IF;
  -- The four rows' kept users and bounds from one read of the old
  -- group-day's reports (none when it is left to recount_group_day), kept
  -- in arrays so both groups' rows can be taken in key order below.
  SELECT array_agg(x.dim ORDER BY x.dim COLLATE "C"),
         array_agg(x.value ORDER BY x.dim COLLATE "C"),
         array_agg(k.users ORDER BY x.dim COLLATE "C"),
         array_agg(k.sample_users ORDER BY x.dim COLLATE "C"),
         array_agg(k.first_seen ORDER BY x.dim COLLATE "C"),
         array_agg(k.last_seen ORDER BY x.dim COLLATE "C"),
         array_agg(k.max_duration_ms ORDER BY x.dim COLLATE "C")
    INTO dims, vals, kept_users, kept_sample_users, firsts, lasts, maxes
      FROM (VALUES ('device', p_device), ('kind', p_kind), ('os_version', p_os_version),
                   ('version', p_app_version)) AS x(dim, value)
      LEFT JOIN (
        SELECT y.dim, y.value, hll_add_agg(hll_hash_text(r.user_id), 12, 5, 1024, 0) AS users,
               hll_add_agg(hll_hash_text(r.user_id), 12, 5, 1024, 0)
                 FILTER (WHERE r.in_sample) AS sample_users,
               min(r.received_at) AS first_seen, max(r.received_at) AS last_seen,
               max(r.duration_ms) AS max_duration_ms
          FROM (SELECT r.*,
                       row_number() OVER (PARTITION BY r.user_id = p_user
                                                       AND r.received_at = p_at
                                                       AND r.duration_ms IS NOT DISTINCT FROM
                                                           p_duration
                                                       AND r.app_version = p_app_version
                                                       AND r.os_version = p_os_version
                                                       AND r.device = p_device
                                                       AND r.kind = p_kind) AS nth
                  FROM (SELECT r.user_id, r.received_at, r.duration_ms, r.in_sample,
                               coalesce(r.app_version, '') AS app_version,
                               coalesce(r.os_version, '') AS os_version,
                               coalesce(r.device, '') AS device, r.kind
                          FROM reports r
                         WHERE recount_now AND r.app_id = p_app AND r.received_day = p_day
                           AND group_key_hash(r.key1) = group_key_hash(p_from_key1)
                           AND r.key1 = p_from_key1
                           AND (p_level = 1 OR r.key2 = p_from_key2)) AS r) AS r,
               LATERAL (VALUES ('version', r.app_version), ('os_version', r.os_version),
                               ('device', r.device), ('kind', r.kind)) AS y(dim, value)
         WHERE NOT (r.user_id = p_user AND r.received_at = p_at
                    AND r.duration_ms IS NOT DISTINCT FROM p_duration
                    AND r.app_version = p_app_version AND r.os_version = p_os_version
                    AND r.device = p_device AND r.kind = p_kind AND r.nth = 1)
         GROUP BY y.dim, y.value) AS k ON k.dim = x.dim AND k.value = x.value;
  FOR step IN 1..2 LOOP
    FOR i IN 1..4 LOOP
      IF (step = 1) = (from_key COLLATE "C" <= p_to_key COLLATE "C") THEN
        UPDATE group_facet_days SET reports = reports - 1,
               users = CASE WHEN recount_now
                            THEN coalesce(kept_users[i], hll_empty(12, 5, 1024, 0)) ELSE users END,
               sample_users = CASE WHEN recount_now
                                   THEN coalesce(kept_sample_users[i], hll_empty(12, 5, 1024, 0))
                                   ELSE sample_users END,
               affected = CASE WHEN recount_now
                               THEN coalesce(hll_cardinality(kept_sample_users[i]), 0)::bigint
                               ELSE affected END,
               first_seen = coalesce(firsts[i], first_seen),
               last_seen = coalesce(lasts[i], last_seen),
               stall_ms = stall_ms - coalesce(p_duration, 0),
               max_duration_ms = CASE WHEN recount_now THEN maxes[i]
                                      ELSE max_duration_ms END,
               duration_hist = add_hists(kept_duration_hist(duration_hist, max_duration_ms),
                                         count_durations(ARRAY[p_duration], -1)),
               duration_fine = CASE WHEN p_duration IS NULL THEN duration_fine
                                    ELSE fine_hist_add(kept_fine_hist(duration_fine,
                                                                      max_duration_ms),
                                                       fine_hist_of(ARRAY[p_duration], -1)) END
         WHERE app_id = p_app AND level = p_level AND key = from_key AND day = p_day
           AND dim = dims[i] AND value = vals[i] AND reports > 0;
        DELETE FROM group_facet_days
         WHERE app_id = p_app AND level = p_level AND key = from_key AND day = p_day
           AND dim = dims[i] AND value = vals[i] AND reports = 0;
      ELSE
        INSERT INTO group_facet_days AS f (app_id, level, key, day, dim, value, reports, users,
                                           sample_users, affected, first_seen, last_seen,
                                           stall_ms, max_duration_ms, duration_hist,
                                           duration_fine)
        -- One report: its duration is the max, no fine histogram (044).
        VALUES (p_app, p_level, p_to_key, p_day, dims[i], vals[i], 1,
                hll_add(hll_empty(12, 5, 1024, 0), hll_hash_text(p_user)),
                CASE WHEN moved_in_sample
                     THEN hll_add(hll_empty(12, 5, 1024, 0), hll_hash_text(p_user))
                     ELSE hll_empty(12, 5, 1024, 0) END,
                CASE WHEN moved_in_sample THEN 1 ELSE 0 END, p_at, p_at,
                coalesce(p_duration, 0), p_duration, count_durations(ARRAY[p_duration], 1),
                NULL)
        ON CONFLICT (app_id, level, key, day, dim, value) DO UPDATE SET
          reports = f.reports + 1,
          users = hll_union(f.users, excluded.users),
          -- A row's NULL sample_users are its users (schema/029).
          affected = hll_cardinality(hll_union(coalesce(f.sample_users, f.users),
                                               excluded.sample_users)),
          sample_users = hll_union(coalesce(f.sample_users, f.users), excluded.sample_users),
          first_seen = least(f.first_seen, excluded.first_seen),
          last_seen = greatest(f.last_seen, excluded.last_seen),
          stall_ms = f.stall_ms + excluded.stall_ms,
          max_duration_ms = greatest(f.max_duration_ms, excluded.max_duration_ms),
          duration_hist = kept_duration_hists_sum(f.duration_hist, f.max_duration_ms,
                                                  excluded.duration_hist,
                                                  excluded.max_duration_ms),
          duration_fine = fine_hist_add(kept_fine_hist(f.duration_fine, f.max_duration_ms),
                                        kept_fine_hist(excluded.duration_fine,
                                                       excluded.max_duration_ms));
      END IF;
    END LOOP;
  END LOOP;
END $$;
COMMENT ON FUNCTION move_facet_days(bigint, smallint, text, text, text, date, timestamptz, text,
                                    text, text, text, text, bigint) IS
  'Reprocessing: one report of p_user at p_at (duration p_duration, NULL when unknown) moved from its old group''s group_facet_days rows of one level and day (one per dimension, its values) to p_to_key''s: reports and durations exactly, the old rows'' users, in-sample users, bounds and longest duration recomputed from the kept reports (or, for a group-day of over 1,000 reports, left to recount_group_day); called by move_report after the dimension rows.';
