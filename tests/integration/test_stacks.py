"""Issue 25 §3: each distinct stack stored once per app (schema/018). A
report keeps its documents with its stacks cut out; the stacks table holds
each distinct one once, shared by the reports that refer to it, until
retention drops the last day a report referred to it. What the tests expect is
computed from the reports they post, never read from the server."""

import json
import time
import uuid
from collections import Counter

import pytest

from conftest import create_app, migrate, psql, stallscope
from ingest_util import (Image, allow_everyone, expected_frames, fresh_id, frames_of,
                         identities, native, post, report)
from test_migrate import migrate_up_to

DAY = 86400


@pytest.fixture(scope="module")
def image(manifest):
    from conftest import fixture_of
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def app_id_of(db, app):
    return psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'").strip()


def stacked_report(image, stacks, user):
    """A native report whose threads are STACKS (file addresses), the first
    one main."""
    r = native(fresh_id(), image, stacks[0], user=user)
    for i, stack in enumerate(stacks[1:]):
        r["threads"].append({"name": f"worker-{i}", "main": False,
                             "frames": [hex(image.runtime(a, k)) for k, a in enumerate(stack)]})
    return r


def expected_refs(reports):
    """The stacks the reports share, each with how many places refer to it:
    both documents keep apart a report's images list (every report here
    lists the same image in the same state) and each of its threads."""
    refs = Counter()
    for r in reports:
        for document in ("raw", "symbolized"):
            refs[(document, "images", json.dumps(r["images"], sort_keys=True))] += 1
            for t in r["threads"]:
                refs[(document, "thread", json.dumps(t, sort_keys=True))] += 1
    return sorted(refs.values())


def stored_refs(db, app_id):
    """How many places in stored reports refer to each stored stack, how
    many stacks they refer to are not stored, and how many stored stacks
    do not carry as their last day the latest day of the reports referring
    to them (those no report refers to among them)."""
    referred = f"""
        SELECT h, count(*) AS n, max(r.received_day) AS day
          FROM reports r, unnest(stack_hashes(r.raw_stacks || r.symbolized_stacks)) h
         WHERE r.app_id = {app_id} GROUP BY h"""
    counts = psql(db, f"""
        SELECT x.n FROM ({referred}) x
         WHERE EXISTS (SELECT 1 FROM stacks s WHERE s.app_id = {app_id} AND s.hash = x.h)
         ORDER BY 1""").split()
    lost = psql(db, f"""
        SELECT count(*) FROM ({referred}) x
         WHERE NOT EXISTS (SELECT 1 FROM stacks s WHERE s.app_id = {app_id} AND s.hash = x.h)""")
    misdated = psql(db, f"""
        SELECT count(*) FROM stacks s LEFT JOIN ({referred}) x ON x.h = s.hash
         WHERE s.app_id = {app_id} AND s.last_day IS DISTINCT FROM x.day""")
    return sorted(int(c) for c in counts), int(lost), int(misdated)


def post_all(server, app, reports):
    """The first half one request each, the rest in one batch (whose
    repeated stacks the server sends once)."""
    ids = []
    half = len(reports) // 2
    for r in reports[:half]:
        reply = post(server, app, "/api/v1/ingest", r)
        assert reply.status == 202, reply
        ids.append(reply.json["accepted"][0]["id"])
    reply = post(server, app, "/api/v1/ingest", {"reports": reports[half:]})
    assert reply.status == 202 and not reply.json["rejected"], reply
    ids += [a["id"] for a in reply.json["accepted"]]
    return ids


def three_stacks(image):
    return [image.plain[0:3], image.plain[3:6], image.inlined[0:2]]


