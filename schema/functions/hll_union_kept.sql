-- hll_union_kept — a stored sketch with a fold's users added, or the
-- stored sketch itself when they add nothing (docs/STORAGE.md "Deltas").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A sketch over about 2 KB is kept out of line (TOAST), and an UPDATE
-- that writes it anew leaves the old copy dead until a vacuum: folding
-- every second, the popular rows' sketches were 90% of a 1,000,000-report
-- database (docs/journal/performance.md, "Issue 25 through the ingest path"). An
-- UPDATE that sets the column to the very value it read keeps the stored
-- copy and writes no TOAST; so this is a SQL expression PostgreSQL
-- inlines into the upsert, where P_OLD is the column itself.

CREATE OR REPLACE FUNCTION hll_union_kept(p_old hll, p_added hll)
RETURNS hll LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN hll_union(p_old, p_added) = p_old THEN p_old
              ELSE hll_union(p_old, p_added) END
$$;
COMMENT ON FUNCTION hll_union_kept(hll, hll) IS
  'hll_union(p_old, p_added), or p_old itself (so an UPDATE keeps its stored copy) when the union equals it.';
