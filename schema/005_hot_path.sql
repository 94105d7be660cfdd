-- 005_hot_path.sql — less work per ingested report for PostgreSQL.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.

-- The ingest path inserts into these tables for every report. Each foreign
-- key to apps made every inserted row lock the app's row (FOR KEY SHARE: a
-- WAL record, and a multixact as soon as two transactions hold it), all on
-- one hot row per app. Apps are never deleted (no command or route does),
-- so the keys guarded nothing: the rows are only ever written with the id
-- of an app the server has just authenticated.
ALTER TABLE user_quota DROP CONSTRAINT user_quota_app_id_fkey;
ALTER TABLE report_keys DROP CONSTRAINT report_keys_app_id_fkey;
ALTER TABLE report_waits DROP CONSTRAINT report_waits_app_id_fkey;
ALTER TABLE groups DROP CONSTRAINT groups_app_id_fkey;
ALTER TABLE group_users DROP CONSTRAINT group_users_app_id_fkey;
ALTER TABLE group_daily DROP CONSTRAINT group_daily_app_id_fkey;

