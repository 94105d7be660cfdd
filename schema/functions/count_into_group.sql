-- count_into_group — reprocessing: one report more in a group's counters.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The caller (move_report) moves the report's group_daily row and says
-- whether the user joins.

CREATE OR REPLACE FUNCTION count_into_group(p_app bigint, p_level smallint, p_key text,
                                            p_parent_key text, p_frames jsonb, p_at timestamptz,
                                            p_joins integer)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO groups AS g (app_id, level, key, parent_key, frames, reports, users,
                           first_seen, last_seen)
  VALUES (p_app, p_level, p_key, p_parent_key, p_frames, 1, p_joins, p_at, p_at)
  ON CONFLICT (app_id, level, key) DO UPDATE SET
    reports = g.reports + 1,
    users = g.users + excluded.users,
    first_seen = least(g.first_seen, excluded.first_seen),
    last_seen = greatest(g.last_seen, excluded.last_seen);
$$;
COMMENT ON FUNCTION count_into_group(bigint, smallint, text, text, jsonb, timestamptz,
                                     integer) IS
  'Reprocessing: one report more in a group''s counters, the group made if new (one user more when p_joins is 1); the caller holds the user''s lock and moved the report''s group_daily row.';
