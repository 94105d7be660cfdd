"""`stallscope migrate` and `stallscope app create` against fresh databases."""
import hashlib
import os
import shutil
import subprocess

from conftest import BIN, REPO, create_app, migrate, psql, run, stallscope


def migrate_up_to(url, tmp_path, version):
    """Applies the migrations before VERSION only, as an older release did:
    with the function definitions they hold and no function file."""
    older = tmp_path / "schema"
    (older / "functions").mkdir(parents=True)
    for f in (REPO / "schema").glob("*.sql"):
        if int(f.name.split("_")[0]) < version:
            shutil.copy(f, older)
    migrate(url, extra_env={"STALLSCOPE_SCHEMA_DIR": str(older)})

def test_migrate_fresh_then_noop(cluster):
    url = cluster.create_db("it_migrate_fresh")
    first = migrate(url).stdout
    assert "applied 001_init.sql" in first
    rows = psql(url,
                "SELECT version, name FROM schema_migrations ORDER BY 1")
    assert rows.splitlines()[0] == "1|001_init.sql"
    tables = psql(url,
                  "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                  " ORDER BY 1").split()
    assert {"apps", "debug_files", "schema_migrations"} <= set(tables)

    before = psql(url, "SELECT version, checksum, applied_at "
                                "FROM schema_migrations ORDER BY 1")
    second = migrate(url).stdout
    assert not [l for l in second.splitlines() if l.startswith("applied ")]
    assert "0 applied now" in second
    assert psql(url, "SELECT version, checksum, applied_at "
                              "FROM schema_migrations ORDER BY 1") == before


def test_every_table_and_index_is_commented(db):
    missing = psql(db, """
        SELECT c.relname FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i', 'p')
          AND obj_description(c.oid, 'pg_class') IS NULL""")
    assert missing.strip() == ""


def test_changed_migration_is_refused(cluster, tmp_path):
    url = cluster.create_db("it_migrate_changed")
    schema = tmp_path / "schema"
    shutil.copytree(REPO / "schema", schema)
    migrate(url, extra_env={"STALLSCOPE_SCHEMA_DIR": str(schema)})
    with open(schema / "001_init.sql", "a") as f:
        f.write("\n-- edited after shipping\n")
    p = migrate(url, extra_env={"STALLSCOPE_SCHEMA_DIR": str(schema)},
                check=False)
    assert p.returncode == 1
    assert "001_init.sql changed after it was applied" in p.stderr


def test_a_sum_recorded_before_a_comment_edit_is_accepted_and_replaced(cluster):
    """027's comments were edited after databases had applied it (bce56bc →
    b491dfc, statements unchanged): such a database's recorded sum is
    accepted once and replaced by the file's; any other sum is refused."""
    url = cluster.create_db("it_migrate_superseded")
    migrate(url)
    current = hashlib.sha256((REPO / "schema/027_dim_filter_index.sql").read_bytes()).hexdigest()
    assert psql(url, "SELECT checksum FROM schema_migrations WHERE version = 27") == current
    psql(url, "UPDATE schema_migrations SET checksum ="
              " '3eb1f9470f931c88c9015882b580c05c52cfa539c2e7b1af54d7694eadbbabb3'"
              " WHERE version = 27")
    assert "0 applied now" in migrate(url).stdout
    assert psql(url, "SELECT checksum FROM schema_migrations WHERE version = 27") == current

    psql(url, f"UPDATE schema_migrations SET checksum = '{'0' * 64}' WHERE version = 28")
    p = migrate(url, check=False)
    assert p.returncode == 1
    assert "028_group_counters_from_deltas.sql changed after it was applied" in p.stderr


def test_failing_migration_applies_nothing(cluster, tmp_path):
    url = cluster.create_db("it_migrate_failing")
    schema = tmp_path / "schema"
    shutil.copytree(REPO / "schema", schema)
    (schema / "999_broken.sql").write_text(
        "CREATE TABLE half_done (id int);\nSELECT no_such_function();\n")
    p = migrate(url, extra_env={"STALLSCOPE_SCHEMA_DIR": str(schema)},
                check=False)
    assert p.returncode == 1 and "999_broken.sql failed" in p.stderr
    assert psql(url, "SELECT to_regclass('half_done') IS NULL") \
        .strip() == "t"
    assert psql(url, "SELECT count(*) FROM schema_migrations "
                              "WHERE version = 999").strip() == "0"


def test_report_documents_become_text_and_stay_lz4(cluster, tmp_path):
    """012 turns the two documents of stored reports into text: the rows
    read back the same, and every table of the partition tree, old or made
    afterwards, still compresses them with lz4 (a type change resets it)."""
    url = cluster.create_db("it_migrate_documents")
    migrate_up_to(url, tmp_path, 12)
    app = psql(url, "SELECT id FROM apps WHERE bundle_id = '%s'" %
               create_app(url)["app"]).strip()
    raw, sym = '{"report_id": "r1", "n": [1, 2]}', '{"images": [], "x": "\\u00e9"}'
    psql(url, f"""
        SELECT ensure_report_partition({app}, DATE '2026-11-01');
        INSERT INTO reports (id, app_id, received_day, received_at, report_id, user_id,
                             kind, source, key1, key2, pending, raw, symbolized)
        VALUES (1, {app}, '2026-11-01', now(), 'r1', 'u1', 'stall', 'native', 'k1',
                'k2', false, '{raw}', '{sym}')""")
    stored = psql(url, "SELECT raw::text, symbolized::text FROM reports")
    as_read = psql(url, "SELECT raw::jsonb, symbolized::jsonb FROM reports")

    assert "applied 012_" in migrate(url).stdout
    psql(url, f"SELECT ensure_report_partition({app}, DATE '2026-11-02')")
    # 018 keeps their stacks apart: put together, they read the same.
    assert psql(url, "SELECT unstack(app_id, raw, raw_stacks)::jsonb,"
                     " unstack(app_id, symbolized, symbolized_stacks)::jsonb"
                     " FROM reports") == as_read
    assert psql(url, "SELECT raw::text, symbolized::text FROM reports") != stored
    columns = psql(url, """
        SELECT t.relid::regclass, a.attname, a.atttypid::regtype, a.attcompression
          FROM pg_partition_tree('reports') t
          JOIN pg_attribute a ON a.attrelid = t.relid
         WHERE a.attname IN ('raw', 'symbolized') ORDER BY 1, 2""").split()
    assert len(columns) == 2 * 4  # reports, the app's table, two days
    assert all(c.endswith("|text|l") for c in columns), columns
    # ...and ingest stores them without PostgreSQL parsing them again.
    assert psql(url, "SELECT prosrc ~ '::json[^b]' FROM pg_proc"
                              " WHERE proname = 'ingest_reports'").strip() == "f"



def test_report_indexes_leave_out_the_partition_keys(cluster, tmp_path):
    """033: every index of every reports partition, old or made afterwards,
    leaves out app_id and received_day (the same in all of a partition's
    rows), and a report is still read by (app, day, id) through its id."""
    url = cluster.create_db("it_migrate_report_indexes")
    migrate_up_to(url, tmp_path, 33)
    app = psql(url, "SELECT id FROM apps WHERE bundle_id = '%s'" %
               create_app(url)["app"]).strip()
    psql(url, f"""
        SELECT ensure_report_partition({app}, DATE '2026-11-01');
        INSERT INTO reports (id, app_id, received_day, received_at, report_id, user_id,
                             kind, source, key1, key2, pending, raw, symbolized, in_sample)
        SELECT i, {app}, '2026-11-01', now(), 'r' || i, 'u1', 'stall', 'native', 'k1',
               'k2', false, '{{}}', '{{}}', true FROM generate_series(1, 2000) i""")
    index_columns = """
        SELECT i.indexrelid::regclass || ':' || coalesce(string_agg(a.attname, ',' ORDER BY k.n), '')
          FROM pg_partition_tree('reports') t
          JOIN pg_index i ON i.indrelid = t.relid
          CROSS JOIN unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
          LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
         WHERE t.isleaf GROUP BY i.indexrelid ORDER BY 1"""
    assert "app_id" in psql(url, index_columns)

    assert "applied 033_" in migrate(url).stdout
    psql(url, f"SELECT ensure_report_partition({app}, DATE '2026-11-02')")
    indexes = psql(url, index_columns).split()
    # id, group, waits and (046) user, two days (an expression's column
    # is 0: none)
    assert len(indexes) == 2 * 4, indexes
    assert not [i for i in indexes if "app_id" in i or "received_day" in i], indexes
    plan = psql(url, f"""SET enable_seqscan = off;
        EXPLAIN SELECT report_id FROM reports
         WHERE app_id = {app} AND received_day = '2026-11-01' AND id = 1500""")
    assert "reports_a%s_20261101_id_idx" % app in plan, plan
    assert psql(url, f"SELECT report_id FROM reports WHERE app_id = {app}"
                     " AND received_day = '2026-11-01' AND id = 1500").strip() == "r1500"


def test_daily_counts_become_one_row_per_report(cluster, tmp_path):
    """013 keeps one group_daily row per report for both levels: every
    group's per-day reports and distinct users read the same before and
    after, and the rows stored before are moved, not recounted."""
    url = cluster.create_db("it_migrate_daily")
    migrate_up_to(url, tmp_path, 13)
    app = psql(url, "SELECT id FROM apps WHERE bundle_id = '%s'" %
               create_app(url)["app"]).strip()
    version = psql(url, f"WITH made AS (INSERT INTO app_config (app_id) VALUES ({app})"
                        " RETURNING version) SELECT version FROM made").strip()
    # Two level-1 groups, three level-2 groups, users and versions overlapping.
    rows = [("k1", "k1a", "u1", "1.0"), ("k1", "k1a", "u1", "1.0"), ("k1", "k1b", "u1", "2.0"),
            ("k1", "k1b", "u2", "2.0"), ("k2", "k2a", "u2", "1.0"), ("k2", "k2a", "u3", "1.0")]
    for i, (key1, key2, user, app_version) in enumerate(rows):
        psql(url, f"INSERT INTO whitelist (app_id, user_id) VALUES ({app}, '{user}')"
                  " ON CONFLICT DO NOTHING")
        arr = lambda v, t="text": f"ARRAY[{v}]::{t}[]"
        assert psql(url, f"""
            SELECT outcome FROM ingest_reports({app}, {version}, {arr(f"'r{i}'")},
              {arr(f"'{user}'")}, {arr("current_date - " + str(int(i >= 4)), "date")},
              {arr("now()", "timestamptz")}, {arr("true", "boolean")}, {arr("'stall'")},
              {arr("'native'")}, {arr(f"'{app_version}'")}, {arr("NULL")}, {arr("NULL")},
              {arr("'17.2'")}, {arr("NULL")}, {arr("'iPhone14,2'")}, {arr("NULL")},
              {arr("NULL", "bigint")}, {arr(f"'{key1}'")}, {arr(f"'{key2}'")},
              {arr("false", "boolean")}, {arr("'[]'")}, {arr("'[]'")}, {arr("'[]'")},
              {arr("'{}'")}, {arr("'{}'")})""").strip() == "stored"
    per_group = """
        SELECT g.level, g.key, d.day, d.app_version, sum(d.reports),
               count(DISTINCT d.user_id)
          FROM groups g JOIN group_daily d ON d.app_id = g.app_id AND {match}
         GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"""
    before = psql(url, per_group.format(match="d.level = g.level AND d.key = g.key"))
    assert [l.split("|")[4:] for l in before.splitlines()] == [["2", "1"], ["2", "2"], ["2", "2"]] * 2

    migrate_up_to(url, tmp_path / "at13", 14)  # 016 replaces group_daily
    assert psql(url, "SELECT max(version) FROM schema_migrations") == "13"
    after = psql(url, per_group.format(
        match="CASE g.level WHEN 1 THEN d.key1 ELSE d.key2 END = g.key"))
    assert after == before
    assert psql(url, "SELECT count(*), sum(reports) FROM group_daily").strip() == "5|6"

def test_migrate_without_database_url_fails_clearly():
    p = subprocess.run([str(BIN), "migrate"], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 1
    assert "STALLSCOPE_DATABASE_URL is not set" in p.stderr


def test_app_create_prints_credentials_once_and_stores_hashes(db):
    app = create_app(db)
    assert set(app) == {"app", "ingest_key", "upload_token", "admin_token"}
    assert app["ingest_key"].startswith("ssi_")
    assert app["upload_token"].startswith("ssu_")
    assert app["admin_token"].startswith("ssa_")
    stored = psql(db,
                  "SELECT encode(ingest_key_hash, 'hex'), encode("
                  "upload_token_hash, 'hex'), encode(admin_token_hash, 'hex')"
                  f" FROM apps WHERE bundle_id = '{app['app']}'")
    row = psql(db, "SELECT a::text FROM apps a WHERE bundle_id = "
                            f"'{app['app']}'")
    secrets = (app["ingest_key"], app["upload_token"], app["admin_token"])
    for secret in secrets:
        assert secret not in row and secret[4:] not in row
    # Only the BLAKE2b-256 of each credential is kept.
    assert stored.strip().split("|") == [
        hashlib.blake2b(s.encode(), digest_size=32).hexdigest()
        for s in secrets]

    again = stallscope("app", "create", app["app"], db_url=db, check=False)
    assert again.returncode == 1 and "already exists" in again.stderr
    bad = stallscope("app", "create", "../etc", db_url=db, check=False)
    assert bad.returncode == 2


def test_help_lists_every_setting():
    out = run([BIN, "serve", "--help"]).stdout
    for var in ("STALLSCOPE_DATABASE_URL", "STALLSCOPE_LISTEN",
                "STALLSCOPE_DATA_DIR", "STALLSCOPE_DB_CONNECTIONS",
                "STALLSCOPE_MAX_BODY", "STALLSCOPE_MAX_UPLOAD",
                "STALLSCOPE_MAX_UNZIPPED"):
        assert var in out
    assert "STALLSCOPE_SCHEMA_DIR" in run([BIN, "migrate", "--help"]).stdout
    assert "BUNDLE_ID" in run([BIN, "app", "--help"]).stdout
    readme = (REPO / "README.md").read_text()
    for line in out.splitlines():
        word = line.split()[0] if line.split() else ""
        if word.startswith("STALLSCOPE_"):
            assert word in readme, f"{word} is not documented in README.md"


def test_serve_refuses_bad_settings(db):
    for var, value in (("STALLSCOPE_MAX_BODY", "lots"),
                       ("STALLSCOPE_LISTEN", "localhost"),
                       ("STALLSCOPE_DB_CONNECTIONS", "0")):
        p = stallscope("serve", db_url=db, extra_env={var: value},
                       check=False)
        assert p.returncode == 1 and var in p.stderr, p.stderr


def latest_migration():
    return max(int(f.name.split("_")[0]) for f in (REPO / "schema").glob("[0-9]*_*.sql"))


def serve_once(url, tmp_path):
    """`stallscope serve` on a free port, expected to refuse and exit."""
    env = {"STALLSCOPE_LISTEN": "127.0.0.1:0", "STALLSCOPE_DATA_DIR": str(tmp_path / "data"),
           "STALLSCOPE_DATABASE_URL": url}
    return run([BIN, "serve"], env={**os.environ, **env}, check=False, timeout=60)


def test_serve_refuses_a_schema_it_does_not_know(cluster, tmp_path, make_server):
    """SPEC §12: against a database without the migrations this binary was
    built with, or with one it has no file for (a newer binary migrated
    it), serve exits 1 naming both versions; migrate refuses the newer one
    too, applying nothing (its older function files would replace the
    newer servers' functions)."""
    url = cluster.create_db("it_serve_schema")
    last = latest_migration()
    p = serve_once(url, tmp_path)
    assert p.returncode == 1, p.stderr
    assert (f"the database holds no stallscope schema (no schema_migrations), this "
            f"stallscope knows up to {last}: run stallscope migrate") in p.stderr

    migrate_up_to(url, tmp_path, last)
    before = int(psql(url, "SELECT max(version) FROM schema_migrations"))
    p = serve_once(url, tmp_path)
    assert p.returncode == 1
    assert (f"database schema is at {before}, this stallscope knows up to {last}: "
            f"run stallscope migrate (migration {last:03} is not applied)") in p.stderr

    migrate(url)
    server = make_server(db_url=url)
    assert server.request("GET", "/healthz").status == 200
    assert server.stop() == 0

    # What a newer binary's migrate leaves: a version this one has no file for.
    psql(url, f"INSERT INTO schema_migrations (version, name, checksum)"
              f" VALUES ({last + 1}, '{last + 1:03}_newer.sql', 'x');"
              " COMMENT ON FUNCTION fold_group_deltas(bigint) IS 'as a newer binary left it'")
    p = serve_once(url, tmp_path)
    assert p.returncode == 1
    assert (f"database schema is at {last + 1}, this stallscope knows up to {last}: "
            f"upgrade the binary (migration {last + 1:03} is not one it knows)") in p.stderr
    p = migrate(url, check=False)
    assert p.returncode == 1
    assert f"database schema is at {last + 1}, the migrations in " in p.stderr
    assert f"go up to {last}: upgrade the binary" in p.stderr
    assert psql(url, "SELECT obj_description('fold_group_deltas'::regproc, 'pg_proc')") == \
        "as a newer binary left it"
