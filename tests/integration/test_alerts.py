"""Issue 41, SPEC §11.2: webhooks. Events are written to the outbox with
the report that caused them and delivered by every server's worker to a
receiver on loopback started here: signed (the signature recomputed here
from the secret the test chose), retried after a failure, delivered after
a server is killed, once each by two servers sharing the outbox, never to
a private address without the allow setting, never through a redirect.

The servers of this module set STALLSCOPE_WEBHOOK_ALLOW_PRIVATE=1 (the
receiver is on 127.0.0.1) and STALLSCOPE_WEBHOOK_RETRY=1, except where a
test says otherwise."""

import json
import signal
import time

import pytest

from conftest import create_app, fixture_of, migrate, psql
from ingest_util import Image, allow_everyone, fresh_id, native, post
from test_lifecycle import api, group_of, ingest, key_of, patch, system_report
from webhook_receiver import Receiver, signature

TEST_ENV = {"STALLSCOPE_WEBHOOK_ALLOW_PRIVATE": "1", "STALLSCOPE_WEBHOOK_RETRY": "1"}


@pytest.fixture(scope="module")
def db(cluster):
    """A database of this module's own: every server's worker delivers
    every app's queue, and the session's other servers (without the allow
    setting) would take these tests' deliveries and refuse them."""
    url = cluster.create_db("it_alerts")
    migrate(url)
    return url


@pytest.fixture(autouse=True)
def no_webhook_left(db):
    """Each test's webhooks go with it: a queued retry must not reach a
    later test's receiver on a reused port."""
    yield
    psql(db, "DELETE FROM webhooks", fold_first=False)
SECRET = "s3cr3t-of-the-receiver-9f2c"


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def alert_server(make_server):
    return make_server(env=TEST_ENV)


@pytest.fixture
def app(alert_server, db):
    a = create_app(db)
    allow_everyone(alert_server, a)
    return a


def put_webhook(server, app, name, url, events=None, fmt="json", secret=SECRET):
    body = {"url": url, "secret": secret, "format": fmt}
    if events is not None:
        body["events"] = events
    return api(server, app, "PUT", f"/webhooks/{name}", body)


def deliveries(server, app, name):
    r = api(server, app, "GET", f"/webhooks/{name}/deliveries")
    assert r.status == 200, r
    return r.json["deliveries"]


def test_a_new_group_sends_one_signed_new_group_event(alert_server, app, receiver):
    r = put_webhook(alert_server, app, "team", receiver.url())
    assert r.status == 201, r
    assert r.json == {"name": "team", "url": receiver.url(),
                      "events": ["new_group", "regressed", "spike"], "format": "json"}
    assert put_webhook(alert_server, app, "team", receiver.url()).status == 200
    ingest(alert_server, app, system_report(0x100, "3.1"), system_report(0x100, "3.1"))
    got = receiver.wait(lambda: receiver.events("new_group"))
    time.sleep(1.5)  # a second send would be there by now
    assert len(receiver.requests) == 1, receiver.requests
    sent = receiver.requests[0]
    assert sent["headers"]["X-Stallscope-Signature"] == signature(SECRET, sent["body"])
    assert sent["headers"]["Content-Type"] == "application/json"
    body = got[0]
    assert sent["headers"]["X-Stallscope-Event-Id"] == body["event_id"]
    key = group_of(alert_server, app, 0x100)["key"]
    assert (body["type"], body["app"], body["group"]["key"]) == ("new_group", app["app"], key)
    assert body["group"]["frames"][0] == key_of(0x100)
    assert body["group"]["reports"] == 2 and body["group"]["status"] == "open"
    assert body["group"]["url"].endswith(f"/#/groups/{key}")
    assert body["event"]["version"] == "3.1"
    log = deliveries(alert_server, app, "team")
    assert [(d["event_id"], d["type"], d["result"], d["status"]) for d in log] == [
        (body["event_id"], "new_group", "delivered", 200)]


