-- count_into_group — reprocessing: one report more in a group's counters.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The caller (move_report) holds the user's lock and moves the report's
-- day rows; adding a user to a sketch is exact (schema/016), and so is
-- adding a duration (P_DURATION, NULL when unknown: schema/021).

CREATE OR REPLACE FUNCTION count_into_group(p_app bigint, p_level smallint, p_key text,
                                            p_parent_key text, p_frames jsonb, p_at timestamptz,
                                            p_user text, p_duration bigint)
-- PL/pgSQL, not LANGUAGE sql: a SQL body is planned again at every call
-- (move_report calls this per moved report), PL/pgSQL keeps its plans for
-- the session (docs/STORAGE.md §Schema).
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO groups AS g (app_id, level, key, parent_key, frames, reports, users, users_hll,
                           first_seen, last_seen, stall_ms, max_duration_ms, duration_hist,
                           duration_fine)
  VALUES (p_app, p_level, p_key, p_parent_key, p_frames, 1, 1,
          hll_add(hll_empty(12, 5, 1024, 0), hll_hash_text(p_user)), p_at, p_at,
          coalesce(p_duration, 0), p_duration, count_durations(ARRAY[p_duration], 1),
          fine_hist_of(ARRAY[p_duration], 1))
  ON CONFLICT (app_id, level, key) DO UPDATE SET
    reports = g.reports + 1,
    users = hll_cardinality(hll_union(g.users_hll, excluded.users_hll)),
    users_hll = hll_union(g.users_hll, excluded.users_hll),
    first_seen = least(g.first_seen, excluded.first_seen),
    last_seen = greatest(g.last_seen, excluded.last_seen),
    stall_ms = g.stall_ms + excluded.stall_ms,
    max_duration_ms = greatest(g.max_duration_ms, excluded.max_duration_ms),
    duration_hist = add_hists(g.duration_hist, excluded.duration_hist),
    duration_fine = fine_hist_add(g.duration_fine, excluded.duration_fine);
END $$;
COMMENT ON FUNCTION count_into_group(bigint, smallint, text, text, jsonb, timestamptz, text,
                                     bigint) IS
  'Reprocessing: one report of user p_user (and duration p_duration, NULL when unknown) more in a group''s counters, the group made if new; the caller holds the user''s lock and moves the report''s day rows.';
