"""What a server keeps in memory between ingest requests (the app's
policy, which debug files each UUID has) never outlives a change: a policy
changed through another server applies to the very next report, and a dSYM
uploaded to this server or another is used by the reports that follow."""

import json
import time

import pytest

from conftest import create_app, fixture_of
from ingest_util import Image, allow_everyone, fresh_id, native, post, report


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def put_config(server, app, **cfg):
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config",
                       body=json.dumps(cfg).encode(), token=app["admin_token"])
    assert r.status == 200, r


def test_policy_changed_through_another_server_applies_at_once(server, db, make_server,
                                                                image):
    app = create_app(db)
    other = make_server()
    allow_everyone(server, app)
    stack = [image.by_function[1], image.by_function[2]]
    # The other server learns the policy "everyone, no real quota"…
    r = post(other, app, "/api/v1/ingest", native(fresh_id(), image, stack, user="a"))
    assert r.status == 202, r

    # …which then changes through the first one.
    put_config(server, app, sample_rate=0)
    r = post(other, app, "/api/v1/ingest", native(fresh_id(), image, stack, user="b"))
    assert r.status == 403 and r.error_code == "not_sampled", r

    put_config(server, app, sample_rate=1, daily_quota=2)
    codes = [post(other, app, "/api/v1/ingest",
                  native(fresh_id(), image, stack, user="c")).status for _ in range(3)]
    assert codes == [202, 202, 429]

    # Grouping rules too: skipping frames in no listed image ("?") changes
    # the key of the next report at once.
    def with_foreign_frame(user):
        body = native(fresh_id(), image, stack, user=user)
        body["threads"][0]["frames"].insert(0, "0x10")
        return body

    first = post(other, app, "/api/v1/ingest", with_foreign_frame("d"))
    key_before = report(other, app, first.json["accepted"][0]["id"])["key1"]
    put_config(server, app, daily_quota=100,
               grouping_rules={"skip_images": ["?"], "skip_prefixes": []})
    second = post(other, app, "/api/v1/ingest", with_foreign_frame("e"))
    assert second.status == 202, second
    assert report(other, app, second.json["accepted"][0]["id"])["key1"] != key_before


def test_upload_is_used_by_the_next_report(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    stack = [image.by_function[3]]
    r = post(server, app, "/api/v1/ingest", native(fresh_id(), image, stack))
    before = report(server, app, r.json["accepted"][0]["id"])
    assert before["images"][0]["status"] == "missing"

    assert server.upload(app, image.dwarf).status in (200, 201)
    r = post(server, app, "/api/v1/ingest", native(fresh_id(), image, stack))
    after = report(server, app, r.json["accepted"][0]["id"])
    assert after["images"][0]["status"] == "found" and not after["pending"]

    # And a delete is seen by the next report just as soon.
    d = server.request("DELETE", f"/api/v1/apps/{app['app']}/dsyms/{image.uuid}",
                       token=app["upload_token"])
    assert d.status == 204, d
    r = post(server, app, "/api/v1/ingest", native(fresh_id(), image, stack))
    assert report(server, app, r.json["accepted"][0]["id"])["images"][0]["status"] == "missing"


def test_upload_to_another_server_is_used_within_seconds(server, db, make_server, image):
    # Both instances share the data directory, as a deployment must; no
    # periodic reprocessing, so a report's status is the one it got at ingest.
    quiet = {"STALLSCOPE_REPROCESS_INTERVAL": "3600"}
    uploader = make_server(env=quiet)
    ingester = make_server(env={**quiet, "STALLSCOPE_DATA_DIR": str(uploader.data_dir)})
    app = create_app(db)
    allow_everyone(ingester, app)
    stack = [image.by_function[2]]
    r = post(ingester, app, "/api/v1/ingest", native(fresh_id(), image, stack))
    assert report(ingester, app, r.json["accepted"][0]["id"])["pending"]

    assert uploader.upload(app, image.dwarf).status in (200, 201)
    time.sleep(2.5)  # what the ingester remembers about the UUID expires after 2 s
    r = post(ingester, app, "/api/v1/ingest", native(fresh_id(), image, stack))
    now = report(ingester, app, r.json["accepted"][0]["id"])
    assert now["images"][0]["status"] == "found" and not now["pending"]
