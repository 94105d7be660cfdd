"""Issue 42, item 5: GET …/dsyms/missing names an image one way (its
basename, the full path a report gave as `path`), lists a UUID once
whatever names reports gave it, lists the app versions it was seen in
(newest first by the version order) and says when it was last seen as an
RFC 3339 time, like every other reply's last_seen.

Expected rows are computed here from what the test posted and from the
times the server stored (GET /api/v1/reports/{id})."""

import json
import time
import uuid as uuidlib
from urllib.parse import quote

from conftest import create_app
from ingest_util import allow_everyone, fresh_id, post, report
from test_system_images import APP_PATH, accepted_id, body, image_entry, missing_list


def test_one_row_per_uuid_named_by_basename_with_versions_and_time(server, db):
    app = create_app(db)
    allow_everyone(server, app)
    kit, plug = str(uuidlib.uuid4()).upper(), str(uuidlib.uuid4()).upper()
    kit_path = APP_PATH + "Kit.framework/Kit"
    plug_path = APP_PATH + "Plug.framework/Plug"
    # (name Kit is given under, version): the same UUID under its basename
    # and its path; versions out of order, 1.10 the newest.
    posts = [("Kit", "1.2"), (kit_path, "1.10"), ("Kit", "1.0"), (kit_path, "1.2"),
             ("Kit", None)]
    ids = []
    for i, (name, version) in enumerate(posts):
        images = [image_entry(name, kit, "arm64", 0x190000000, 0x100000),
                  image_entry(plug_path, plug, "arm64", 0x1a0000000, 0x100000)]
        b = body(fresh_id(), f"u{i}", images, [0x190000100 + i, 0x1a0000100])
        if version is None:
            del b["app_version"]
        else:
            b["app_version"] = version
        ids.append(accepted_id(post(server, app, "/api/v1/ingest", b)))
    times = [report(server, app, rid)["received_at"] for rid in ids]
    rows = missing_list(server, app)
    # As many reports each: by UUID.
    assert [m["uuid"] for m in rows] == sorted([kit, plug])
    by_uuid = {m["uuid"]: m for m in rows}
    k, p = by_uuid[kit], by_uuid[plug]
    assert (k["name"], k["reports"]) == ("Kit", len(posts))
    # Named by its basename in three reports and by its path in two: the
    # path is kept all the same ("/" sorts before every letter).
    assert k["path"] == kit_path
    assert k["app_versions"] == ["1.10", "1.2", "1.0"]
    assert k["last_seen"] == max(times)
    assert (p["name"], p["path"], p["reports"]) == ("Plug", plug_path, len(posts))
    assert p["app_versions"] == ["1.10", "1.2", "1.0"]
    assert p["last_seen"] == max(times)
    # Every last_seen of the API is the same kind of text: a group's too.
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups", token=app["admin_token"])
    assert r.status == 200 and r.json["groups"]
    assert all(len(g["last_seen"]) == len(k["last_seen"]) and g["last_seen"].endswith("Z")
               for g in r.json["groups"])
    assert max(g["last_seen"] for g in r.json["groups"]) == max(times)


def test_a_path_outlasts_basenames_in_one_batch_and_across_days(server, db):
    """One batch naming an image by its basename around its path, and a
    report of the day before naming it by basename only: the reply keeps
    the path (a day's row keeps it in the batch's count and its upsert,
    the days together in the reply)."""
    app = create_app(db)
    allow_everyone(server, app)
    kit = str(uuidlib.uuid4()).upper()
    kit_path = APP_PATH + "Kit.framework/Kit"

    def kit_report(name, user):
        return body(fresh_id(), user, [image_entry(name, kit, "arm64", 0x190000000, 0x100000)],
                    [0x190000100])

    r = post(server, app, "/api/v1/ingest",
             {"reports": [kit_report("Kit", "u1"), kit_report(kit_path, "u2"),
                          kit_report("Kit", "u3")]})
    assert r.status == 202 and len(r.json["accepted"]) == 3, r
    (row,) = missing_list(server, app)
    assert (row["name"], row["path"], row["reports"]) == ("Kit", kit_path, 3)
    yesterday = time.strftime("%Y-%m-%dT09:00:00Z", time.gmtime(time.time() - 86400))
    r = server.request("POST", f"/api/v1/apps/{app['app']}/backfill?received_at="
                       + quote(yesterday, safe=""),
                       body=json.dumps(kit_report("Kit", "u4")).encode(),
                       token=app["admin_token"])
    assert r.status == 202, r
    (row,) = missing_list(server, app)
    assert (row["name"], row["path"], row["reports"]) == ("Kit", kit_path, 4)
