-- ms_sum — the per-frame durations of many reports of one stack summed
-- (schema/051).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Takes jsonb_agg(ms) of one stack's rows (bigint[] or the skeletons'
-- "java_ms" alike): a JSON array of per-frame arrays, null for a row
-- without. jsonb rather than a two-dimensional bigint[] (array_agg):
-- that one fails on arrays of other lengths, which a lost stack's rows
-- (the nil stack: any reports) may have. Not an aggregate:
-- pg_get_functiondef, which `stallscope migrate` and
-- tests/integration/test_sql_functions.py compare function files with,
-- reads no aggregate.
CREATE OR REPLACE FUNCTION ms_sum(p_rows jsonb)
RETURNS bigint[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT array_agg(s ORDER BY i)
    FROM (SELECT e.i, sum(e.v::bigint)::bigint AS s
            FROM jsonb_array_elements(p_rows) AS r(a),
                 jsonb_array_elements_text(CASE jsonb_typeof(r.a) WHEN 'array' THEN r.a END)
                   WITH ORDINALITY AS e(v, i)
           GROUP BY e.i) AS x
$$;
COMMENT ON FUNCTION ms_sum(jsonb) IS
  'The per-frame total (schema/051) of a JSON array of per-frame duration arrays (one per report or row of a stack; null for one without): NULL when none has any; a frame no row has a duration for stays NULL.';
