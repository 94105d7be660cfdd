-- 043_group_status_and_alerts.sql — a level-1 group's status (open,
-- resolved, ignored, regressed), its events, webhooks and the outbox their
-- deliveries are made from (SPEC §11; docs/ALERTS.md, docs/STORAGE.md
-- "Lifecycle").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why a table of its own, not columns on groups: the fold holds a popular
-- group's row locked while it counts a second of reports, and a user's
-- "resolve" must not wait for it; ingest reads a status by key without a
-- lock and takes one only to change it. A group without a row is open.

CREATE TABLE group_status (
  app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  key1 text NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'resolved', 'ignored', 'regressed')),
  resolved_in text CHECK (resolved_in IS NULL OR status = 'resolved'),
  until_at timestamptz CHECK (until_at IS NULL OR status = 'ignored'),
  until_reports bigint CHECK (until_reports IS NULL OR (until_reports > 0 AND status = 'ignored')),
  reports_since bigint NOT NULL DEFAULT 0 CHECK (reports_since >= 0),
  changed_at timestamptz NOT NULL,
  PRIMARY KEY (app_id, key1)
);
COMMENT ON TABLE group_status IS
  'A level-1 group''s lifecycle status (SPEC §11.1), by app and key: absent means open. Written by a user (PATCH), by ingest and reprocessing (regressed), by the fold (ignored until N reports: reports_since counts the level-1 reports folded since changed_at) and by the background loop (ignored until a time). Outlives everything but its app: a status belongs to its key.';
CREATE INDEX group_status_by_status ON group_status (app_id, status);
COMMENT ON INDEX group_status_pkey IS
  'A group''s status by key: ingest''s probe (no lock), the replies, a PATCH.';
COMMENT ON INDEX group_status_by_status IS
  'The groups list''s status filter when it names statuses other than open.';
CREATE INDEX group_status_until ON group_status (until_at)
  WHERE status = 'ignored' AND until_at IS NOT NULL;
COMMENT ON INDEX group_status_until IS
  'The background loop''s probe for ignores whose time has passed.';

CREATE TABLE group_events (
  id bigserial PRIMARY KEY,
  event_id uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  key1 text NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  type text NOT NULL CHECK (type IN ('new_group', 'regressed', 'spike', 'resolved', 'ignored',
                                     'open')),
  status text NOT NULL CHECK (status IN ('open', 'resolved', 'ignored', 'regressed')),
  cause text NOT NULL CHECK (cause IN ('user', 'report', 'until')),
  version text,
  day date CHECK ((day IS NOT NULL) = (type = 'spike')),
  reports bigint
);
COMMENT ON TABLE group_events IS
  'What happened to a level-1 group: made (new_group), a status changed (resolved, ignored, open, regressed) or a spike (SPEC §11). Written in the transaction of its cause; a webhook subscribed to its type gets an alert_outbox row in the same transaction (group_events_to_outbox). VERSION is the report''s version (new_group, regressed) or resolved_in; DAY and REPORTS the spike''s.';
CREATE INDEX group_events_by_group ON group_events (app_id, key1, id);
COMMENT ON INDEX group_events_pkey IS 'An event by id: the outbox''s reference.';
COMMENT ON INDEX group_events_event_id_key IS
  'The id a receiver deduplicates by is one event''s only.';
COMMENT ON INDEX group_events_by_group IS 'A group''s history, newest first.';
CREATE UNIQUE INDEX group_events_one_new_group ON group_events (app_id, key1)
  WHERE type = 'new_group';
COMMENT ON INDEX group_events_one_new_group IS
  'A group is new once: two reprocessors moving waiting reports into one real group, or two batches making it, make one event.';
CREATE UNIQUE INDEX group_events_one_spike_a_day ON group_events (app_id, key1, day)
  WHERE type = 'spike';
COMMENT ON INDEX group_events_one_spike_a_day IS 'A spike fires once per group and day.';