def test_a_regression_sends_one_event_and_one_delivery(alert_server, app, receiver):
    ingest(alert_server, app, system_report(0x200, "2.0"))
    key = group_of(alert_server, app, 0x200)["key"]
    put_webhook(alert_server, app, "ops", receiver.url(), events=["regressed"])
    patch(alert_server, app, key, {"status": "resolved", "resolved_in": "2.1"})
    ingest(alert_server, app, system_report(0x200, "2.0"))
    ingest(alert_server, app, system_report(0x200, "2.10"), system_report(0x200, "2.10"))
    ingest(alert_server, app, system_report(0x200, "2.11"))
    got = receiver.wait(lambda: receiver.events("regressed"))
    time.sleep(1.5)
    assert len(receiver.requests) == 1
    assert (got[0]["group"]["status"], got[0]["event"]["version"]) == ("regressed", "2.10")
    assert len(deliveries(alert_server, app, "ops")) == 1


def test_slack_format_names_the_culprit_frames_counts_and_link(make_server, db, receiver):
    server = make_server(env={**TEST_ENV, "STALLSCOPE_PUBLIC_URL": "https://stalls.example.com/"})
    app = create_app(db)
    allow_everyone(server, app)
    put_webhook(server, app, "slack", receiver.url("/slack"), fmt="slack")
    ingest(server, app, system_report(0x300, "4.0", user="a"), system_report(0x300, "4.0", user="b"))
    body = receiver.wait(lambda: receiver.bodies("/slack"))[0]
    key = group_of(server, app, 0x300)["key"]
    assert set(body) == {"text"}
    text = body["text"]
    assert text.startswith(f"*New stall group* in {app['app']}")
    assert f"`{key_of(0x300)}`" in text
    assert "2 reports · 2 users" in text and "version 4.0" in text
    assert f"<https://stalls.example.com/#/groups/{key}|Open the group in stallscope>" in text


def test_a_failed_delivery_is_retried_until_the_receiver_takes_it(alert_server, app, receiver):
    receiver.script = [500, 503]
    put_webhook(alert_server, app, "flaky", receiver.url())
    ingest(alert_server, app, system_report(0x400))
    assert receiver.wait(lambda: len(receiver.requests) >= 3, seconds=30)
    ids = {json.loads(r["body"])["event_id"] for r in receiver.requests}
    assert len(ids) == 1
    log = receiver.wait(lambda: [d for d in deliveries(alert_server, app, "flaky")
                                 if d["result"] == "delivered"] and
                        deliveries(alert_server, app, "flaky"))
    assert [(d["attempt"], d["result"], d["status"]) for d in reversed(log)] == [
        (1, "failed", 500), (2, "failed", 503), (3, "delivered", 200)]
    assert log[-1]["error"] == "HTTP 500" or "500" in log[-1]["error"]


def test_a_server_killed_before_the_delivery_delivers_after_restart(make_server, db, receiver):
    server = make_server(env=TEST_ENV)
    app = create_app(db)
    allow_everyone(server, app)
    put_webhook(server, app, "team", receiver.url())
    receiver.hold.clear()  # the first send waits: the server dies meanwhile
    ingest(server, app, system_report(0x500))
    assert receiver.wait(lambda: receiver.requests, seconds=10)
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait()
    receiver.hold.set()
    first = json.loads(receiver.requests[0]["body"])["event_id"]
    server.start()
    # The killed server's lease runs out (15 s), then the event goes again.
    assert receiver.wait(lambda: len(receiver.requests) >= 2, seconds=40)
    assert json.loads(receiver.requests[1]["body"])["event_id"] == first
    assert receiver.wait(lambda: deliveries(server, app, "team"))[0]["result"] == "delivered"


def many_events(server, app, count, base):
    """COUNT new groups, each a new_group event."""
    reports = [system_report(base + 16 * i, user=f"m{i}") for i in range(count)]
    for i in range(0, count, 100):
        ingest(server, app, *reports[i:i + 100])


