"""docs/OPERATIONS.md "Backup and restore", step by step: pg_dump of the
role's schema, then a copy of the data dir; restored into a second,
fresh PostgreSQL cluster (its role, database and the extensions hll and
pg_trgm made by its superuser, as scripts/pg.sh createdb does) with
pg_restore, and a server started on it with the copied data dir answers
the same groups and reports, and symbolizes a new report with the debug
files it found in the copy (no upload since)."""
import shutil

from conftest import Cluster, create_app, fixture_of, migrate, run
from ingest_util import Image, allow_everyone, fresh_id, native, post, report

PG_BIN = "/usr/lib/postgresql/15/bin"


def listing(server, app, path):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/{path}", token=app["admin_token"])
    assert r.status == 200, r
    # The fold's clock of the database read (when replies carry it) is
    # the restored database's own.
    return {k: v for k, v in r.json.items() if k != "as_of"}


def test_restore_into_a_fresh_cluster_serves_the_same_groups(
        cluster, tmp_root, make_server, manifest, tmp_path):
    # A cluster of its own, as a fresh machine would have.
    fresh = Cluster(tmp_root / "pg-restored")
    fresh.start()
    try:
        restore_and_compare(cluster, fresh, make_server, manifest, tmp_path)
    finally:
        fresh.stop()
        shutil.rmtree(fresh.dir, ignore_errors=True)


def restore_and_compare(cluster, fresh, make_server, manifest, tmp_path):
    image = Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))
    f = image.by_function
    source = cluster.create_db("it_backup_source")
    migrate(source)
    app = create_app(source)
    before = make_server(db_url=source)
    allow_everyone(before, app)
    assert before.upload(app, image.dwarf).status in (200, 201)
    stacks = [[f[1], f[2]], [f[3], f[4]], [f[3], f[4]], [f[5], f[1]]]
    r = post(before, app, "/api/v1/ingest",
             {"reports": [native(fresh_id(), image, s, user=f"u{i}")
                          for i, s in enumerate(stacks)]})
    assert r.status == 202 and not r.json["rejected"], r
    ids = [a["id"] for a in r.json["accepted"]]
    groups = listing(before, app, "groups")
    assert len(groups["groups"]) == 3
    reports = [report(before, app, i) for i in ids]
    assert not any(rep["pending"] for rep in reports)

    # The database first, then the data dir: every debug file a dumped row
    # names was renamed into place before that row committed.
    dump = tmp_path / "stallscope.dump"
    run([f"{PG_BIN}/pg_dump", "--format=custom", "--schema=stallscope",
         f"--file={dump}", f"--dbname={source}"])
    data = tmp_path / "data-copy"
    shutil.copytree(before.data_dir, data, symlinks=True)

    target = fresh.create_db("stallscope_restored")
    # Into the schema createdb made (owned by the role, which may not
    # create schemas): its objects only, owned by whoever restores.
    run([f"{PG_BIN}/pg_restore", "--exit-on-error", "--no-owner", "--no-privileges",
         "--schema=stallscope", f"--dbname={target}", dump])
    assert before.stop() == 0
    after = make_server(db_url=target, start=False)
    after.data_dir = data
    after.start()

    assert listing(after, app, "groups") == groups
    assert [report(after, app, i) for i in ids] == reports
    # A new report is symbolized at ingest from the copied debug files.
    r = post(after, app, "/api/v1/ingest", native(fresh_id(), image, stacks[0], user="u9"))
    assert r.status == 202, r
    later = report(after, app, r.json["accepted"][0]["id"])
    assert not later["pending"]
    assert later["threads"] == reports[0]["threads"]
