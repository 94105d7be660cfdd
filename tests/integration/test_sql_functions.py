"""Issue 24 item 4: every SQL function in one file, schema/functions/NAME.sql,
applied by `stallscope migrate` after the numbered migrations at every run.

The database's functions are compared with the files by running each file
with psql (not through migrate) in a transaction that is rolled back: the
functions of that name are dropped, the file re-creates them, and their
definitions (pg_get_functiondef) and comments must read as before. The
definitions wait in a table of the schema meanwhile (the server's role has
no TEMPORARY privilege)."""

import re
import shutil

from conftest import PSQL, REPO, create_app, fixture_of, migrate, psql, run
from ingest_util import Image, allow_everyone, fresh_id, native, post
from test_migrate import migrate_up_to

FUNCTIONS = REPO / "schema" / "functions"
# The last numbered migration shipped before the function files: the ones
# up to it keep their historical function bodies, the later ones hold none.
LAST_WITH_BODIES = 14
DEFINES = re.compile(r"^\s*CREATE\s+(OR\s+REPLACE\s+)?FUNCTION\s+(\w+)", re.I | re.M)
OURS = """FROM pg_proc p
          WHERE p.pronamespace = current_schema()::regnamespace
            AND NOT EXISTS (SELECT 1 FROM pg_depend d
                             WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                               AND d.deptype = 'e')"""
DEFS = f"""SELECT p.oid::regprocedure::text AS sig, pg_get_functiondef(p.oid) AS def,
                 obj_description(p.oid, 'pg_proc') AS comment {OURS}"""


def psql_script(url, script, tmp_path):
    path = tmp_path / "check.sql"
    path.write_text(script)
    return run([PSQL, url, "-v", "ON_ERROR_STOP=1", "-qAt", "-f", path]).stdout.strip()


def function_differences(url, tmp_path, functions=FUNCTIONS):
    """What keeps the database's functions from being exactly the files:
    [] when they are."""
    files = {f.stem: f for f in functions.glob("*.sql")}
    in_db = set(psql(url, f"SELECT DISTINCT p.proname {OURS}").split())
    problems = [f"{name}: in the database, no file" for name in sorted(in_db - set(files))]
    problems += [f"{name}: a file, not in the database" for name in sorted(set(files) - in_db)]
    for name in sorted(in_db & set(files)):
        mine = f"{DEFS} AND p.proname = '{name}'"
        differing = psql_script(url, f"""
            BEGIN;
            CREATE TABLE db_defs AS {mine};
            -- CASCADE: a trigger's function takes its trigger along,
            -- which its file makes again (group_events_to_outbox); the
            -- ROLLBACK puts everything back.
            DO $$ DECLARE f regprocedure; BEGIN
              FOR f IN SELECT p.oid::regprocedure {OURS} AND p.proname = '{name}' LOOP
                EXECUTE 'DROP FUNCTION ' || f || ' CASCADE';
              END LOOP;
            END $$;
            \\i '{files[name]}'
            SELECT sig FROM ((TABLE db_defs EXCEPT {mine})
                             UNION ({mine} EXCEPT TABLE db_defs)) x GROUP BY 1 ORDER BY 1;
            ROLLBACK;""", tmp_path)
        problems += [f"{name}: {sig} differs from {files[name].name}"
                     for sig in differing.splitlines()]
    return problems


def test_functions_in_the_database_are_exactly_the_files(cluster, tmp_path):
    url = cluster.create_db("it_functions_fresh")
    migrate(url)
    names = {f.stem for f in FUNCTIONS.glob("*.sql")}
    assert "ingest_reports" in names and "move_report" in names
    assert function_differences(url, tmp_path) == []
    # A fresh database got there through the historical bodies: the
    # migrations alone would have left 013's ingest_reports, which knows no
    # dimension combinations (schema/039).
    assert psql(url, "SELECT prosrc LIKE '%dim_combos%' FROM pg_proc"
                     " WHERE proname = 'ingest_reports'") == "t"


def test_each_function_is_written_once(tmp_path):
    """ingest_reports, and every other function, is defined by its own file
    and by no numbered migration after the historical ones."""
    for f in FUNCTIONS.glob("*.sql"):
        assert [m.group(2) for m in DEFINES.finditer(f.read_text())] == [f.stem], f
    later = [f for f in (REPO / "schema").glob("*.sql")
             if int(f.name.split("_")[0]) > LAST_WITH_BODIES]
    assert later, "the newer migrations were not found"
    for f in later:
        assert DEFINES.findall(f.read_text()) == [], f"{f.name} defines a function"
    outside = [f for f in REPO.joinpath("schema").rglob("*.sql")
               if f.parent == FUNCTIONS or int(f.name.split("_")[0]) > LAST_WITH_BODIES]
    defining = [f.name for f in outside
                if "ingest_reports" in [m.group(2) for m in DEFINES.finditer(f.read_text())]]
    assert defining == ["ingest_reports.sql"]


