-- duration_bucket_edges — the lower edges of the duration histogram's
-- eight buckets, in ms (SPEC §10.1, schema/021).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The one place the edges are written, but for the backfill of
-- schema/021 (a numbered migration calls no function file).
-- count_durations and kept_duration_hist bucket through width_bucket on
-- these; a constant SQL function, so PostgreSQL folds it into each caller.

CREATE OR REPLACE FUNCTION duration_bucket_edges()
RETURNS bigint[] LANGUAGE sql IMMUTABLE AS $$
  SELECT '{0,250,500,1000,2000,5000,10000,30000}'::bigint[];
$$;
COMMENT ON FUNCTION duration_bucket_edges() IS
  'The lower edges (ms) of the eight duration histogram buckets: 0, 250, 500, 1000, 2000, 5000, 10000, 30000.';
