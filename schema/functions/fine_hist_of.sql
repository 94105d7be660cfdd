-- fine_hist_of — the fine duration histogram of some durations
-- (schema/044; fine_hist_add says what one is).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).

CREATE OR REPLACE FUNCTION fine_hist_of(p_durations bigint[], p_weight integer)
RETURNS integer[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT fine_hist_from(array_agg(fine_bucket(ms)), array_agg(p_weight::bigint))
            FROM unnest(p_durations) AS ms WHERE ms >= 0);
END $$;
COMMENT ON FUNCTION fine_hist_of(bigint[], integer) IS
  'The fine duration histogram of P_DURATIONS (NULLs left out), each count times P_WEIGHT (-1 to take them out of a row); ''{}'' when none.';