def test_migrate_puts_back_a_changed_function(cluster, tmp_path):
    url = cluster.create_db("it_functions_changed")
    migrate(url)
    psql(url, """
        CREATE OR REPLACE FUNCTION count_out_of_group(p_app bigint, p_level smallint,
                                                      p_key text, p_recount boolean)
        RETURNS void LANGUAGE sql AS $$ SELECT $$;
        COMMENT ON FUNCTION drop_report_partitions(bigint, date) IS 'edited by hand';
        CREATE FUNCTION stray() RETURNS integer LANGUAGE sql AS 'SELECT 1';
        CREATE FUNCTION move_report(integer) RETURNS integer LANGUAGE sql AS 'SELECT 1';""")
    assert function_differences(url, tmp_path) == [
        "stray: in the database, no file",
        "count_out_of_group: count_out_of_group(bigint,smallint,text,boolean) differs"
        " from count_out_of_group.sql",
        "drop_report_partitions: drop_report_partitions(bigint,date) differs from"
        " drop_report_partitions.sql",
        "move_report: move_report(integer) differs from move_report.sql"]

    out = migrate(url).stdout
    assert sorted(l for l in out.splitlines() if l.startswith("applied ")) == [
        "applied functions/count_out_of_group.sql",
        "applied functions/drop_report_partitions.sql"]
    # What has no file, or another signature, is a numbered migration's to
    # drop: migrate re-creates definitions, it removes nothing.
    assert function_differences(url, tmp_path) == [
        "stray: in the database, no file",
        "move_report: move_report(integer) differs from move_report.sql"]
    psql(url, "DROP FUNCTION stray(); DROP FUNCTION move_report(integer)")
    assert function_differences(url, tmp_path) == []
    again = migrate(url).stdout
    assert not [l for l in again.splitlines() if l.startswith("applied ")], again


def test_function_files_apply_all_or_nothing(cluster, tmp_path):
    url = cluster.create_db("it_functions_atomic")
    migrate(url)
    schema = tmp_path / "schema"
    shutil.copytree(REPO / "schema", schema)
    functions = schema / "functions"
    text = (functions / "count_out_of_group.sql").read_text()
    (functions / "count_out_of_group.sql").write_text(
        text.replace("reports = reports - 1", "reports = reports - 2"))
    env = {"STALLSCOPE_SCHEMA_DIR": str(schema)}
    # Sorted after count_out_of_group.sql, which it undoes.
    (functions / "zz_broken.sql").write_text(
        "CREATE OR REPLACE FUNCTION zz_broken() RETURNS int LANGUAGE sql AS 'SELEC 1';\n")
    p = migrate(url, extra_env=env, check=False)
    assert p.returncode == 1 and "functions/zz_broken.sql failed" in p.stderr, p.stderr
    assert function_differences(url, tmp_path) == []

    (functions / "zz_broken.sql").write_text(
        "CREATE OR REPLACE FUNCTION other_name() RETURNS int LANGUAGE sql AS 'SELECT 1';\n")
    p = migrate(url, extra_env=env, check=False)
    assert p.returncode == 1 and "defines no function zz_broken" in p.stderr, p.stderr
    assert psql(url, "SELECT to_regproc('other_name') IS NULL") == "t"

    (functions / "zz_broken.sql").rename(functions / "Broken.sql")
    p = migrate(url, extra_env=env, check=False)
    assert p.returncode == 1 and "Broken.sql: a function file is named" in p.stderr, p.stderr
    (functions / "Broken.sql").unlink()

    out = migrate(url, extra_env=env).stdout
    assert "applied functions/count_out_of_group.sql" in out
    assert "reports - 2" in psql(url, "SELECT prosrc FROM pg_proc"
                                      " WHERE proname = 'count_out_of_group'")
    assert function_differences(url, tmp_path, functions) == []

    shutil.rmtree(functions)
    p = migrate(url, extra_env=env, check=False)
    assert p.returncode == 1 and "functions" in p.stderr, p.stderr


