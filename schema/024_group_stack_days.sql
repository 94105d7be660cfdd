-- 024_group_stack_days.sql — how many retained reports of a group, day
-- and app version have each representative stack, so a group's call tree
-- (SPEC §10.4) is read from an aggregate, not from its report rows
-- (issue 26; docs/STORAGE.md "Reading").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: the tree route parsed the skeleton of every matching report row
-- (schema/018) to find its representative stack, about 1 s at p95 for a
-- group of 100,000 reports. The stacks of a group repeat (a stall's few
-- call paths), so one row per distinct stack, day and version holds the
-- same answer in a few hundred rows. Only the filters the dashboard and
-- the benchmark use are kept (days, version, level-2 group); a tree under
-- an OS version, device or kind filter still reads the reports.
--
-- Kept by ingest_reports (one upsert per batch, after the group rows and
-- before the stacks' counts), update_report_symbols (reprocessing: the
-- report's old stack out, its new one in) and drop_report_partitions
-- (retention: the dropped days' rows deleted, since the tree is of
-- retained reports only). The identity of a report's stack is
-- representative_stack()'s (schema/functions/); the backfill below
-- derives it the same way, written out because a numbered migration calls
-- no function file (docs/STORAGE.md §Schema). The function files that
-- keep the counts are applied right after this file commits: a server of
-- the previous build storing reports in between would leave them
-- uncounted, so upgrade with the servers stopped.

CREATE TABLE group_stack_days (
  app_id bigint NOT NULL,
  key1 text NOT NULL,
  key2 text NOT NULL,
  day date NOT NULL,
  app_version text NOT NULL,
  stack uuid NOT NULL,
  frames text,
  reports bigint NOT NULL,
  PRIMARY KEY (app_id, key1, key2, day, app_version, stack)
) WITH (fillfactor = 80);
COMMENT ON TABLE group_stack_days IS
  'Per app, level-1 and level-2 group, UTC day and app version ('''' for none): how many retained reports have each representative stack. The call tree reads it (store/group_stacks.c); retention deletes the days it drops. Fillfactor 80: a popular row''s count is updated by every batch, in place (HOT).';
COMMENT ON COLUMN group_stack_days.stack IS
  'The representative stack: the thread''s hash in stacks when the skeleton''s "stack" names a thread; the md5 of FRAMES for frames held inline (a stack taken from samples); the nil uuid for a report whose stack is lost (the tree counts it with no frames).';
COMMENT ON COLUMN group_stack_days.frames IS
  'The inline stack''s frames as JSON text (the skeleton''s stack.frames), NULL when STACK is a thread''s hash or nil.';
COMMENT ON COLUMN group_stack_days.reports IS
  'Retained reports of the row''s group, day and version with that stack; a row reaching 0 is deleted.';
COMMENT ON INDEX group_stack_days_pkey IS
  'The tree''s range scan by (app_id, key1[, key2]), days and version filtered inside it; the upserts of ingest and reprocessing, in key order.';

-- Retention deletes a dropped day's rows: the day leads no B-tree, and
-- the rows of a day are written together, so BRIN narrows it to its pages.
CREATE INDEX group_stack_days_day_brin ON group_stack_days USING brin (day);
COMMENT ON INDEX group_stack_days_day_brin IS
  'Retention''s delete of a dropped day''s rows (drop_report_partitions) without a scan of the app''s rows.';

INSERT INTO group_stack_days (app_id, key1, key2, day, app_version, stack, frames, reports)
SELECT app_id, key1, key2, received_day, version,
       CASE WHEN st ? 'thread'
            THEN coalesce(hashes[(st->>'thread')::int + 2], '00000000-0000-0000-0000-000000000000')
            WHEN st->'frames' IS NULL THEN '00000000-0000-0000-0000-000000000000'
            ELSE md5((st->'frames')::text)::uuid END,
       min(CASE WHEN st ? 'thread' THEN NULL ELSE (st->'frames')::text END), count(*)
  FROM (SELECT app_id, key1, key2, received_day, coalesce(app_version, '') AS version,
               symbolized_stacks AS hashes,
               (replace(symbolized, chr(1), '0')::jsonb)->'stack' AS st
          FROM reports OFFSET 0) AS r
 GROUP BY 1, 2, 3, 4, 5, 6;

-- Statistics now: the first tree reads after the upgrade would otherwise
-- be planned for an empty table until autovacuum comes by.
ANALYZE group_stack_days;
