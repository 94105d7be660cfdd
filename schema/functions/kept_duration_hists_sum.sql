-- kept_duration_hists_sum — the sum of two dimension or facet rows' duration
-- histograms, whether each keeps one or not (schema/034).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- add_hists(kept_duration_hist(a, a_max), kept_duration_hist(b, b_max))
-- in one expression on the four columns. Written out rather than so:
-- PostgreSQL inlines a SQL function only when each argument it reads more
-- than once is cheap, and add_hists reads each of its arguments eight
-- times, so a call as its argument made add_hists a call through the SQL
-- function executor for every row the fold upserts, and once per moved
-- report for the row a move adds to (schema/032's reason;
-- measured there at 4.5–5.0 s against 0.6–0.9 s for 849,149 rows). Here
-- every argument is a column, and kept_duration_bucket is inlined in turn.

CREATE OR REPLACE FUNCTION kept_duration_hists_sum(p_a anycompatiblearray, p_a_max bigint,
                                                   p_b anycompatiblearray, p_b_max bigint)
RETURNS anycompatiblearray LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ARRAY[
    kept_duration_bucket(p_a, p_a_max, 1) + kept_duration_bucket(p_b, p_b_max, 1),
    kept_duration_bucket(p_a, p_a_max, 2) + kept_duration_bucket(p_b, p_b_max, 2),
    kept_duration_bucket(p_a, p_a_max, 3) + kept_duration_bucket(p_b, p_b_max, 3),
    kept_duration_bucket(p_a, p_a_max, 4) + kept_duration_bucket(p_b, p_b_max, 4),
    kept_duration_bucket(p_a, p_a_max, 5) + kept_duration_bucket(p_b, p_b_max, 5),
    kept_duration_bucket(p_a, p_a_max, 6) + kept_duration_bucket(p_b, p_b_max, 6),
    kept_duration_bucket(p_a, p_a_max, 7) + kept_duration_bucket(p_b, p_b_max, 7),
    kept_duration_bucket(p_a, p_a_max, 8) + kept_duration_bucket(p_b, p_b_max, 8)];
$$;
COMMENT ON FUNCTION kept_duration_hists_sum(anycompatiblearray, bigint, anycompatiblearray, bigint) IS
  'Element-wise sum of two group_dim_days or group_facet_days duration histograms, each P_X or, when NULL (at most one duration), the bucket of P_X_MAX (kept_duration_bucket).';