def test_a_signature_changes_through_a_numbered_migration(cluster, tmp_path):
    """docs/STORAGE.md §Schema: a new return type or argument list is the
    edited file plus a numbered migration dropping the old signature."""
    url = cluster.create_db("it_functions_signature")
    migrate(url)
    schema = tmp_path / "schema"
    shutil.copytree(REPO / "schema", schema)
    functions = schema / "functions"
    env = {"STALLSCOPE_SCHEMA_DIR": str(schema)}
    f = functions / "drop_report_partitions.sql"
    f.write_text(f.read_text().replace("RETURNS integer", "RETURNS bigint"))
    f = functions / "count_out_of_group.sql"
    f.write_text(f.read_text().replace("p_recount boolean)", "p_recount boolean, p_by integer)")
                 .replace("reports = reports - 1", "reports = reports - p_by")
                 .replace("text, boolean) IS", "text, boolean, integer) IS"))
    p = migrate(url, extra_env=env, check=False)
    assert p.returncode == 1 and "cannot change return type" in p.stderr, p.stderr
    assert function_differences(url, tmp_path) == []

    (schema / "999_new_signatures.sql").write_text(
        "DROP FUNCTION drop_report_partitions(bigint, date);\n"
        # IF EXISTS: that signature came with the files (016), which a
        # fresh database has not applied when its numbered migrations run.
        "DROP FUNCTION IF EXISTS count_out_of_group(bigint, smallint, text, boolean);\n")
    out = migrate(url, extra_env=env).stdout
    assert "applied 999_new_signatures.sql" in out
    assert function_differences(url, tmp_path, functions) == []
    assert psql(url, "SELECT pg_get_function_result('drop_report_partitions'::regproc),"
                     " pg_get_function_identity_arguments('count_out_of_group'::regproc)"
                     ) == "bigint|p_app bigint, p_level smallint, p_key text," \
                          " p_recount boolean, p_by integer"
    # A fresh database takes the same path.
    fresh = cluster.create_db("it_functions_signature_fresh")
    migrate(fresh, extra_env=env)
    assert function_differences(fresh, tmp_path, functions) == []

def sql_list(values, typ):
    def lit(v):
        if v is None:
            return "NULL"
        if isinstance(v, bool):
            return "true" if v else "false"
        return "'" + str(v).replace("'", "''") + "'"
    return f"ARRAY[{', '.join(lit(v) for v in values)}]::{typ}[]"


def ingest_sql(url, app, version, batch, stacks=True):
    """Calls ingest_reports as the server does, one batch of
    (report_id, user, received_at, key1, key2, app_version, device, waits);
    without STACKS, as the server did before schema 018."""
    col = lambda i: [r[i] for r in batch]
    n = len(batch)
    args = [sql_list(col(0), "text"), sql_list(col(1), "text"),
            sql_list([at[:10] for at in col(2)], "date"), sql_list(col(2), "timestamptz"),
            sql_list([True] * n, "boolean"), sql_list(["stall"] * n, "text"),
            sql_list(["native"] * n, "text"), sql_list(col(5), "text"),
            sql_list([None] * n, "text"), sql_list(["iOS"] * n, "text"),
            sql_list(["17.2"] * n, "text"), sql_list([None] * n, "text"),
            sql_list(col(6), "text"), sql_list([None] * n, "text"),
            sql_list([2500] * n, "bigint"), sql_list(col(3), "text"), sql_list(col(4), "text"),
            sql_list([bool(w) for w in col(7)], "boolean"),
            sql_list(['["f1"]'] * n, "text"), sql_list(['["f2"]'] * n, "text"),
            sql_list([w or "[]" for w in col(7)], "text"), sql_list(["{}"] * n, "text"),
            sql_list(["{}"] * n, "text")]
    if stacks:
        args += [sql_list(["{}"] * n, "text"), sql_list(["{}"] * n, "text"), "'{}'::uuid[]",
                 "'{}'::text[]", sql_list([None] * n, "text")]
    return psql(url, f"SELECT outcome FROM ingest_reports({app}, {version}, "
                     + ", ".join(args) + ")").split()


def snapshot(url, tables):
    """Every row of TABLES ({table: columns}), as text, in a fixed order."""
    return {t: psql(url, f"SELECT {', '.join(cols)} FROM {t} ORDER BY {', '.join(cols)}")
            for t, cols in tables.items()}


