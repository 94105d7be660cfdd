-- ms_sum — the per-frame durations of many reports of one stack summed
-- (schema/051).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Takes array_agg(ms) FILTER (WHERE ms IS NOT NULL) of one stack's rows:
-- the rows of one stack have one duration per frame, so the arrays have
-- the same length and make one two-dimensional array, whose columns this
-- sums. Not an aggregate: pg_get_functiondef, which `stallscope migrate`
-- and tests/integration/test_sql_functions.py compare function files
-- with, reads no aggregate.
CREATE OR REPLACE FUNCTION ms_sum(p_rows bigint[])
RETURNS bigint[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT array_agg(s ORDER BY c)
    FROM (SELECT (k - 1) % coalesce(array_length(p_rows, 2), array_length(p_rows, 1)) AS c,
                 sum(v)::bigint AS s
            FROM unnest(p_rows) WITH ORDINALITY AS u(v, k)
           GROUP BY 1) AS x
$$;
COMMENT ON FUNCTION ms_sum(bigint[]) IS
  'Column sums of a two-dimensional array of per-frame durations (one row per report or row of one stack; a one-dimensional array is one row): their per-frame total (schema/051), NULL for no rows; a column of NULLs stays NULL.';
