-- update_report_symbols — reprocessing: a report's new symbolized form.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The caller holds the report's key row (st_report_lock) and has moved its
-- groups (move_report): then the call tree's counts (group_stack_days,
-- schema/024: the report's old representative stack out, its new one in,
-- in key order; its delta's stack while that waits, schema/042), and the
-- new stacks last, as at ingest (keep_stacks). The replaced ones stay
-- until retention drops their last day: the report's own day is one of
-- them, so a stack is never gone while a report of a retained day refers
-- to it.

CREATE OR REPLACE FUNCTION update_report_symbols(p_app bigint, p_day date, p_id bigint,
                                                 p_key1 text, p_key2 text, p_pending boolean,
                                                 p_symbolized text, p_stacks uuid[],
                                                 p_hashes uuid[], p_bodies text[])
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  old uuid[];
  old_key1 text;
  old_key2 text;
  old_symbolized text;
  old_version text;
  new_stack uuid;
  new_frames text;
  new_ms bigint[];
BEGIN
  SELECT stack_hashes(r.symbolized_stacks), r.key1, r.key2, r.symbolized, coalesce(r.app_version, '')
    INTO old, old_key1, old_key2, old_symbolized, old_version
    FROM reports r
   WHERE r.app_id = p_app AND r.received_day = p_day AND r.id = p_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  UPDATE reports r SET key1 = p_key1, key2 = p_key2, pending = p_pending,
                       symbolized = p_symbolized, symbolized_stacks = stack_bytes(p_stacks)
   WHERE r.app_id = p_app AND r.received_day = p_day AND r.id = p_id;
  SELECT x.stack, x.frames, x.ms INTO new_stack, new_frames, new_ms
    FROM representative_stack(p_symbolized, p_stacks) x;
  -- A report whose delta waits is in no call-tree count yet: its delta's
  -- stack moves (move_report moved its keys and holds it), and the fold
  -- counts the new one. A delta without a stack (written before
  -- schema/042) was counted by its ingest, and moves as a counted report.
  UPDATE group_deltas d SET stack = new_stack, stack_frames = new_frames, stack_ms = new_ms
   WHERE d.app_id = p_app AND d.report = p_id AND d.stack IS NOT NULL;
  IF NOT FOUND THEN
    -- A stack both forms keep nets to 0 and is not touched (its
    -- durations too: the report's own, per frame). The old stack's
    -- durations leave with its count (schema/051).
    INSERT INTO group_stack_days AS g (app_id, key1, key2, day, app_version, stack, frames,
                                       reports, ms)
    SELECT p_app, m.key1, m.key2, p_day, old_version, m.stack, min(m.frames), sum(m.n),
           ms_sum(jsonb_agg(m.ms))
      FROM (SELECT p_key1 AS key1, p_key2 AS key2, new_stack AS stack, new_frames AS frames,
                   1 AS n, new_ms AS ms
            UNION ALL
            SELECT old_key1, old_key2, y.stack, y.frames, -1,
                   CASE WHEN y.ms IS NOT NULL
                        THEN ARRAY(SELECT -v FROM unnest(y.ms) WITH ORDINALITY AS u(v, i)
                                    ORDER BY i) END
              FROM representative_stack(old_symbolized, old) y) AS m
     GROUP BY m.key1, m.key2, m.stack HAVING sum(m.n) <> 0
     ORDER BY m.key1 COLLATE "C", m.key2 COLLATE "C", m.stack
    ON CONFLICT (app_id, key1, key2, day, app_version, stack)
    DO UPDATE SET reports = g.reports + excluded.reports, ms = ms_add(g.ms, excluded.ms);
    DELETE FROM group_stack_days g
     WHERE g.app_id = p_app AND g.key1 = old_key1 AND g.key2 = old_key2 AND g.day = p_day
       AND g.app_version = old_version AND g.reports <= 0;
  END IF;
  PERFORM keep_stacks(p_app, p_stacks, array_fill(p_day, ARRAY[cardinality(p_stacks)]),
                      p_hashes, p_bodies);
  -- The new stack's search terms (schema/046) for both of its groups:
  -- new symbols are new names to find the groups by. After the stacks,
  -- so a new stack's text is there.
  INSERT INTO group_terms (app_id, level, key, term)
  SELECT DISTINCT p_app, l.level, CASE l.level WHEN 1 THEN p_key1 ELSE p_key2 END, x.term
    FROM stack_terms(coalesce(new_frames, (SELECT s.body FROM stacks s
                                            WHERE s.app_id = p_app AND s.hash = new_stack)))
           AS x(term),
         (VALUES (1::smallint), (2::smallint)) AS l(level)
   ORDER BY 2, 3, 4
  ON CONFLICT DO NOTHING;
END $$;
COMMENT ON FUNCTION update_report_symbols(bigint, date, bigint, text, text, boolean, text, uuid[],
                                          uuid[], text[]) IS
  'Reprocessing: replaces report p_id''s keys, pending flag and symbolized form (skeleton and stack hashes, the texts of new stacks in p_hashes/p_bodies), keeping the new stacks (keep_stacks), and its representative stack in group_stack_days.';