def test_upgrade_keeps_every_row_and_ingest_works(cluster, tmp_path, make_server, manifest):
    """A database at the last shipped schema (014) holding reports, waits,
    quotas, groups and counters upgrades with `stallscope migrate`: every
    row of every table reads the same, the functions are the files', and
    ingest counts on top of the old counters."""
    url = cluster.create_db("it_functions_upgrade")
    migrate_up_to(url, tmp_path, LAST_WITH_BODIES + 1)
    made = create_app(url)
    app = psql(url, f"SELECT id FROM apps WHERE bundle_id = '{made['app']}'")
    version = psql(url, f"WITH made AS (INSERT INTO app_config (app_id) VALUES ({app})"
                        " RETURNING version) SELECT version FROM made")
    psql(url, f"""
        INSERT INTO whitelist (app_id, user_id) VALUES ({app}, 'u1');
        INSERT INTO debug_files (app_id, uuid, arch, name, kind, has_dwarf, functions,
                                 file_size, symcache_size, symcache_version, debug_path,
                                 symcache_path)
        VALUES ({app}, '5c1e1d3a-0000-4000-8000-000000000001', 'arm64', 'Foo', 'dsym', true,
                3, 100, 50, 1, 'debug/x', 'symcaches/x')""")
    wait = ('[{"uuid": "5c1e1d3a-0000-4000-8000-000000000002", "image_name": "Bar",'
            ' "arch": "arm64", "reason": "missing"}]')
    stored = [("r0", "u1", "2026-11-10 09:00:00+00", "k1", "k1a", "1.0", "iPhone14,2", None),
              ("r1", "u1", "2026-11-10 10:00:00+00", "k1", "k1a", "1.0", "iPhone14,2", wait),
              ("r2", "u2", "2026-11-11 08:00:00+00", "k1", "k1b", "2.0", None, None),
              ("r3", "u3", "2026-11-11 09:30:00+00", "k2", "k2a", "2.0", "iPad13,1", wait),
              ("r4", "u2", "2026-11-12 11:00:00+00", "k2", "k2a", "2.0", "iPad13,1", None)]
    assert ingest_sql(url, app, version, stored[:2], stacks=False) == ["stored"] * 2
    assert ingest_sql(url, app, version, stored[2:], stacks=False) == ["stored"] * 3
    tables = {}
    for line in psql(url, """
            SELECT c.relname, string_agg(quote_ident(a.attname), ',' ORDER BY a.attnum)
              FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
             WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
               AND a.attnum > 0 AND NOT a.attisdropped AND c.relname <> 'schema_migrations'
             GROUP BY 1""").splitlines():
        table, cols = line.split("|")
        tables[table] = cols.split(",")
    assert {"reports", f"reports_a{app}_20261110", "report_waits", "user_quota",
            "report_keys", "groups", "group_daily", "debug_files"} <= set(tables)
    # 017 moved the image's name and arch (and the wait's time) from every
    # wait to image_waits, a counter per app, image, day and reason.
    tables["report_waits"] = ["app_id", "uuid", "report", "received_day", "reason"]
    before = snapshot(url, tables)
    assert before["report_waits"].count("\n") == 1 and before["user_quota"].count("\n") == 2
    waits = psql(url, "SELECT app_id, uuid, received_day, reason, image_name, arch"
                      " FROM report_waits").splitlines()
    shipped = psql(url, "SELECT version, checksum, applied_at FROM schema_migrations ORDER BY 1")

    out = migrate(url).stdout
    assert "applied 015_filtered_aggregates.sql" in out
    assert "applied 016_day_aggregates.sql" in out
    assert "applied 030_waits_on_reports.sql" in out
    assert "applied functions/ingest_reports.sql" in out
    # 016 turns group_daily into the day aggregates (test_aggregates.py
    # checks that conversion); 030 moves every wait onto its report's row;
    # every other row stays.
    del tables["group_daily"], before["group_daily"]
    del tables["report_waits"]
    waits_before = before.pop("report_waits")
    assert snapshot(url, tables) == before
    assert psql(url, "SELECT r.app_id, w.uuid, r.id, r.received_day, wait_reason(w.code)"
                     " FROM reports r, unnest(wait_uuids(r.waits), string_to_array(r.wait_reasons, NULL))"
                     " AS w(uuid, code) ORDER BY 1, 2, 3, 4, 5") == waits_before
    counted = {}
    for w in waits:
        *key, name, arch = w.split("|")
        had = counted.get(tuple(key), [name, arch, 0])
        counted[tuple(key)] = [max(had[0], name), max(had[1], arch), had[2] + 1]
    assert psql(url, "SELECT app_id, uuid, day, reason, image_name, arch, reports"
                     " FROM image_waits ORDER BY 1, 2, 3, 4").splitlines() == [
        "|".join([*k, *map(str, v)]) for k, v in sorted(counted.items())]
    assert psql(url, "SELECT version, checksum, applied_at FROM schema_migrations"
                     f" WHERE version <= {LAST_WITH_BODIES} ORDER BY 1") == shipped
    assert function_differences(url, tmp_path) == []

    # Ingest on top: u1 again in k1/k1a (not new to either group), u4 new
    # to k2 and k2a.
    later = [("r5", "u1", "2026-11-12 12:00:00+00", "k1", "k1a", "1.0", "iPhone14,2", None),
             ("r6", "u4", "2026-11-12 13:00:00+00", "k2", "k2a", "2.0", "iPad13,1", None),
             ("r0", "u1", "2026-11-12 14:00:00+00", "k1", "k1a", "1.0", "iPhone14,2", None)]
    assert ingest_sql(url, app, version, later) == ["stored", "stored", "duplicate"]
    everything = stored + later[:2]
    want = []
    for level, key in ((1, "k1"), (1, "k2"), (2, "k1a"), (2, "k1b"), (2, "k2a")):
        mine = [r for r in everything if r[2 + level] == key]
        want.append(f"{level}|{key}|{len(mine)}|{len({r[1] for r in mine})}")
    assert psql(url, "SELECT level, key, reports, users FROM groups"
                     f" WHERE app_id = {app} ORDER BY 1, 2").splitlines() == want
    assert psql(url, "SELECT sum(reports) FROM app_dimensions"
                     f" WHERE app_id = {app} AND dim = 'kind'") == str(len(everything))

    # ...and through the server, whose statement must fit the function.
    image = Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))
    server = make_server(db_url=url)
    allow_everyone(server, made)
    rid = fresh_id()
    r = post(server, made, "/api/v1/ingest", native(rid, image, image.plain[:2], user="u9"))
    assert r.status == 202, r
    assert psql(url, f"SELECT count(*) FROM report_keys WHERE app_id = {app}"
                     f" AND report_id = '{rid}'") == "1"
    assert psql(url, f"SELECT sum(reports) FROM groups WHERE app_id = {app}"
                     " GROUP BY level ORDER BY level").split() == [str(len(everything) + 1)] * 2



