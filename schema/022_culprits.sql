-- 022_culprits.sql — each group's culprit (SPEC §10.5), kept on its
-- groups row so that lists and details stay reads of aggregate rows
-- (docs/STORAGE.md "Culprits").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- No backfill: a group stored before this migration gets its culprit
-- from its next report or from reprocessing (better_culprit keeps any
-- culprit over none). Computing it here would need the server's frame
-- identities (ingest/grouping.c) and its rule for system images
-- (ingest/image_class.c) written again in SQL.

ALTER TABLE groups ADD COLUMN culprit jsonb;
COMMENT ON COLUMN groups.culprit IS
  'The innermost frame of a representative stack of the group in one of the app''s own images, {"frame","function","file","line"}, computed by the server at ingest and reprocessing; replaced only by a better one (better_culprit: one with a function beats one without). NULL until a report of the group has such a frame.';

-- ingest_reports takes the reports' culprits (p_culprits); the signature
-- before was only ever made by its function file (schema/018 dropped the
-- one before it).
DROP FUNCTION IF EXISTS ingest_reports(bigint, bigint, text[], text[], date[], timestamptz[],
                                       boolean[], text[], text[], text[], text[], text[],
                                       text[], text[], text[], text[], bigint[], text[], text[],
                                       boolean[], text[], text[], text[], text[], text[], text[],
                                       text[], uuid[], text[]);
