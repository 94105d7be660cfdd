"""What schema/037 and 038 changed in how reports are found (issue 25,
bytes per report; docs/STORAGE.md "The reports' indexes"): the group index
holds 4-byte hashes of the keys, so two groups may share an entry's hash
and every reader tells them apart by the row's keys; a report is found by
id among its app's day partitions; the images a report waits for are 16
bytes each, found through an index on them as an array."""
from conftest import create_app, migrate, psql
from ingest_util import allow_everyone
from test_aggregates import ingest_users
from test_api_filters import every_page, get
from test_migrate import migrate_up_to


def keys_hashing_alike(db):
    """Two different keys with the same group_key_hash: among 300,000
    names about ten pairs share one of 2^32 hashes."""
    pair = psql(db, """
        SELECT min(k) || ' ' || max(k) FROM (
          SELECT 'k' || i AS k, group_key_hash('k' || i) AS h
            FROM generate_series(1, 300000) i) AS x
         GROUP BY h HAVING count(*) = 2 ORDER BY h LIMIT 1""")
    a, b = pair.split()
    assert a != b and psql(db, f"SELECT group_key_hash('{a}') = group_key_hash('{b}')") == "t"
    return a, b


def test_groups_whose_keys_hash_alike_keep_their_own_reports(cluster, make_server):
    """Groups A and B whose keys hash alike at both levels share their
    index entries' hashes: A's report list, its recounted day and the call
    tree read from its reports count A's reports only."""
    db = cluster.create_db("report_index_hashes")
    migrate(db)
    server = make_server(env={"STALLSCOPE_REPROCESS_INTERVAL": "3600"}, db_url=db)
    app = create_app(db)
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    allow_everyone(server, app)
    version = psql(db, f"SELECT version FROM app_config WHERE app_id = {app_id}")
    a, b = keys_hashing_alike(db)
    ingest_users(db, app_id, version, a, 1, 3, key2=a)
    ingest_users(db, app_id, version, b, 101, 5, key2=b)
    plan = psql(db, f"""SET enable_seqscan = off; EXPLAIN SELECT id FROM reports
        WHERE app_id = {app_id} AND group_key_hash(key1) = group_key_hash('{a}')
          AND group_key_hash(key2) = group_key_hash('{a}')
          AND report_in_group(key1, key2, '{a}', '{a}')
        ORDER BY received_at DESC, id DESC""")
    # No Sort node: each day partition's index gives the order, a Merge
    # Append (its "Sort Key" line) keeps it when the reports span two days.
    assert "Index Cond: ((hashtext(key1) = " in plan and "Sort  (" not in plan, plan

    listed = every_page(server, app, f"/groups/{a}/{a}/reports?limit=2", "reports", "user_id")
    assert sorted(listed) == ["user-1", "user-2", "user-3"]
    assert [r["user_id"] for r in get(server, app, f"/groups/{b}/{b}/reports")["reports"]] \
        == [f"user-{i}" for i in range(105, 100, -1)]

    # The day's users recounted from A's reports (reprocessing does it
    # after moving reports out): three, not eight.
    psql(db, f"""INSERT INTO group_day_recounts (app_id, level, key, day, key1)
                 VALUES ({app_id}, 1, '{a}', current_date, '{a}');
                 SELECT recount_group_day();""")
    assert psql(db, f"SELECT count(*) FROM group_day_recounts WHERE app_id = {app_id}") == "0"
    assert psql(db, f"""SELECT hll_cardinality(users)::int FROM group_days
                         WHERE app_id = {app_id} AND level = 1 AND key = '{a}'""") == "3"
    tree = get(server, app, f"/groups/{a}/tree?os_version=17.2")  # read from the reports
    assert tree["reports"] == 3, tree


def test_a_report_is_found_by_id_in_its_apps_partitions(server, db):
    """Without report_keys' id index a report is read through its app's
    day partitions: found for its app, on whichever day it came, and 404
    for any other app."""
    app, other = create_app(db), create_app(db)
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    allow_everyone(server, app, retention_days=30)
    version = psql(db, f"SELECT version FROM app_config WHERE app_id = {app_id}")
    ingest_users(db, app_id, version, "found", 1, 2)
    psql(db, f"""SELECT ensure_report_partition({app_id}, current_date - 3);
                 UPDATE reports SET received_day = current_date - 3,
                        received_at = received_at - interval '3 days'
                  WHERE app_id = {app_id} AND user_id = 'user-2'""")
    for user, age in (("user-1", 0), ("user-2", 3)):
        rid = psql(db, f"SELECT id FROM reports WHERE app_id = {app_id} AND user_id = '{user}'")
        mine = server.request("GET", f"/api/v1/reports/{rid}", token=app["admin_token"])
        assert mine.status == 200 and mine.json["user_id"] == user, mine
        assert psql(db, f"SELECT received_day = current_date - {age} FROM reports"
                        f" WHERE id = {rid}") == "t"
        assert server.request("GET", f"/api/v1/reports/{rid}",
                              token=other["admin_token"]).status == 404
    assert psql(db, "SELECT count(*) FROM pg_indexes WHERE indexname = 'report_keys_id_idx'") \
        == "0"


