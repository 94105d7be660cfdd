-- offer_culprit — reprocessing: a report's new culprit offered to both of
-- its groups (docs/STORAGE.md "Culprits").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Called after move_report in the same transaction, which has locked both
-- rows already, level 1's then level 2's, in the order every writer of
-- groups locks them (updating them only now would take them after the day
-- rows: ingest_reports' order reversed, a deadlock); a report
-- whose keys did not change (its culprit lies deeper than its keys) is the
-- one that can still name an unsymbolized culprit.

CREATE OR REPLACE FUNCTION offer_culprit(p_app bigint, p_key1 text, p_key2 text,
                                         p_culprit jsonb)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF p_culprit IS NULL THEN
    RETURN;
  END IF;
  UPDATE groups g SET culprit = better_culprit(g.culprit, p_culprit)
   WHERE g.app_id = p_app AND g.level = 1 AND g.key = p_key1
     AND better_culprit(g.culprit, p_culprit) IS DISTINCT FROM g.culprit;
  UPDATE groups g SET culprit = better_culprit(g.culprit, p_culprit)
   WHERE g.app_id = p_app AND g.level = 2 AND g.key = p_key2
     AND better_culprit(g.culprit, p_culprit) IS DISTINCT FROM g.culprit;
END $$;
COMMENT ON FUNCTION offer_culprit(bigint, text, text, jsonb) IS
  'Reprocessing: offers a report''s culprit to its level-1 and level-2 groups (better_culprit decides), level 1 first.';