def test_reports_share_their_stacks(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    a, b, c = three_stacks(image)
    shapes = [[a], [b], [c], [a, a], [b, c], [a], [b], [a, c], [c], [a]] * 2
    reports = [stacked_report(image, s, f"u{i % 4}") for i, s in enumerate(shapes)]
    ids = post_all(server, app, reports)

    want = expected_refs(reports)
    assert stored_refs(db, app_id_of(db, app)) == (want, 0, 0)
    assert len(want) < len(reports) < sum(want)  # shared: fewer rows than reports
    for rid, sent, shape in zip(ids, reports, shapes):
        got = report(server, app, rid)
        assert [frames_of(t["frames"]) for t in got["threads"]] == \
            [expected_frames(image, s) for s in shape]
        assert got["report_id"] == sent["report_id"] and not got["pending"]
        assert got["stack"]["frames"] == got["threads"][0]["frames"]
        trace = server.request("GET", f"/api/v1/reports/{rid}/trace", token=app["admin_token"])
        assert trace.status == 200 and trace.json["traceEvents"], trace


def test_retention_collects_the_stacks_of_dropped_days(db, make_server, image):
    app = create_app(db)
    app_id = app_id_of(db, app)
    a, b, c = three_stacks(image)
    now = int(time.time())
    by_age = {10: [[a], [b], [a, b]], 0: [[b], [c], [b, c]]}
    sent = {}
    for age, shapes in by_age.items():
        s = make_server(env={"STALLSCOPE_FAKE_NOW": str(now - age * DAY)})
        allow_everyone(s, app, retention_days=30)
        sent[age] = [stacked_report(image, shape, "u1") for shape in shapes]
        post_all(s, app, sent[age])
        s.stop()
    assert stored_refs(db, app_id) == (expected_refs(sent[10] + sent[0]), 0, 0)

    psql(db, f"UPDATE app_config SET retention_days = 7 WHERE app_id = {app_id}")
    stallscope("purge", db_url=db, extra_env={"STALLSCOPE_FAKE_NOW": str(now)})
    assert stored_refs(db, app_id) == (expected_refs(sent[0]), 0, 0)


def test_reprocessing_replaces_and_collects_stacks(server, db, image):
    app = create_app(db)
    app_id = app_id_of(db, app)
    allow_everyone(server, app)
    a, b, _ = three_stacks(image)
    reports = [stacked_report(image, s, "u2") for s in ([a], [a], [b], [a, b])]
    ids = post_all(server, app, reports)
    hashes = lambda: set(psql(db, f"SELECT hash FROM stacks WHERE app_id = {app_id}").split())
    assert stored_refs(db, app_id) == (expected_refs(reports), 0, 0)
    unsymbolized = hashes()

    assert server.upload(app, image.dwarf).status in (200, 201)
    deadline = time.time() + 20
    while time.time() < deadline and any(report(server, app, i)["pending"] for i in ids):
        time.sleep(0.2)
    assert not any(report(server, app, i)["pending"] for i in ids)
    # Same sharing, other texts; the replaced ones (the symbolized form's
    # missing-symbol images and threads) no report refers to any more stay
    # until retention drops their day, which raw's stacks also refer to.
    replaced = len(unsymbolized) - (1 + 3)  # raw's: images, three threads
    assert stored_refs(db, app_id) == (expected_refs(reports), 0, replaced)
    assert unsymbolized < hashes()

    psql(db, f"UPDATE app_config SET retention_days = 7 WHERE app_id = {app_id}")
    stallscope("purge", db_url=db,
               extra_env={"STALLSCOPE_FAKE_NOW": str(int(time.time()) + 8 * DAY)})
    assert psql(db, f"SELECT count(*) FROM reports WHERE app_id = {app_id}").strip() == "0"
    assert hashes() == set()


# The reply of GET /api/v1/reports/{id} as schema 017's st_report_json
# (store/groups.c at 01b4bf5) made it from a row's documents.
REPLY_BEFORE_018 = """
    SELECT (jsonb_build_object('id', r.id, 'report_id', r.report_id,
      'received_at', to_char((r.received_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
      'user_id', r.user_id, 'kind', r.kind, 'source', r.source, 'app_version', r.app_version,
      'build', r.build, 'os', r.os, 'os_version', r.os_version, 'os_build', r.os_build,
      'device', r.device, 'timestamp', r.client_timestamp, 'duration_ms', r.duration_ms,
      'has_samples', r.raw::jsonb ? 'samples', 'pending', r.pending)
      || s.sym || jsonb_build_object('key1', r.key1, 'key2', r.key2))::text
      FROM reports r, LATERAL (SELECT CASE WHEN d->'stack' ? 'thread'
        AND NOT d->'stack' ? 'frames' THEN jsonb_set(d, '{stack,frames}',
        d->'threads'->((d->'stack'->>'thread')::int)->'frames') ELSE d END
        FROM (SELECT r.symbolized::jsonb) AS x(d)) AS s(sym)
     ORDER BY r.id"""

COLUMNS = ("id, received_day, received_at, report_id, user_id, kind, source, app_version,"
           " build, os, os_version, os_build, device, client_timestamp, duration_ms, key1,"
           " key2, pending")


def test_upgrade_keeps_every_report_reply(server, db, cluster, tmp_path, make_server, image):
    """Reports stored by a server at schema 017 (their rows copied from
    reports this server stored, documents whole, as 017 kept them) read the
    same after `stallscope migrate` as 017 answered, and share stacks."""
    app = create_app(db)
    allow_everyone(server, app)
    a, b, c = three_stacks(image)
    shapes = [[a], [b, c], [a], [c, a, b]]
    reports = [stacked_report(image, s, "u3") for s in shapes]
    ids = post_all(server, app, reports[:2])  # missing symbols, until reprocessed
    assert server.upload(app, image.dwarf).status in (200, 201)
    ids += post_all(server, app, reports[2:])
    deadline = time.time() + 20
    while time.time() < deadline and any(report(server, app, i)["pending"] for i in ids):
        time.sleep(0.2)
    rows = json.loads(psql(db, f"""
        SELECT json_agg(json_build_object('row', to_jsonb(x) - 'raw' - 'symbolized',
                                          'raw', x.raw, 'symbolized', x.symbolized))
          FROM (SELECT {COLUMNS}, report_raw(r) AS raw,
                       unstack(app_id, symbolized, symbolized_stacks) AS symbolized,
                       (SELECT g.frames FROM groups g WHERE g.app_id = r.app_id
                           AND g.level = 2 AND g.key = r.key2) AS frames
                  FROM reports r WHERE app_id = {app_id_of(db, app)}) AS x"""))

    old = cluster.create_db("it_stacks_upgrade")
    migrate_up_to(old, tmp_path, 18)
    old_app = create_app(old)
    old_id = app_id_of(old, old_app)
    for r in rows:
        # 017's symbolized form also held both keys, the group frames and
        # the pending flag (a row of today leaves them to its columns and
        # its level-2 group).
        doc = json.loads(r["symbolized"])
        doc.update(key1=r["row"]["key1"], key2=r["row"]["key2"], frames=r["row"]["frames"],
                   pending=r["row"]["pending"])
        psql(old, f"""
            SELECT ensure_report_partition({old_id}, '{r['row']['received_day']}');
            INSERT INTO reports ({COLUMNS}, app_id, raw, symbolized)
            SELECT {COLUMNS}, {old_id}, $raw${r['raw']}$raw$,
                   $sym${json.dumps(doc, separators=(',', ':'))}$sym$
              FROM jsonb_populate_record(NULL::reports, $row${json.dumps(r['row'])}$row$);
            INSERT INTO report_keys (app_id, report_id, id, received_day)
            VALUES ({old_id}, '{r['row']['report_id']}', {r['row']['id']},
                    '{r['row']['received_day']}')""")
    before = psql(old, REPLY_BEFORE_018).splitlines()
    assert len(before) == len(reports)

    assert "applied 018_stacks.sql" in migrate(old).stdout
    upgraded = make_server(db_url=old)
    for reply in before:
        want = json.loads(reply)
        got = upgraded.request("GET", f"/api/v1/reports/{want['id']}",
                               token=old_app["admin_token"])
        assert got.status == 200 and got.json == want, want["id"]
    assert stored_refs(old, old_id) == (expected_refs(reports), 0, 0)


def test_row_keeps_no_copy_of_its_columns(server, db, image):
    """A report's row does not carry twice what its columns and its group
    hold: its raw form keeps the stacks only, its symbolized form neither
    the group frames nor the pending flag. The native text (what
    reprocessing parses) and the report's reply put them back."""
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    sent = native(fresh_id(), image, image.plain[0:5], user="compact-1", build="77",
                  os_build="21C62")
    reply = post(server, app, "/api/v1/ingest", sent)
    assert reply.status == 202, reply
    rid = reply.json["accepted"][0]["id"]
    raw, symbolized, whole = psql(db, f"""
        SELECT r.raw, r.symbolized, report_raw(r) FROM reports r WHERE r.id = {rid}""").split("|")
    assert raw == '{"images":\x01,"threads":[\x01]}' and \
        sent["report_id"] not in raw and "compact-1" not in raw, raw
    assert '"frames":["' not in symbolized and '"pending"' not in symbolized, symbolized

    native_text = json.loads(whole)
    assert list(native_text)[:11] == ["report_id", "kind", "app_version", "build", "os",
                                      "os_version", "os_build", "device", "user_id",
                                      "duration_ms", "images"]
    assert {k: native_text[k] for k in ("report_id", "kind", "app_version", "build", "os",
                                        "os_version", "os_build", "device", "user_id",
                                        "duration_ms")} == \
        {k: sent[k] for k in ("report_id", "kind", "app_version", "build", "os",
                              "os_version", "os_build", "device", "user_id", "duration_ms")}
    assert [int(f, 16) for f in native_text["threads"][0]["frames"]] == \
        [int(f, 16) for f in sent["threads"][0]["frames"]]

    got = report(server, app, rid)
    chains = expected_frames(image, image.plain[0:5])
    assert got["frames"] == identities(image.name, chains)[:4]
    assert got["pending"] is False and got["report_id"] == sent["report_id"]


def test_upgrade_to_041_dates_every_stack_by_its_latest_report(cluster, tmp_path):
    """A database at schema 040 with reports of two days: `stallscope
    migrate` gives each stack the latest day of the reports referring to it
    (through either document), and drops the one no report refers to."""
    db = cluster.create_db("stacks_upgrade_041")
    migrate_up_to(db, tmp_path, 41)
    app_id = app_id_of(db, create_app(db))
    hashes = {name: f"{i:032x}" for i, name in enumerate(("old", "both", "new", "none"), 1)}
    part = f"reports_a{app_id}"
    rows = [(1, "2026-11-01", "old", "both"), (2, "2026-11-02", "new", "both")]
    psql(db, f"""
        CREATE TABLE {part} PARTITION OF reports FOR VALUES IN ({app_id})
          PARTITION BY RANGE (received_day);
        CREATE TABLE {part}_20261101 PARTITION OF {part}
          FOR VALUES FROM ('2026-11-01') TO ('2026-11-02');
        CREATE TABLE {part}_20261102 PARTITION OF {part}
          FOR VALUES FROM ('2026-11-02') TO ('2026-11-03');
        INSERT INTO stacks (app_id, hash, body)
        SELECT {app_id}, h::uuid, '[]' FROM unnest(ARRAY{list(hashes.values())}) h;
        INSERT INTO stack_refs (app_id, hash, refs)
        SELECT {app_id}, h::uuid, 1 FROM unnest(ARRAY{list(hashes.values())}) h;""")
    for rid, day, raw, symbolized in rows:
        psql(db, f"""
            INSERT INTO reports (id, app_id, received_day, received_at, report_id, user_id,
                                 kind, source, key1, key2, pending, raw, symbolized,
                                 raw_stacks, symbolized_stacks, in_sample)
            VALUES ({rid}, {app_id}, '{day}', '{day}', 'r{rid}', 'u', 'stall', 'native',
                    'k1', 'k2', false, '{{"threads":[\x01]}}', '{{"threads":[\x01]}}',
                    '\\x{hashes[raw]}', '\\x{hashes[symbolized]}', true)""")

    assert "applied 041_stacks_kept_by_last_day.sql" in migrate(db).stdout
    dated = psql(db, f"SELECT hash, last_day FROM stacks WHERE app_id = {app_id}").split()
    assert dict(row.split("|") for row in dated) == {
        str(uuid.UUID(hashes["old"])): "2026-11-01", str(uuid.UUID(hashes["both"])): "2026-11-02",
        str(uuid.UUID(hashes["new"])): "2026-11-02"}
    assert stored_refs(db, app_id) == ([1, 1, 2], 0, 0)
    assert psql(db, "SELECT to_regclass('stack_refs') IS NULL") == "t"
