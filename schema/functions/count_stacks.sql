-- count_stacks — references to stacks added and removed, and the stacks
-- no report refers to any more deleted (schema/018, docs/STORAGE.md
-- "Stacks").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Called by ingest_reports (every stored report's stacks, +1 each),
-- update_report_symbols (the new ones +1, the replaced ones -1) and
-- drop_report_partitions (a dropped day's, minus their count), each the
-- last thing its transaction locks. Every count row is locked by one
-- upsert in hash order, removals included, so concurrent callers queue
-- instead of deadlocking; a stack's text is inserted only once its count
-- is held, so a caller that sees a stack deleted meanwhile stores it anew.

CREATE OR REPLACE FUNCTION count_stacks(p_app bigint, p_hashes uuid[], p_deltas bigint[],
                                        p_new_hashes uuid[], p_new_bodies text[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF coalesce(cardinality(p_hashes), 0) = 0 THEN
    RETURN;
  END IF;
  INSERT INTO stack_refs AS s (app_id, hash, refs)
  SELECT p_app, h, sum(d) FROM unnest(p_hashes, p_deltas) AS x(h, d)
   GROUP BY h ORDER BY h
  ON CONFLICT (app_id, hash) DO UPDATE SET refs = s.refs + excluded.refs;
  IF EXISTS (SELECT 1 FROM unnest(p_deltas) d WHERE d < 0) THEN
    WITH gone AS (
      DELETE FROM stack_refs s
       WHERE s.app_id = p_app AND s.hash = ANY (p_hashes) AND s.refs <= 0
      RETURNING s.hash
    )
    DELETE FROM stacks b USING gone WHERE b.app_id = p_app AND b.hash = gone.hash;
  END IF;
  INSERT INTO stacks (app_id, hash, body)
  SELECT p_app, h, body FROM unnest(p_new_hashes, p_new_bodies) AS x(h, body)
   WHERE h = ANY (p_hashes)
  ON CONFLICT (app_id, hash) DO NOTHING;
END $$;
COMMENT ON FUNCTION count_stacks(bigint, uuid[], bigint[], uuid[], text[]) IS
  'Adds p_deltas[i] to the reference count of stack p_hashes[i] (repeats summed), in hash order; deletes the stacks whose count falls to 0; stores the texts of p_new_hashes that p_hashes counts and that are not stored yet.';