def test_per_row_helpers_are_inlined(db):
    """The helpers the fold, ingest and the lists call once per row are
    SQL expressions PostgreSQL inlines, as they are called: a call left in
    the plan goes through the SQL function executor, about 6 µs a row
    (add_hists given kept_duration_hist's results was: schema/032, 034).
    The fold must add two rows' histograms with kept_duration_hists_sum."""
    calls = {
        "add_hists": "add_hists(d.duration_hist, d.duration_hist)",
        "kept_duration_hists_sum": "kept_duration_hists_sum(f.duration_hist, f.max_duration_ms,"
                                   " f.duration_hist, f.max_duration_ms)",
        "kept_duration_bucket": "kept_duration_bucket(f.duration_hist, f.max_duration_ms, 3)",
        "kept_duration_hist": "kept_duration_hist(f.duration_hist, f.max_duration_ms)",
        "stack_at": "stack_at(r.raw_stacks, 2)",
        "stack_bytes": "stack_bytes(wait_uuids(r.waits))",
        # These two must also be inlined for their readers to use the
        # index on the expression they stand for (schema/037, 038).
        "wait_uuids": "wait_uuids(r.waits)",
        "group_key_hash": "group_key_hash(r.key1)",
        "duration_bucket_edges": "duration_bucket_edges()",
        # Ingest's, once per wait of every report: a STRICT function
        # whose body is not strict (a CASE) is never inlined.
        "wait_reason_code": "wait_reason_code(r.kind)",
        "wait_reason": "wait_reason(r.wait_reasons)",
        # The percentiles' (schema/044): per row of every list's page.
        "kept_fine_hist": "kept_fine_hist(f.duration_fine, f.max_duration_ms)",
        "fine_bucket": "fine_bucket(r.duration_ms)",
    }
    for name, call in calls.items():
        plan = psql(db, f"EXPLAIN VERBOSE SELECT {call} FROM group_days d, group_dim_days f,"
                        " reports r LIMIT 1")
        assert f"{name}(" not in plan, plan
    # A set-returning helper in FROM is inlined too: no Function Scan.
    plan = psql(db, "EXPLAIN VERBOSE SELECT p.bucket FROM group_days d,"
                    " LATERAL fine_pairs(d.duration_fine) p LIMIT 1")
    assert "fine_pairs(" not in plan, plan
    fold = psql(db, "SELECT prosrc FROM pg_proc WHERE proname = 'fold_group_deltas'")
    assert fold.count("kept_duration_hists_sum(") == 2 and "add_hists(kept" not in fold
