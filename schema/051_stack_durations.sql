-- 051_stack_durations.sql — an Android stack's durations summed beside its
-- count, out of its identity (issue 44, SPEC §13).
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: a Matrix stack's lines carry the time spent in them. Written into
-- the frames, they made every report's stack a text of its own, so an
-- Android group's call tree summed one stack per report (docs/PERFORMANCE.md
-- "Android (issue 44)"). The frames are now written without them, the
-- representative stack's durations beside it in the skeleton ("java_ms",
-- ingest/symbolicate.h), and the call tree's rows sum them per frame.
-- Rows written before keep their durations in their stacks' frames (and
-- NULL here), which the call tree still reads (server/service/call_tree.c).

ALTER TABLE group_deltas ADD COLUMN stack_ms bigint[];
COMMENT ON COLUMN group_deltas.stack_ms IS
  'An Android report''s representative stack''s durations in ms, one per frame, innermost first (NULL for a frame without; representative_stack), summed by the fold into group_stack_days.ms; NULL for an iOS report.';
ALTER TABLE group_stack_days ADD COLUMN ms bigint[];
COMMENT ON COLUMN group_stack_days.ms IS
  'The durations in ms of the row''s reports summed per frame of the stack, innermost first (ms_add, ms_sum): what the call tree shows per node of an Android group; NULL for an iOS stack and for rows counted before schema/051.';

-- The function file returns a third column (ms): a new return type (a
-- fresh database makes its functions after the migrations, hence IF EXISTS).
DROP FUNCTION IF EXISTS representative_stack(text, uuid[]);
