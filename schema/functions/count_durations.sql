-- count_durations — the duration histogram of some reports (SPEC §10.1,
-- schema/021).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Eight counts from the lower bucket edges 0, 250, 500, 1000, 2000, 5000,
-- 10000, 30000 ms, each times P_WEIGHT (-1 takes a moved report out):
-- width_bucket puts a duration equal to an edge in the bucket the edge
-- starts, and everything from 30000 in the last. A NULL (unknown)
-- duration counts nowhere. The edges are duration_bucket_edges'.

-- A loop in PL/pgSQL: the same answer as a grouped query over unnest in
-- a fifth of the time (5 against 23 µs a call; ingest calls it for every
-- group row of a batch).
CREATE OR REPLACE FUNCTION count_durations(p_durations bigint[], p_weight bigint)
RETURNS bigint[] LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  hist bigint[] := '{0,0,0,0,0,0,0,0}';
  ms bigint;
  bucket integer;
BEGIN
  FOREACH ms IN ARRAY coalesce(p_durations, '{}') LOOP
    IF ms >= 0 THEN
      bucket := width_bucket(ms, duration_bucket_edges());
      hist[bucket] := hist[bucket] + p_weight;
    END IF;
  END LOOP;
  RETURN hist;
END $$;
COMMENT ON FUNCTION count_durations(bigint[], bigint) IS
  'The duration histogram (bigint[8], lower bucket edges 0, 250, 500, 1000, 2000, 5000, 10000, 30000 ms) of P_DURATIONS, NULLs left out, each count times P_WEIGHT.';
