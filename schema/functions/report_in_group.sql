-- report_in_group — whether a report row's keys are a level-2 group's: the
-- check a reader of reports_group_idx (hashes of the keys, schema/037)
-- makes beside the hashes.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- PL/pgSQL so that PostgreSQL does not inline it: written as two more
-- equalities, the planner took them as independent of the hashes' and
-- multiplied the three (26 rows for the largest group's 50,799), then
-- sorted all of a group's reports for a page instead of reading the index
-- in order (93 ms against about 1). A call it cannot see into counts as a
-- third of the rows, so the hashes' estimate stands. It runs only on the
-- rows the index returns, a page's worth.

CREATE OR REPLACE FUNCTION report_in_group(p_key1 text, p_key2 text, p_group_key1 text,
                                           p_group_key2 text)
RETURNS boolean LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN p_key1 = p_group_key1 AND p_key2 = p_group_key2;
END $$;
COMMENT ON FUNCTION report_in_group(text, text, text, text) IS
  'Whether keys P_KEY1, P_KEY2 (a report''s) are group P_GROUP_KEY1/P_GROUP_KEY2''s; opaque to the planner on purpose (reports page).';