def test_two_servers_deliver_each_event_once_and_lose_none_when_one_dies(
        make_server, db, receiver):
    one, two = make_server(env=TEST_ENV), make_server(env=TEST_ENV)
    app = create_app(db)
    allow_everyone(one, app)
    put_webhook(one, app, "team", receiver.url(), events=["new_group"])
    many_events(one, app, 200, 0x10000)
    assert receiver.wait(lambda: len(receiver.requests) >= 200, seconds=60)
    time.sleep(2)
    ids = [b["event_id"] for b in receiver.bodies()]
    assert len(ids) == 200 and len(set(ids)) == 200
    # Once each by the two workers together, whichever sent it.
    sent = 0
    for s in (one, two):
        metrics = s.request("GET", "/metrics").raw.decode()
        sent += int(metrics.split('stallscope_webhook_deliveries_total{result="delivered"} ')[1]
                    .split()[0])
    assert sent == 200
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    assert psql(db, f"SELECT count(*) FROM alert_outbox WHERE app_id = {app_id}") == "0"

    receiver.requests.clear()
    many_events(two, app, 200, 0x40000)
    receiver.wait(lambda: len(receiver.requests) >= 20, seconds=20)
    one.proc.send_signal(signal.SIGKILL)
    one.proc.wait()
    want = set(psql(db, f"SELECT event_id FROM group_events WHERE app_id = {app_id}"
                        " AND type = 'new_group' AND key1 IN (SELECT key FROM groups"
                        f" WHERE app_id = {app_id} AND level = 1 AND frames->>0 >="
                        " 'libsystem_kernel.dylib+0x40000')").split())
    assert len(want) == 200
    got = receiver.wait(lambda: want <= {b["event_id"] for b in receiver.bodies()} and
                        {b["event_id"] for b in receiver.bodies()}, seconds=60)
    assert got and want <= got


def test_a_late_dsym_moving_500_reports_into_3_groups_sends_3_events(
        alert_server, app, receiver, manifest, db):
    image = Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))
    put_webhook(alert_server, app, "team", receiver.url(), events=["new_group"])
    functions = image.by_function[1:4]
    reports = []
    for i in range(500):
        # Offsets inside each function's first bytes: before the dSYM, many
        # temporary groups; after it, one real group per function.
        start = functions[i % 3]
        reports.append(native(fresh_id(), image, [start + 4 * (i % 5)], user=f"w{i}"))
    for i in range(0, 500, 100):
        r = post(alert_server, app, "/api/v1/ingest", {"reports": reports[i:i + 100]})
        assert r.status == 202, r
    time.sleep(2)
    assert receiver.requests == []  # temporary groups raise nothing
    assert alert_server.upload(app, image.dwarf).status in (200, 201)
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    done = receiver.wait(lambda: psql(db, "SELECT count(*) FROM reports WHERE app_id ="
                                          f" {app_id} AND pending") == "0", seconds=120)
    assert done
    got = receiver.wait(lambda: len(receiver.requests) >= 3, seconds=20)
    time.sleep(2)
    assert got and len(receiver.requests) == 3
    keys = {b["group"]["key"] for b in receiver.bodies()}
    assert len(keys) == 3
    assert {b["group"]["frames"][0].split("!")[0] for b in receiver.bodies()} == {
        image.name.rsplit("/", 1)[-1]}


def test_the_secret_is_in_no_reply_and_no_log_line(alert_server, app, receiver):
    r = put_webhook(alert_server, app, "quiet", receiver.url())
    assert SECRET not in r.raw.decode()
    listed = api(alert_server, app, "GET", "/webhooks")
    assert [w["name"] for w in listed.json["webhooks"]] == ["quiet"]
    assert SECRET not in listed.raw.decode()
    test = api(alert_server, app, "POST", "/webhooks/quiet/test")
    assert test.status == 200 and test.json["delivered"] is True, test
    assert SECRET not in test.raw.decode()
    assert SECRET not in deliveries(alert_server, app, "quiet").__repr__()
    sent = receiver.events("test")[0]
    assert sent["group"] is None and sent["app"] == app["app"]
    assert receiver.requests[0]["headers"]["X-Stallscope-Signature"] == signature(
        SECRET, receiver.requests[0]["body"])
    # A scheme in capitals is a URL like any other (libcurl's parser says
    # so; the table's check agrees), never a refused row whose detail would
    # log the secret.
    upper = put_webhook(alert_server, app, "upper", receiver.url().replace("http", "HTTP", 1))
    assert upper.status == 201, upper
    assert SECRET not in alert_server.log()