ALTER TABLE groups ADD COLUMN waits_for_symbols boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN groups.waits_for_symbols IS
  'Level 1: the group''s frames include one of an app image without its debug file (frames_wait_for_symbols): its reports move to their real group when the file arrives, and it raises no event. Set when the row is made, never changed after.';
-- The groups temporary now: reports still wait in them and their frames
-- hold an unsymbolized identity. The reports' waits keep UUIDs, not the
-- image names frames_wait_for_symbols compares, so a group whose only
-- unsymbolized frame is a system image's counts too: it raises no event
-- until its reports move, which is the safer side.
UPDATE groups g SET waits_for_symbols = true
  FROM (SELECT DISTINCT app_id, key1 FROM reports WHERE pending) p
 WHERE g.app_id = p.app_id AND g.level = 1 AND g.key = p.key1
   AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(g.frames) AS f(identity)
                WHERE f.identity ~ '^[^!]*\+0x[0-9a-f]+$');
-- Every real group already there was new before alerts existed: its event
-- says when, and no move into it later announces it again.
INSERT INTO group_events (app_id, key1, at, type, status, cause)
SELECT app_id, key, first_seen, 'new_group', 'open', 'report'
  FROM groups WHERE level = 1 AND NOT waits_for_symbols ORDER BY first_seen;

CREATE TABLE webhooks (
  app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
  url text NOT NULL CHECK (url ~* '^https?://' AND length(url) <= 2048),
  secret text NOT NULL CHECK (length(secret) BETWEEN 1 AND 256),
  events text[] NOT NULL CHECK (events <@ ARRAY['new_group', 'regressed', 'spike']),
  format text NOT NULL CHECK (format IN ('json', 'slack')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, name)
);
COMMENT ON TABLE webhooks IS
  'Where an app''s alerts go (SPEC §11.2). The secret is kept as given, since it signs every body, and never returned by the API.';

COMMENT ON INDEX webhooks_pkey IS 'A webhook by app and name: the API''s routes, the trigger''s join.';

CREATE TABLE alert_outbox (
  id bigserial PRIMARY KEY,
  event bigint NOT NULL REFERENCES group_events (id) ON DELETE CASCADE,
  app_id bigint NOT NULL,
  webhook text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  due_at timestamptz NOT NULL DEFAULT now(),
  attempts integer NOT NULL DEFAULT 0,
  leased_until timestamptz,
  FOREIGN KEY (app_id, webhook) REFERENCES webhooks (app_id, name) ON DELETE CASCADE
);
COMMENT ON TABLE alert_outbox IS
  'One delivery of one event to one webhook still to make: inserted with the event, claimed by a server''s delivery worker with a lease (FOR UPDATE SKIP LOCKED, leased_until), deleted once delivered or after 24 h of retries. A lease that expires (its server died) makes the row claimable again: at least once.';
COMMENT ON INDEX alert_outbox_pkey IS 'A claimed delivery, by id: its outcome recorded.';
CREATE INDEX alert_outbox_due ON alert_outbox (due_at);
COMMENT ON INDEX alert_outbox_due IS 'The workers'' claims, oldest due first.';
CREATE INDEX alert_outbox_event ON alert_outbox (event);
COMMENT ON INDEX alert_outbox_event IS 'Deleting an event deletes its deliveries.';

CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  app_id bigint NOT NULL,
  webhook text NOT NULL,
  event_id uuid NOT NULL,
  type text NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  attempt integer NOT NULL,
  result text NOT NULL CHECK (result IN ('delivered', 'failed', 'gave_up')),
  status integer,
  error text,
  FOREIGN KEY (app_id, webhook) REFERENCES webhooks (app_id, name) ON DELETE CASCADE
);
COMMENT ON TABLE webhook_deliveries IS
  'Every attempt to deliver to a webhook, the last 100 per webhook kept (GET …/webhooks/{name}/deliveries).';
COMMENT ON INDEX webhook_deliveries_pkey IS 'An attempt by id: the log''s pruning keeps the last 100.';
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (app_id, webhook, id);
COMMENT ON INDEX webhook_deliveries_by_webhook IS 'A webhook''s attempts, newest first.';
