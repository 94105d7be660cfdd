-- count_out_of_group — reprocessing: one report less in a group's counters.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The caller (move_report) moves the report's group_daily row and says
-- whether the user leaves.

CREATE OR REPLACE FUNCTION count_out_of_group(p_app bigint, p_level smallint, p_key text,
                                              p_leaves integer)
RETURNS void LANGUAGE sql AS $$
  UPDATE groups SET reports = reports - 1, users = users - p_leaves
   WHERE app_id = p_app AND level = p_level AND key = p_key AND reports > 0;
$$;
COMMENT ON FUNCTION count_out_of_group(bigint, smallint, text, integer) IS
  'Reprocessing: one report less in a group''s counters (and one user less when p_leaves is 1); the caller holds the user''s lock and moved the report''s group_daily row.';
