-- 002_ingest.sql — reports, their groups, and the upload policy.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped: add 003_….sql instead.

-- ---- Policy ------------------------------------------------------------

CREATE TABLE app_config (
  app_id bigint PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
  sample_rate double precision NOT NULL DEFAULT 0.05
    CHECK (sample_rate >= 0 AND sample_rate <= 1),
  daily_quota integer NOT NULL DEFAULT 20 CHECK (daily_quota >= 0),
  retention_days integer NOT NULL DEFAULT 7
    CHECK (retention_days BETWEEN 1 AND 3650),
  grouping_rules jsonb NOT NULL
    DEFAULT '{"skip_images": [], "skip_prefixes": []}',
  updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE app_config IS
  'Per-app upload and grouping policy (SPEC §5, §6). An app without a row uses the column defaults, which are the Matrix policy: 5% of users a day, 20 reports each, 7 days kept.';
COMMENT ON INDEX app_config_pkey IS 'One policy per app.';

CREATE TABLE whitelist (
  app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  user_id text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 4096),
  note text,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, user_id)
);
COMMENT ON TABLE whitelist IS
  'Users who always upload, with no daily quota, until expires_at (NULL: forever): testers, VIPs, users who reported a freeze.';
COMMENT ON INDEX whitelist_pkey IS
  'Answers "is this user whitelisted" on every ingest and sampling request.';

CREATE TABLE user_quota (
  app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  day date NOT NULL,
  user_id text NOT NULL,
  reports integer NOT NULL CHECK (reports >= 0),
  PRIMARY KEY (app_id, day, user_id)
);
COMMENT ON TABLE user_quota IS
  'Reports stored per user and UTC day. Ingest increments a row only while it is below the daily quota, in one statement, so concurrent uploads of one user can never pass the quota; rows older than the retention are deleted by the purge.';
COMMENT ON INDEX user_quota_pkey IS
  'The row an ingest increments and the sampling endpoint reads.';

-- ---- Reports -----------------------------------------------------------

CREATE SEQUENCE report_ids AS bigint;
COMMENT ON SEQUENCE report_ids IS
  'Our report ids: unique across apps and days, so GET /api/v1/reports/{id} needs no app or day.';

CREATE TABLE report_keys (
  app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  report_id text NOT NULL,
  id bigint NOT NULL,
  received_day date NOT NULL,
  PRIMARY KEY (app_id, report_id)
);
COMMENT ON TABLE report_keys IS
  'The client report_id of every stored report (idempotency: a resend finds its first answer here, whatever day it arrives) and where the report lives. Not partitioned, so it can be unique across days; the purge deletes its rows with their partitions.';
COMMENT ON INDEX report_keys_pkey IS 'Idempotency: one stored report per client id and app.';
CREATE UNIQUE INDEX report_keys_id_idx ON report_keys (id);
COMMENT ON INDEX report_keys_id_idx IS
  'Finds a report''s app and day partition from its id.';
CREATE INDEX report_keys_day_idx ON report_keys (app_id, received_day);
COMMENT ON INDEX report_keys_day_idx IS 'Lets the purge delete one app-day at a time.';

CREATE TABLE reports (
  id bigint NOT NULL,
  app_id bigint NOT NULL,
  received_day date NOT NULL,
  received_at timestamptz NOT NULL,
  report_id text NOT NULL,
  user_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('stall', 'hang', 'cpu', 'crash')),
  source text NOT NULL,
  app_version text,
  build text,
  os text,
  os_version text,
  os_build text,
  device text,
  client_timestamp text,
  duration_ms bigint,
  key1 text NOT NULL,
  key2 text NOT NULL,
  pending boolean NOT NULL,
  raw jsonb NOT NULL,
  symbolized jsonb NOT NULL,
  PRIMARY KEY (app_id, received_day, id)
) PARTITION BY LIST (app_id);
COMMENT ON TABLE reports IS
  'Stored reports, partitioned by app and then by UTC day received (reports_a<app>_<yyyymmdd>), so retention drops whole days per app. raw is the report in native v1 form (what reprocessing symbolizes again); symbolized holds images with their status, every thread symbolized and the representative stack; pending means some frame waits for a debug file.';
COMMENT ON INDEX reports_pkey IS
  'Reads one report by (app, day, id) once report_keys has located it.';
CREATE INDEX reports_group_idx ON reports (app_id, key1, key2, received_at DESC, id DESC);
COMMENT ON INDEX reports_group_idx IS
  'Lists a group''s reports newest first with keyset pagination.';

-- Day partitions are made on demand (and a few days ahead) by the server;
-- names derive from integers only.
CREATE FUNCTION ensure_report_partition(p_app bigint, p_day date)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  app_part text := format('reports_a%s', p_app);
  day_part text := format('reports_a%s_%s', p_app, to_char(p_day, 'YYYYMMDD'));
  idx record;
