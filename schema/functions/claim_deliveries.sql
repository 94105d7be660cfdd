-- claim_deliveries — a delivery worker's next due deliveries, leased
-- (SPEC §11.2; docs/ALERTS.md "Delivery").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Every server runs a worker; they share the outbox. A row is claimed by
-- one (FOR UPDATE SKIP LOCKED: the others pass over it while the claim
-- commits) and then kept by its lease: the caller commits before it
-- sends, so a send of up to 10 s holds no row lock, and a server killed
-- mid-send leaves a lease that runs out, after which another server
-- sends again (at least once; receivers deduplicate by event_id). The
-- lease runs from the claim's own clock (clock_timestamp), not from the
-- transaction's start. The caller folds the due apps' deltas first, in a
-- transaction of its own (st_outbox_fold_due), so the body's counts
-- include the report that caused the event: folding here, with the
-- outbox rows held, would wait on a webhook's DELETE that waits on them.

CREATE OR REPLACE FUNCTION claim_deliveries(p_limit integer, p_lease_s integer)
RETURNS TABLE (id bigint, app_id bigint, attempt integer, age_s bigint, webhook text,
               url text, secret text, format text, event_id text, type text, at text,
               app text, grp jsonb, event jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  claimed bigint[];
BEGIN
  WITH due AS (
    SELECT o.id FROM alert_outbox o
     WHERE o.due_at <= now() AND (o.leased_until IS NULL OR o.leased_until < now())
     ORDER BY o.due_at, o.id LIMIT p_limit
       FOR UPDATE SKIP LOCKED
  ), leased AS (
    UPDATE alert_outbox o
       SET leased_until = clock_timestamp() + make_interval(secs => p_lease_s),
           attempts = o.attempts + 1
      FROM due WHERE o.id = due.id
    RETURNING o.id, o.app_id
  )
  SELECT array_agg(l.id) INTO claimed FROM leased l;
  IF claimed IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY
  SELECT o.id, o.app_id, o.attempts, extract(epoch FROM now() - o.created_at)::bigint,
         o.webhook, w.url, w.secret, w.format, e.event_id::text, e.type,
         to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ap.bundle_id,
         alert_group(o.app_id, e.key1),
         jsonb_strip_nulls(jsonb_build_object('version', e.version, 'day', e.day,
                                              'reports', e.reports, 'status', e.status,
                                              'cause', e.cause))
    FROM alert_outbox o
    JOIN webhooks w ON w.app_id = o.app_id AND w.name = o.webhook
    JOIN group_events e ON e.id = o.event
    JOIN apps ap ON ap.id = o.app_id
   WHERE o.id = ANY (claimed)
   ORDER BY o.due_at, o.id;
END $$;
COMMENT ON FUNCTION claim_deliveries(integer, integer) IS
  'Claims at most P_LIMIT due deliveries of the outbox that no live lease holds, leases them for P_LEASE_S seconds from now, counts the attempt and returns what a send needs: the webhook, the event and the group as it is now (alert_group).';