def test_migration_hashes_the_group_index(cluster, tmp_path):
    """037 on a database with reports: the group index is made again on the
    keys' hashes in every partition (and in those made afterwards), and
    report_keys' id index is gone."""
    url = cluster.create_db("it_migrate_037")
    migrate_up_to(url, tmp_path, 36)
    app = psql(url, "SELECT id FROM apps WHERE bundle_id = '%s'" % create_app(url)["app"])
    psql(url, f"""
        SELECT ensure_report_partition({app}, DATE '2026-11-01');
        INSERT INTO reports (id, app_id, received_day, received_at, report_id, user_id,
                             kind, source, key1, key2, pending, raw, symbolized, in_sample)
        SELECT i, {app}, '2026-11-01', now(), 'r' || i, 'u1', 'stall', 'native', 'k' || i % 7,
               'k2', false, '{{}}', '{{}}', true FROM generate_series(1, 2000) i""")
    assert "applied 037_" in migrate(url).stdout
    psql(url, f"SELECT ensure_report_partition({app}, DATE '2026-11-02')")
    defs = psql(url, """SELECT string_agg(tablename || ' ' || indexdef, E'\\n')
                          FROM pg_indexes WHERE tablename LIKE 'reports%'
                           AND indexdef LIKE '%key1%'""").splitlines()
    assert len(defs) == 4, defs  # the parent, the app's table, two days
    assert all("(hashtext(key1), hashtext(key2), received_at DESC, id DESC)" in d
               for d in defs), defs
    assert psql(url, f"""
        SELECT count(*) FROM reports WHERE app_id = {app} AND received_day = '2026-11-01'
           AND group_key_hash(key1) = group_key_hash('k3') AND key1 = 'k3'""") == "286"
    assert psql(url, "SELECT count(*) FROM pg_indexes WHERE indexname = 'report_keys_id_idx'") \
        == "0"


def test_migration_keeps_waits_as_bytes(cluster, tmp_path):
    """038 on reports waiting at 037 (none, one or two images): the same
    UUIDs in the same order, as bytes, and the reports waiting for a UUID
    still found through the GIN index, as the reprocessor asks."""
    url = cluster.create_db("it_migrate_038")
    migrate_up_to(url, tmp_path, 37)
    app = psql(url, "SELECT id FROM apps WHERE bundle_id = '%s'" % create_app(url)["app"])
    one, two = "5a5a5a5a-0000-4000-8000-000000000001", "0b0b0b0b-0000-4000-8000-00000000000f"
    psql(url, f"""
        SELECT ensure_report_partition({app}, DATE '2026-11-01');
        INSERT INTO reports (id, app_id, received_day, received_at, report_id, user_id,
                             kind, source, key1, key2, pending, raw, symbolized, in_sample,
                             waits, wait_reasons)
        SELECT i, {app}, '2026-11-01', now(), 'r' || i, 'u1', 'stall', 'native', 'k1', 'k2',
               false, '{{}}', '{{}}', true,
               CASE i % 3 WHEN 1 THEN ARRAY['{two}']::uuid[]
                          WHEN 2 THEN ARRAY['{two}', '{one}']::uuid[] END,
               CASE i % 3 WHEN 1 THEN 'M' WHEN 2 THEN 'mM' END
          FROM generate_series(1, 3000) i""")
    before = psql(url, "SELECT id || ':' || coalesce(waits::text, '-') || ':' ||"
                       " coalesce(wait_reasons, '-') FROM reports ORDER BY id")
    assert "applied 038_" in migrate(url).stdout
    after = psql(url, "SELECT id || ':' || coalesce(wait_uuids(waits)::text, '-') || ':' ||"
                      " coalesce(wait_reasons, '-') FROM reports ORDER BY id")
    assert after == before and f"{{{two},{one}}}:mM" in after
    assert psql(url, "SELECT DISTINCT length(waits) FROM reports WHERE wait_reasons = 'mM'") \
        == "32"
    asked = (f"FROM reports r WHERE r.app_id = {app} AND r.received_day = '2026-11-01'"
             f" AND r.waits IS NOT NULL AND wait_uuids(r.waits) @> ARRAY['{one}'::uuid]")
    plan = psql(url, f"SET enable_seqscan = off; EXPLAIN SELECT r.id {asked}")
    assert "Bitmap Index Scan on reports_a" in plan and "Index Cond: " in plan, plan
    assert psql(url, f"SELECT count(*) {asked}") == "1000"