BEGIN
  IF to_regclass(day_part) IS NOT NULL THEN
    RETURN;
  END IF;
  -- Serialize creators: two servers may need the same partition at once.
  PERFORM pg_advisory_xact_lock(hashtext('stallscope.partitions'));
  IF to_regclass(app_part) IS NULL THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF reports FOR VALUES IN (%s) PARTITION BY RANGE (received_day)',
                   app_part, p_app);
    EXECUTE format('COMMENT ON TABLE %I IS %L', app_part,
                   format('Reports of app %s, partitioned by UTC day received.', p_app));
  END IF;
  IF to_regclass(day_part) IS NULL THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                   day_part, app_part, p_day, p_day + 1);
    EXECUTE format('COMMENT ON TABLE %I IS %L', day_part,
                   format('Reports of app %s received on %s; retention drops it whole.',
                          p_app, p_day));
  END IF;
  -- Indexes of partitions are the parent's, made by PostgreSQL: say so.
  FOR idx IN
    SELECT c.relname, p.relname AS parent
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indexrelid
      JOIN pg_inherits h ON h.inhrelid = i.indexrelid
      JOIN pg_class p ON p.oid = h.inhparent
     WHERE i.indrelid IN (to_regclass(app_part), to_regclass(day_part))
       AND obj_description(c.oid, 'pg_class') IS NULL
  LOOP
    EXECUTE format('COMMENT ON INDEX %I IS %L', idx.relname,
                   format('Partition of %s.', idx.parent));
  END LOOP;
END $$;
COMMENT ON FUNCTION ensure_report_partition(bigint, date) IS
  'Creates the reports partition of one app and UTC day if it is missing.';

CREATE FUNCTION drop_report_partitions(p_app bigint, p_before date)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  part record;
  dropped integer := 0;
BEGIN
  FOR part IN
    SELECT c.relname
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      JOIN pg_class p ON p.oid = i.inhparent
     WHERE p.relname = format('reports_a%s', p_app)
       AND c.relname ~ '^reports_a[0-9]+_[0-9]{8}$'
       AND to_date(right(c.relname, 8), 'YYYYMMDD') < p_before
  LOOP
    EXECUTE format('DROP TABLE %I', part.relname);
    dropped := dropped + 1;
  END LOOP;
  RETURN dropped;
END $$;
COMMENT ON FUNCTION drop_report_partitions(bigint, date) IS
  'Retention: drops every day partition of one app older than p_before; returns how many.';

CREATE TABLE report_waits (
  app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  uuid uuid NOT NULL,
  report bigint NOT NULL,
  received_day date NOT NULL,
  image_name text NOT NULL,
  arch text,
  reason text NOT NULL CHECK (reason IN ('missing', 'malformed', 'symbol_table')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, uuid, report)
);
COMMENT ON TABLE report_waits IS
  'Which reports are waiting for a better debug file of which image: none uploaded (missing), unreadable (malformed), or only a symbol table so far. An upload of that UUID makes the reprocessor symbolize those reports again and move them to their real groups; GET …/dsyms/missing ranks the missing ones.';
COMMENT ON INDEX report_waits_pkey IS
  'Finds the reports an uploaded UUID unblocks.';
CREATE INDEX report_waits_report_idx ON report_waits (report);
COMMENT ON INDEX report_waits_report_idx IS
  'Clears a report''s waits when it is reprocessed or purged.';
CREATE INDEX report_waits_uuid_idx ON report_waits (uuid);
COMMENT ON INDEX report_waits_uuid_idx IS
  'The reprocessor joins waits with debug files by UUID.';

-- ---- Groups ------------------------------------------------------------

CREATE TABLE groups (
  app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  level smallint NOT NULL CHECK (level IN (1, 2)),
  key text NOT NULL,
  parent_key text,
  frames jsonb NOT NULL,
  reports bigint NOT NULL CHECK (reports >= 0),
  users bigint NOT NULL CHECK (users >= 0),
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (app_id, level, key)
);
COMMENT ON TABLE groups IS
  'Stall groups (SPEC §6): level 1 keyed by the innermost two frame identities, level 2 by the innermost four inside its level-1 group (parent_key). Counters are all-time and outlive the reports: retention never touches them.';
COMMENT ON INDEX groups_pkey IS 'Updates a group''s counters at ingest; reads one group.';
CREATE INDEX groups_parent_idx ON groups (app_id, parent_key) WHERE level = 2;
COMMENT ON INDEX groups_parent_idx IS 'Lists the level-2 subgroups of a level-1 group.';

CREATE TABLE group_users (
  app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  level smallint NOT NULL,
  key text NOT NULL,
  user_id text NOT NULL,
  reports bigint NOT NULL CHECK (reports >= 0),
  PRIMARY KEY (app_id, level, key, user_id)
);
COMMENT ON TABLE group_users IS
  'Reports per user and group: groups.users counts these rows, so distinct users stay exact when reprocessing moves a report between groups.';
COMMENT ON INDEX group_users_pkey IS 'One counter per user and group.';

CREATE TABLE group_daily (
  app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  level smallint NOT NULL,
  key text NOT NULL,
  day date NOT NULL,
  app_version text NOT NULL,
  os_version text NOT NULL,
  device text NOT NULL,
  kind text NOT NULL,
  user_id text NOT NULL,
  reports bigint NOT NULL CHECK (reports >= 0),
  PRIMARY KEY (app_id, level, key, day, app_version, os_version, device, kind, user_id)
);
COMMENT ON TABLE group_daily IS
  'Reports per group, UTC day, app version, OS version, device, kind and user: the group list''s date range and filters sum these (reports) and count distinct user_id (users), and the per-day series groups them by day. Kept forever like the group counters.';
COMMENT ON INDEX group_daily_pkey IS 'One counter per combination, updated at ingest.';
CREATE INDEX group_daily_day_idx ON group_daily (app_id, level, day);
COMMENT ON INDEX group_daily_day_idx IS 'Group lists over a date range without scanning all history.';
