-- fine_bucket — the bucket of one duration in the fine log-scale
-- histogram that percentiles are read from (SPEC §10.1, schema/044).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Bucket k holds the durations in (1.04^(k-1), 1.04^k] ms, so the middle
-- of its range (fine_percentiles) is within 2% of any of them; 0 ms
-- is bucket -1. A duration from 1 ms to a day needs buckets 0 to 445,
-- and a group's durations of a few hundred ms to a minute about 130.
-- One expression, so PostgreSQL inlines it.

CREATE OR REPLACE FUNCTION fine_bucket(p_ms bigint)
RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN p_ms <= 0 THEN -1 ELSE ceil(ln(p_ms::double precision) / ln(1.04))::integer END;
$$;
COMMENT ON FUNCTION fine_bucket(bigint) IS
  'The fine duration histogram''s bucket of P_MS: k for a duration in (1.04^(k-1), 1.04^k] ms, -1 for 0 (NULL for NULL).';
