-- count_out_of_group — reprocessing: one report less in a group's counters.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A sketch cannot take a user out: once the caller (move_report) has
-- recomputed the group's day rows, the group's users are the union of
-- them (p_recount); the first call only takes the report off, and with it
-- the row's lock, in the order ingest_reports locks groups. A max cannot
-- take a duration out either: the durations' sum, max and histograms are
-- recomputed from the day rows in the same step (schema/021).

CREATE OR REPLACE FUNCTION count_out_of_group(p_app bigint, p_level smallint, p_key text,
                                              p_recount boolean)
-- PL/pgSQL, not LANGUAGE sql: a SQL body is planned again at every call
-- (move_report calls this per moved report), PL/pgSQL keeps its plans for
-- the session (docs/STORAGE.md §Schema).
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE groups SET reports = reports - 1
   WHERE NOT p_recount AND app_id = p_app AND level = p_level AND key = p_key
     AND reports > 0;
  UPDATE groups g SET users_hll = u.users, users = hll_cardinality(u.users),
         stall_ms = u.stall_ms, max_duration_ms = u.max_duration_ms,
         duration_hist = u.duration_hist,
         duration_fine = (SELECT fine_hist_from(array_agg(p.bucket), array_agg(p.n))
                            FROM group_days d, LATERAL fine_pairs(d.duration_fine) p
                           WHERE d.app_id = p_app AND d.level = p_level AND d.key = p_key)
    FROM (SELECT coalesce(hll_union_agg(d.users), hll_empty(12, 5, 1024, 0)) AS users,
                 coalesce(sum(d.stall_ms), 0) AS stall_ms,
                 max(d.max_duration_ms) AS max_duration_ms,
                 ARRAY[coalesce(sum(d.duration_hist[1]), 0), coalesce(sum(d.duration_hist[2]), 0),
                       coalesce(sum(d.duration_hist[3]), 0), coalesce(sum(d.duration_hist[4]), 0),
                       coalesce(sum(d.duration_hist[5]), 0), coalesce(sum(d.duration_hist[6]), 0),
                       coalesce(sum(d.duration_hist[7]), 0),
                       coalesce(sum(d.duration_hist[8]), 0)]::bigint[] AS duration_hist
            -- Like the group's counters, its day rows count no report
            -- whose delta waits (schema/026).
            FROM group_days d
           WHERE d.app_id = p_app AND d.level = p_level AND d.key = p_key) AS u
   WHERE p_recount AND g.app_id = p_app AND g.level = p_level AND g.key = p_key;
END $$;
COMMENT ON FUNCTION count_out_of_group(bigint, smallint, text, boolean) IS
  'Reprocessing: one report less in a group''s counters (p_recount false), then (p_recount true, once the group''s day rows are recomputed) its users as the union of its group_days rows and its durations'' sum, max and histogram from them; the caller holds the user''s lock.';
