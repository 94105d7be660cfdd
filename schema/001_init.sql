-- 001_init.sql — apps and their debug files.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped: add 002_….sql instead.

CREATE TABLE apps (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  bundle_id text NOT NULL,
  name text NOT NULL,
  ingest_key_hash bytea NOT NULL CHECK (length(ingest_key_hash) = 32),
  upload_token_hash bytea NOT NULL CHECK (length(upload_token_hash) = 32),
  admin_token_hash bytea NOT NULL CHECK (length(admin_token_hash) = 32),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT apps_bundle_id_key UNIQUE (bundle_id),
  CONSTRAINT apps_bundle_id_shape CHECK (bundle_id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$')
);
COMMENT ON TABLE apps IS
  'One row per app, named in URLs by its bundle id. Credentials are kept only as BLAKE2b-256 hashes: the plain keys are printed once by `stallscope app create`.';
COMMENT ON INDEX apps_pkey IS 'Surrogate key other tables reference.';
COMMENT ON INDEX apps_bundle_id_key IS 'Resolves {app} in URLs; a bundle id names one app.';

CREATE UNIQUE INDEX apps_ingest_key_hash_idx ON apps (ingest_key_hash);
CREATE UNIQUE INDEX apps_upload_token_hash_idx ON apps (upload_token_hash);
CREATE UNIQUE INDEX apps_admin_token_hash_idx ON apps (admin_token_hash);
COMMENT ON INDEX apps_ingest_key_hash_idx IS
  'Finds the app of a device''s X-Stallscope-Key (ingest has no app in its URL) and tells another app''s key (403) from an unknown one (401).';
COMMENT ON INDEX apps_upload_token_hash_idx IS
  'Tells an upload token of another app (403) from an unknown one (401).';
COMMENT ON INDEX apps_admin_token_hash_idx IS
  'Finds the app of an admin token on routes without {app}, and tells another app''s token (403) from an unknown one (401).';

CREATE TABLE debug_files (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  uuid uuid NOT NULL,
  arch text NOT NULL,
  name text NOT NULL,
  kind text NOT NULL,
  has_dwarf boolean NOT NULL,
  functions bigint NOT NULL CHECK (functions >= 0),
  file_size bigint NOT NULL CHECK (file_size >= 0),
  symcache_size bigint NOT NULL CHECK (symcache_size >= 0),
  symcache_version integer NOT NULL,
  debug_path text NOT NULL,
  symcache_path text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT debug_files_slice_key UNIQUE (app_id, uuid, arch)
);
COMMENT ON TABLE debug_files IS
  'One row per Mach-O slice (LC_UUID + arch) uploaded for an app: a dSYM DWARF file or a plain binary with only a symbol table. Paths are relative to the data dir; the files are written and renamed into place before the row is committed, so a row never points at a half-written file. A row with DWARF is never replaced by one without.';
COMMENT ON INDEX debug_files_pkey IS
  'Keyset pagination of GET …/dsyms, newest first.';
COMMENT ON INDEX debug_files_slice_key IS
  'Symbolication finds the debug file of an image by (app, UUID, arch); re-uploads of a slice are idempotent.';

CREATE INDEX debug_files_app_id_idx ON debug_files (app_id, id);
COMMENT ON INDEX debug_files_app_id_idx IS
  'Lists one app''s debug files newest first without scanning other apps''.';
