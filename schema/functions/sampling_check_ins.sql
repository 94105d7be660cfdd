-- sampling_check_ins — a batch of GET /api/v1/sampling calls of one app in
-- one statement: what each caller's answer needs from the database, and
-- the callers counted as active users (docs/INGEST.md "Active users").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Element i of every array is one call: its UTC day and time, its
-- app_version (NULL: an older client, counted nowhere), its user, its OS
-- version and device (NULL when the call did not say: schema/045), and
-- whether ing_sampled chose the user that day under the server's cached
-- policy of version p_config_version. When that is not the policy's
-- current version nothing is written and no row is returned: the server
-- reads the policy again and asks again (as ingest_reports' stale). Else
-- one row per call, in order: whether the whitelist holds the user at the
-- call's time, and the reports the quota counted for the user that day.

CREATE OR REPLACE FUNCTION sampling_check_ins(p_app bigint, p_config_version bigint,
                                              p_days date[], p_ats timestamptz[],
                                              p_versions text[], p_users text[],
                                              p_sampled boolean[], p_os_versions text[],
                                              p_devices text[])
RETURNS TABLE (listed boolean, used bigint)
LANGUAGE plpgsql
-- Plans built once per session, on the primary keys (the ingest_reports
-- rule): re-planning was most of a call.
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
  listed_at boolean[];
  used_at bigint[];
BEGIN
  IF (SELECT c.version FROM app_config c WHERE c.app_id = p_app)
       IS DISTINCT FROM p_config_version THEN
    RETURN;
  END IF;
  SELECT array_agg(EXISTS (SELECT 1 FROM whitelist w
                            WHERE w.app_id = p_app AND w.user_id = u
                              AND (w.expires_at IS NULL OR w.expires_at > t))
                   ORDER BY o),
         array_agg(coalesce((SELECT q.reports FROM user_quota q
                              WHERE q.app_id = p_app AND q.day = d AND q.user_id = u), 0)
                   ORDER BY o)
    INTO listed_at, used_at
    FROM unnest(p_days, p_ats, p_users) WITH ORDINALITY AS x(d, t, u, o);
  PERFORM count_activity(p_app, array_agg(p_days[o]), array_agg(p_versions[o]),
                         array_agg(p_users[o]), array_agg(p_sampled[o]),
                         array_agg(listed_at[o]), array_agg(false),
                         array_agg(NULL::bigint), array_agg(coalesce(p_os_versions[o], '')),
                         array_agg(coalesce(p_devices[o], '')))
     FROM generate_subscripts(p_users, 1) o
    WHERE p_versions[o] IS NOT NULL
   HAVING count(*) > 0;
  RETURN QUERY SELECT listed_at[o], used_at[o] FROM generate_subscripts(listed_at, 1) o
                ORDER BY o;
END $$;
COMMENT ON FUNCTION sampling_check_ins(bigint, bigint, date[], timestamptz[], text[], text[],
                                       boolean[], text[], text[]) IS
  'A batch of sampling calls of one app: per call, whether the user is whitelisted and their quota used that day, and the calls with an app_version counted as active users (count_activity); no row when p_config_version is not the app''s current policy version.';
