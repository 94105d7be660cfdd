-- 046_group_search.sql — what the group search (SPEC §10.7), a user's
-- reports and dsyms/missing's versions read (issue 42; docs/STORAGE.md
-- "Search terms").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why:
--  * group_terms: `…/groups?q=TEXT` keeps the groups whose representative
--    stacks have a frame whose function, file or image contains TEXT. The
--    stacks are texts in `stacks`, shared by reports; matching them at
--    read time is a scan of every stack of the app. Each group's distinct
--    terms are kept once instead, with a trigram index (pg_trgm) that a
--    substring match (ILIKE '%TEXT%') reads. Filled by the fold when a
--    representative stack is first counted in group_stack_days (so ingest
--    writes nothing more), by reprocessing (new symbols, new terms), and
--    below from what is stored: the call tree's stacks, the groups'
--    culprits and their keyed frames.
--  * reports_user_idx: a user's reports newest first (`GET …/reports?
--    user_id=`), one index range per retained day partition of the app.
--    The user id is hashed as the group keys are (schema/037): 4 bytes an
--    entry, the row's own user id compared beside it.
--  * image_waits.app_versions and last_seen: dsyms/missing names the
--    versions a missing image was seen in and when, as a time like every
--    other reply's last_seen; the counters the waits already upsert keep
--    them, so ingest writes no other row.

-- pg_trgm is a trusted extension: a database owner may create it. The
-- role of scripts/pg.sh and docker/initdb owns only its schema, so their
-- superuser creates it in public beside hll.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    BEGIN
      CREATE EXTENSION pg_trgm;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE EXCEPTION '046_group_search.sql needs the PostgreSQL extension pg_trgm, missing from this database, which role % may not create: as a superuser, CREATE EXTENSION pg_trgm SCHEMA public; (scripts/pg.sh does it)',
        current_user;
    END;
  END IF;
END $$;

CREATE TABLE group_terms (
  app_id bigint NOT NULL,
  level smallint NOT NULL CHECK (level IN (1, 2)),
  key text NOT NULL,
  term text NOT NULL,
  PRIMARY KEY (app_id, level, key, term)
);
COMMENT ON TABLE group_terms IS
  'The distinct searchable terms of each group''s representative stacks (SPEC §10.7): frame functions, files and image basenames (each cut to 512 characters), and its culprit''s. Added by fold_group_deltas when a stack is first counted in group_stack_days, by update_report_symbols, and by ingest_reports for each group it makes (its culprit''s and keyed frames'', culprit_terms); never removed while the group lives (a term of a stack that left stays).';
COMMENT ON INDEX group_terms_pkey IS
  'One row per group and term: the fold''s and reprocessing''s inserts skip what is there.';
CREATE INDEX group_terms_trgm ON group_terms USING gin (term gin_trgm_ops);
COMMENT ON INDEX group_terms_trgm IS
  'The groups list''s q= filter: a substring match, case-insensitive (ILIKE), through trigrams.';

-- The terms of a stack text (a thread object or an array of frames),
-- written out as stack_terms() makes them: a numbered migration calls no
-- function file.
INSERT INTO group_terms (app_id, level, key, term)
WITH stacked AS (
  SELECT DISTINCT t.app_id, t.key1, t.key2, coalesce(t.frames, s.body) AS body
    FROM group_stack_days t
    LEFT JOIN stacks s ON s.app_id = t.app_id AND s.hash = t.stack AND t.frames IS NULL
), framed AS (
  SELECT x.app_id, x.key1, x.key2, f
    FROM (SELECT app_id, key1, key2, body::jsonb AS j FROM stacked WHERE body IS NOT NULL) x,
         jsonb_array_elements(CASE jsonb_typeof(x.j) WHEN 'array' THEN x.j
                              WHEN 'object' THEN coalesce(x.j->'frames', '[]') ELSE '[]' END) f
   WHERE jsonb_typeof(f) = 'object'
), termed AS (
  SELECT app_id, key1, key2, regexp_replace(f->>'image', '^.*/', '') AS term FROM framed
  UNION ALL SELECT app_id, key1, key2, f->>'hint_function' FROM framed
  UNION ALL SELECT app_id, key1, key2, nullif(f->>'symbol_hint', '<redacted>') FROM framed
  UNION ALL
  SELECT app_id, key1, key2, e.v
    FROM framed,
         jsonb_array_elements(CASE jsonb_typeof(f->'frames') WHEN 'array' THEN f->'frames'
                              ELSE '[]' END) c,
         LATERAL (VALUES (c->>'function'), (c->>'file')) AS e(v)
), every AS (
  SELECT app_id, 1::smallint AS level, key1 AS key, term FROM termed
  UNION ALL SELECT app_id, 2::smallint, key2, term FROM termed
  UNION ALL
  -- The groups' culprits and keyed frames (image!function, image+0x…):
  -- every group has them, its stacks kept or not.
  SELECT g.app_id, g.level, g.key, v.term
    FROM groups g,
         LATERAL (SELECT g.culprit->>'function' UNION ALL SELECT g.culprit->>'file'
                  UNION ALL SELECT regexp_replace(g.culprit->>'frame', '(!.*|\+0x[0-9a-f]*)$', '')
                  UNION ALL SELECT x.part
                    FROM jsonb_array_elements_text(CASE jsonb_typeof(g.frames::jsonb)
                                                   WHEN 'array' THEN g.frames::jsonb
                                                   ELSE '[]' END) AS i(id),
                         LATERAL (VALUES (regexp_replace(i.id, '(!.*|\+0x[0-9a-f]*)$', '')),
                                         (CASE WHEN strpos(i.id, '!') > 0
                                               THEN substr(i.id, strpos(i.id, '!') + 1) END))
                           AS x(part)) AS v(term)
)
SELECT DISTINCT app_id, level, key, left(term, 512) FROM every
 WHERE term IS NOT NULL AND term <> ''
ON CONFLICT DO NOTHING;
ANALYZE group_terms;

-- A user's reports newest first (store/report_lists.c), as hashtext:
-- the reader compares the row's user id too.
CREATE INDEX reports_user_idx ON reports (hashtext(user_id), received_at DESC, id DESC);
COMMENT ON INDEX reports_user_idx IS
  'Lists a user''s reports newest first with keyset pagination (GET …/reports?user_id=), in the partitions of the app (and days) the reader names: by hashtext(user_id), each row''s user id compared too.';
DO $$
DECLARE
  idx record;
BEGIN
  FOR idx IN
    SELECT c.relname, p.relname AS parent
      FROM pg_inherits h
      JOIN pg_class c ON c.oid = h.inhrelid
      JOIN pg_class p ON p.oid = h.inhparent
     WHERE c.relkind IN ('i', 'I')
       AND c.relnamespace = to_regnamespace(current_schema())
       AND obj_description(c.oid, 'pg_class') IS NULL
  LOOP
    EXECUTE format('COMMENT ON INDEX %I IS %L', idx.relname,
                   format('Partition of %s.', idx.parent));
  END LOOP;
END $$;

ALTER TABLE image_waits ADD COLUMN app_versions text[] NOT NULL DEFAULT '{}',
                        ADD COLUMN last_seen timestamptz;
COMMENT ON COLUMN image_waits.app_versions IS
  'The app versions ('''' for none) of the reports counted, distinct, sorted, as ingest and reprocessing added them: dsyms/missing lists them. Never taken out: a report whose wait ends (clear_report_waits) counts down reports and leaves its version listed; the row goes with its last report.';
COMMENT ON COLUMN image_waits.last_seen IS
  'The latest received_at of a report counted; NULL for a row of before schema/046 whose reports are gone (dsyms/missing then shows the day''s end).';
-- The waiting reports' versions and times, from reports.waits (16 bytes
-- a UUID, as wait_uuids reads them).
UPDATE image_waits w SET app_versions = v.versions, last_seen = v.last_seen
  FROM (SELECT r.app_id, r.received_day AS day,
               encode(substring(r.waits FROM 16 * i + 1 FOR 16), 'hex')::uuid AS uuid,
               array_agg(DISTINCT coalesce(r.app_version, '')) AS versions,
               max(r.received_at) AS last_seen
          FROM reports r, generate_series(0, length(r.waits) / 16 - 1) AS i
         WHERE r.waits IS NOT NULL
         GROUP BY 1, 2, 3) AS v
 WHERE w.app_id = v.app_id AND w.day = v.day AND w.uuid = v.uuid;