def test_private_destinations_are_refused_without_the_allow_setting(make_server, db, receiver):
    server = make_server(env={"STALLSCOPE_WEBHOOK_ALLOW_PRIVATE": "0"})
    app = create_app(db)
    urls = {"loopback": receiver.url(), "named": f"http://localhost:{receiver.port}/hook",
            "private": "http://10.1.2.3/hook", "link-local": "http://169.254.169.254/latest",
            "ipv6": f"http://[::1]:{receiver.port}/hook"}
    for name, url in urls.items():
        assert put_webhook(server, app, name, url).status == 201
        r = api(server, app, "POST", f"/webhooks/{name}/test")
        assert r.status == 200 and r.json["delivered"] is False, (name, r)
        assert "refused" in r.json["error"], (name, r)
        assert deliveries(server, app, name)[0]["result"] == "failed"
    assert receiver.requests == []


def test_a_redirect_is_not_followed(alert_server, app, receiver):
    receiver.script = [302]
    put_webhook(alert_server, app, "moved", receiver.url())
    r = api(alert_server, app, "POST", "/webhooks/moved/test")
    assert r.json["delivered"] is False and r.json["status"] == 302
    assert "redirect" in r.json["error"]
    time.sleep(0.5)
    assert [q["path"] for q in receiver.requests] == ["/hook"]


def test_webhooks_are_checked_listed_and_deleted(alert_server, app, receiver):
    bad = [{"url": "ftp://example.com/x", "secret": "k"},
           {"url": "file:///etc/passwd", "secret": "k"},
           {"url": "http://user:pw@example.com/", "secret": "k"},
           {"url": "not a url", "secret": "k"},
           {"url": "https://example.com/", "secret": ""},
           {"url": "https://example.com/"},
           {"url": "https://example.com/", "secret": "k", "format": "xml"},
           {"url": "https://example.com/", "secret": "k", "events": ["crash"]},
           {"url": "https://example.com/", "secret": "k", "events": []},
           {"url": "https://example.com/", "secret": "k", "colour": "red"}]
    for body in bad:
        r = api(alert_server, app, "PUT", "/webhooks/team", body)
        assert (r.status, r.error_code) == (400, "bad_field"), (body, r)
    r = api(alert_server, app, "PUT", "/webhooks/bad%20name",
            {"url": "https://example.com/", "secret": "k"})
    assert r.status == 400
    assert put_webhook(alert_server, app, "team", receiver.url(), events=["spike"]).status == 201
    assert api(alert_server, app, "GET", "/webhooks").json["webhooks"][0]["events"] == ["spike"]
    assert api(alert_server, app, "DELETE", "/webhooks/team").status == 204
    assert api(alert_server, app, "DELETE", "/webhooks/team").status == 404
    assert api(alert_server, app, "GET", "/webhooks/team/deliveries").status == 404
    assert api(alert_server, app, "POST", "/webhooks/team/test").status == 404
    assert api(alert_server, app, "GET", "/webhooks").json == {"webhooks": []}


def test_metrics_show_the_outbox_and_the_deliveries(alert_server, app, receiver):
    put_webhook(alert_server, app, "team", receiver.url())
    ingest(alert_server, app, system_report(0x600))
    receiver.wait(lambda: receiver.requests)
    text = receiver.wait(lambda: (lambda t: 'result="delivered"} 1' in t and t)(
        alert_server.request("GET", "/metrics").raw.decode()))
    assert text
    assert "stallscope_outbox_depth " in text
    assert "stallscope_outbox_oldest_seconds " in text
    assert 'stallscope_webhook_deliveries_total{result="failed"} 0' in text
