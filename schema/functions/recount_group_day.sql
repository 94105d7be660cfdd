-- recount_group_day — reprocessing: one group-day marked in
-- group_day_recounts gets its users, first and last seen and its longest
-- duration (schema/021) recounted from the reports kept for it, once
-- however many reports moved out of it.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The mark is locked first (a move's insert of it never waits on that
-- lock: ON CONFLICT DO NOTHING), then the group's row, as every writer of
-- its day rows locks it first (ingest_reports, move_report): none of them
-- runs meanwhile, and a move that committed before is seen, each
-- statement reading the database as it is then. A move after the recount
-- marks the day again.

CREATE OR REPLACE FUNCTION recount_group_day()
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  m record;
BEGIN
  -- One mark per server at a time: another server recounting at once
  -- takes the next (SPEC §12: background work is done once).
  SELECT * INTO m FROM group_day_recounts
   ORDER BY app_id, level, key COLLATE "C", day LIMIT 1
   FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM 1 FROM groups
    WHERE app_id = m.app_id AND level = m.level AND key = m.key FOR UPDATE;
  UPDATE group_days d SET users = coalesce(x.users, hll_empty(12, 5, 1024, 0)),
         first_seen = coalesce(x.first_seen, d.first_seen),
         last_seen = coalesce(x.last_seen, d.last_seen), max_duration_ms = x.max_duration_ms
    FROM (SELECT hll_add_agg(hll_hash_text(r.user_id), 12, 5, 1024, 0) AS users,
                 min(r.received_at) AS first_seen, max(r.received_at) AS last_seen,
                 max(r.duration_ms) AS max_duration_ms
            FROM reports r
           WHERE r.app_id = m.app_id AND r.received_day = m.day
             AND group_key_hash(r.key1) = group_key_hash(m.key1) AND r.key1 = m.key1
             AND (m.level = 1 OR r.key2 = m.key)) AS x
   WHERE d.app_id = m.app_id AND d.level = m.level AND d.key = m.key AND d.day = m.day
     -- No report left: retention dropped the day since it was marked. The
     -- row keeps its upper bounds rather than be recounted from nothing.
     AND x.users IS NOT NULL;
  UPDATE group_dim_days d SET users = x.users, first_seen = x.first_seen,
         last_seen = x.last_seen, max_duration_ms = x.max_duration_ms
    FROM (SELECT c.id AS combo, r.in_sample,
                 hll_add_agg(hll_hash_text(r.user_id), 12, 5, 1024, 0) AS users,
                 min(r.received_at) AS first_seen, max(r.received_at) AS last_seen,
                 max(r.duration_ms) AS max_duration_ms
            FROM reports r
            JOIN dim_combos c
              ON c.app_id = r.app_id AND c.app_version = coalesce(r.app_version, '')
             AND c.os_version = coalesce(r.os_version, '')
             AND c.device = coalesce(r.device, '') AND c.kind = r.kind
           WHERE r.app_id = m.app_id AND r.received_day = m.day
             AND group_key_hash(r.key1) = group_key_hash(m.key1) AND r.key1 = m.key1
             AND (m.level = 1 OR r.key2 = m.key)
           GROUP BY 1, 2) AS x
   WHERE d.app_id = m.app_id AND d.level = m.level AND d.key = m.key AND d.day = m.day
     AND d.combo = x.combo AND d.in_sample = x.in_sample;
  UPDATE group_facet_days f SET users = x.users, sample_users = x.sample_users,
         affected = hll_cardinality(x.sample_users)::bigint, first_seen = x.first_seen,
         last_seen = x.last_seen, max_duration_ms = x.max_duration_ms
    FROM (SELECT y.dim, y.value, hll_add_agg(hll_hash_text(r.user_id), 12, 5, 1024, 0) AS users,
                 coalesce(hll_add_agg(hll_hash_text(r.user_id), 12, 5, 1024, 0)
                            FILTER (WHERE r.in_sample), hll_empty(12, 5, 1024, 0))
                   AS sample_users,
                 min(r.received_at) AS first_seen, max(r.received_at) AS last_seen,
                 max(r.duration_ms) AS max_duration_ms
            FROM reports r,
                 LATERAL (VALUES ('version', coalesce(r.app_version, '')),
                                 ('os_version', coalesce(r.os_version, '')),
                                 ('device', coalesce(r.device, '')), ('kind', r.kind))
                   AS y(dim, value)
           WHERE r.app_id = m.app_id AND r.received_day = m.day
             AND group_key_hash(r.key1) = group_key_hash(m.key1) AND r.key1 = m.key1
             AND (m.level = 1 OR r.key2 = m.key)
           GROUP BY 1, 2) AS x
   WHERE f.app_id = m.app_id AND f.level = m.level AND f.key = m.key AND f.day = m.day
     AND f.dim = x.dim AND f.value = x.value;
  PERFORM count_out_of_group(m.app_id, m.level, m.key, true);
  DELETE FROM group_day_recounts
   WHERE app_id = m.app_id AND level = m.level AND key = m.key AND day = m.day;
  RETURN true;
END $$;
COMMENT ON FUNCTION recount_group_day() IS
  'Reprocessing: recounts the users, first and last seen and longest duration of one group-day marked in group_day_recounts (its group_days row, its group_dim_days rows, its group_facet_days rows (all and in-sample users), then the group''s all-time users) from the kept reports and unmarks it; false when none is marked.';
