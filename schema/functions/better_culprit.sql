-- better_culprit — which of a group's culprit and a report's offer the
-- group keeps (SPEC §10.5, docs/STORAGE.md "Culprits").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The offer wins only when it is better: any culprit beats none, and a
-- frame with a function beats one without (an unsymbolized `MyApp+0x1234`
-- once a late dSYM names it). Otherwise the group keeps the one it has,
-- so a group's title does not flicker between its reports' frames.
-- One exception: a function still spelled as a Swift linkage name (kept
-- before the server demangled Swift, SPEC §3.6) gives way to an offer
-- whose function is not, so groups stored before the upgrade read as the
-- new ones do after `stallscope reprocess --all`, or their next report.

CREATE OR REPLACE FUNCTION better_culprit(p_kept jsonb, p_offer jsonb)
RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_kept IS NULL THEN p_offer
              WHEN p_offer IS NOT NULL AND p_kept->>'function' IS NULL
                   AND p_offer->>'function' IS NOT NULL THEN p_offer
              WHEN p_offer->>'function' IS NOT NULL
                   AND (p_kept->>'function' LIKE '$%' OR p_kept->>'function' LIKE '\_$%'
                        OR p_kept->>'function' LIKE '\_T0%')
                   AND NOT (p_offer->>'function' LIKE '$%' OR p_offer->>'function' LIKE '\_$%'
                            OR p_offer->>'function' LIKE '\_T0%') THEN p_offer
              ELSE p_kept END
$$;
COMMENT ON FUNCTION better_culprit(jsonb, jsonb) IS
  'The culprit a group keeps when a report offers one: the offer when the group has none, when only the offer has a function, or when the kept function is a Swift linkage name and the offered one is not; else the kept one.';
