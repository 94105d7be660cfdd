-- 042_call_tree_from_deltas.sql — the call tree's counts (group_stack_days)
-- are counted from ingest's deltas by fold_group_deltas, like the group
-- rows (docs/STORAGE.md "Deltas").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25, ingest rate; docs/PERFORMANCE.md "Stacks kept by their
-- last day"): every batch upserted a row per group, day, version and
-- representative stack, a popular group's the same row every time, in the
-- one connection every report waits for. A delta now carries its report's
-- representative stack (as representative_stack() makes it from the
-- stored skeleton), and a fold counts a second of them at once.
--
-- The deltas waiting now were counted in group_stack_days by the ingest
-- that wrote them: they keep no stack, which tells the fold (and
-- reprocessing, which then moves the report's count as before) so.

ALTER TABLE group_deltas ADD COLUMN stack uuid, ADD COLUMN stack_frames text;
COMMENT ON COLUMN group_deltas.stack IS
  'The report''s representative stack as group_stack_days keys it (representative_stack), counted there by the fold; NULL for a delta written before schema/042, whose ingest counted it already.';
COMMENT ON COLUMN group_deltas.stack_frames IS
  'The inline stack''s frames as JSON text, as group_stack_days.frames keeps them; NULL when STACK is a thread''s hash, nil or NULL.';
COMMENT ON TABLE group_deltas IS
  'A stored report not yet counted in group_days, group_dim_days, group_facet_days and group_stack_days: inserted by ingest_reports in the report''s transaction, deleted by fold_group_deltas as it counts it; reprocessing moves a report''s delta (its keys and stack) instead of the counts while it waits. Vacuumed every 20,000 deletes: the table only ever holds the last seconds of reports.';
COMMENT ON TABLE group_stack_days IS
  'Per app, level-1 and level-2 group, UTC day and app version ('''' for none): how many retained reports have each representative stack. Counted from ingest''s deltas by fold_group_deltas (schema/042), moved by update_report_symbols; the call tree reads it (store/group_stacks.c); retention deletes the days it drops. Fillfactor 80: a popular row''s count is updated by every fold, in place (HOT).';
