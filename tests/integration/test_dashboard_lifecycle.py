"""The dashboard's group lifecycle and webhooks (SPEC §11) in headless
Chromium against the real server and PostgreSQL: the groups list shows
open and regressed groups with their badges and hides resolved and
ignored ones until one click shows them (a choice kept in the address);
a group is resolved from its page in a picked version, its badge and
history changing in place; the Webhooks page deletes, adds and tests
webhooks, a receiver on loopback getting the test, and shows each
attempt with its error. The groups and their statuses are made here over
HTTP; what the pages show is compared with the API's answers and with
what the receiver got. tests/browser/lifecycle.mjs does the clicking."""

import json
import re
import time
from datetime import datetime, timezone

import pytest

from conftest import create_app, free_port
from ingest_util import allow_everyone
from test_dashboard import run_browser, utc_text
from test_lifecycle import api, group_of, ingest, patch, system_report
from webhook_receiver import Receiver

ENV = {"STALLSCOPE_WEBHOOK_ALLOW_PRIVATE": "1"}
SECRET = "lifecycle-secret-5d1e"
# In the version order 2.10 is the newest; as text it would be 2.9.
OLDER, OLD, NEWEST = "2.8", "2.9", "2.10"
RESOLVE, REGRESSED, IGNORED = 0x100, 0x200, 0x300
DAY_MS = 86400 * 1000


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def get(server, app, path):
    r = api(server, app, "GET", path)
    assert r.status == 200, (path, r)
    return r.json


def listed(server, app, status=None):
    """(key, status) of the level-1 groups the list asks for, in its order."""
    q = "/groups?level=1&sort=stall_ms&limit=50" + (f"&status={status}" if status else "")
    return [(g["key"], g["status"]) for g in get(server, app, q)["groups"]]


def make_groups(server, app):
    """Three groups: one open (to be resolved in the browser), one resolved
    in OLD that a NEWEST report regressed, one ignored for 100 reports."""
    ingest(server, app, system_report(RESOLVE, OLDER, user="a"),
           system_report(RESOLVE, OLDER, user="b"),
           system_report(REGRESSED, OLDER), system_report(IGNORED, OLD, user="c"),
           system_report(IGNORED, NEWEST, user="d"))
    keys = {o: group_of(server, app, o)["key"] for o in (RESOLVE, REGRESSED, IGNORED)}
    patch(server, app, keys[REGRESSED], {"status": "resolved", "resolved_in": OLD})
    ingest(server, app, system_report(REGRESSED, NEWEST))
    patch(server, app, keys[IGNORED], {"status": "ignored", "until_reports": 100})
    assert get(server, app, f"/groups/{keys[REGRESSED]}")["group"]["status"] == "regressed"
    return keys


def test_lifecycle_and_webhooks_in_the_dashboard(db, make_server, receiver, tmp_path):
    server = make_server(env=ENV)
    app = create_app(db)
    allow_everyone(server, app)
    keys = make_groups(server, app)
    # A webhook the page lists and deletes; nothing is sent to it.
    r = api(server, app, "PUT", "/webhooks/old-team",
            {"url": receiver.url("/old"), "secret": SECRET, "events": ["spike"], "format": "slack"})
    assert r.status == 201, r
    hook = {"name": "team-alerts", "url": receiver.url("/hook"), "secret": SECRET,
            "events": ["new_group", "regressed"], "format": "json"}
    closed = free_port()  # nothing listens there: every attempt fails
    broken = {"name": "nobody-home", "url": f"http://127.0.0.1:{closed}/hook", "secret": SECRET}
    resolve_key, regressed_key, ignored_key = keys[RESOLVE], keys[REGRESSED], keys[IGNORED]
    default_list = listed(server, app, "open,regressed")
    seen = run_browser("lifecycle.mjs", {
        "url": f"http://127.0.0.1:{server.port}", "app": app["app"], "token": app["admin_token"],
        "resolve_key": resolve_key, "resolve_in": OLD, "regressed_key": regressed_key,
        "ignored_key": ignored_key,
        "hook": hook, "broken": broken, "delete_name": "old-team"}, tmp_path)
    assert not seen["page_errors"] and not seen["console_errors"], seen
    assert not seen["failed_requests"], seen["failed_requests"]

    # No view scrolls sideways, at 1280 px or at 390.
    assert {m["view"] for m in seen["overflow"]} == {
        "groups", "group", "groups_all", "group_regressed", "webhooks", "webhooks_tested"}
    assert len(seen["phone"]) == 6
    for m in seen["overflow"] + seen["phone"]:
        assert m["client_width"] in (1280, 390) and m["scroll_width"] <= m["client_width"], m

    # The list as it opens: the API's open and regressed groups, in its
    # order; the regressed one says so, an open one wears no badge.
    first = seen["list_default"]
    assert first["hash"] == "#/groups" and first["select"] == ""
    assert [(r["key"], r["status"]) for r in first["rows"]] == default_list
    assert {k for k, _ in default_list} == {resolve_key, regressed_key}
    badges = {r["key"]: r["badges"] for r in first["rows"]}
    assert badges == {resolve_key: [], regressed_key: ["regressed"]}
    assert "Show resolved and ignored" in first["line"]

    # The group page before and after Resolve: versions newest first by
    # the version order, the newest chosen, "any version" last; the badge,
    # the detail and the history change in place, without a reload.
    before = seen["group_before"]
    assert before["hash"] == f"#/groups/{resolve_key}"
    assert (before["status"], before["badge"], before["reopen_shown"]) == ("open", "open", False)
    assert before["versions"] == [{"value": v, "text": v} for v in (NEWEST, OLD, OLDER)] + [
        {"value": "", "text": "any version"}]
    assert before["chosen"] == NEWEST
    after = seen["group_after"]
    assert after["stayed"] and after["hash"] == before["hash"]
    assert (after["status"], after["badge"], after["reopen_shown"]) == \
        ("resolved", "resolved", True)
    assert after["note"] == f"Resolved in {OLD}."
    assert after["detail"].startswith(f"Resolved in {OLD}:")
    group = get(server, app, f"/groups/{resolve_key}")["group"]
    assert (group["status"], group["resolved_in"]) == ("resolved", OLD)
    events = get(server, app, f"/groups/{resolve_key}/events")["events"]
    assert [(e["type"], e["cause"], e.get("version")) for e in events] == [
        ("resolved", "user", OLD), ("new_group", "report", OLDER)]
    assert [(h["type"], h["datetime"], h["time"]) for h in after["history"]] == [
        (e["type"], e["at"], utc_text(e["at"])) for e in events]
    assert [h["text"] for h in after["history"]] == [
        f"Resolved in {OLD} by a user", f"New group: first report, in {OLDER}"]
    assert [h["text"] for h in before["history"]] == [f"New group: first report, in {OLDER}"]

    # Back on the list it is hidden; one click shows every status, each
    # row with the API's status and its badge, and the choice stays in
    # the address: after a reload, to a group and back.
    assert [(r["key"], r["status"]) for r in seen["list_after"]["rows"]] == \
        listed(server, app, "open,regressed") == [(regressed_key, "regressed")]
    every = listed(server, app)
    assert {k for k, _ in every} == set(keys.values())
    shown = seen["list_all"]
    assert shown["hash"] == "#/groups?status=all" and shown["select"] == "all"
    assert "Hide resolved and ignored" in shown["line"]
    assert [(r["key"], r["status"]) for r in shown["rows"]] == every
    assert {r["key"]: r["badges"] for r in shown["rows"]} == {
        resolve_key: ["resolved"], regressed_key: ["regressed"], ignored_key: ["ignored"]}
    assert seen["list_reloaded"]["hash"] == "#/groups?status=all"
    assert [(r["key"], r["status"]) for r in seen["list_reloaded"]["rows"]] == every
    back = seen["list_back"]
    assert back["group_hash"] == f"#/groups/{resolve_key}?status=all"
    assert back["hash"] == "#/groups?status=all"
    assert [(r["key"], r["status"]) for r in back["rows"]] == every

    # The regressed group's history in words, from its events.
    reg = seen["regressed"]
    assert (reg["status"], reg["badge"]) == ("regressed", "regressed")
    assert [h["text"] for h in reg["history"]] == [
        f"Regressed in {NEWEST}", f"Resolved in {OLD} by a user",
        f"New group: first report, in {OLDER}"]
    assert [h["type"] for h in reg["history"]] == [
        e["type"] for e in get(server, app, f"/groups/{regressed_key}/events")["events"]]

    # The ignored group: reopened, ignored for 24 hours from the click
    # (the page's time, to the second), then for 1,000 reports, which the
    # API keeps; each change one event of the history.
    ig = seen["ignored"]
    assert (ig["before"]["status"], ig["before"]["badge"]) == ("ignored", "ignored")
    assert ig["before"]["detail"] == "Ignored for the next 100 reports."
    assert (ig["reopened"]["status"], ig["reopened"]["reopen_shown"]) == ("open", False)
    assert ig["reopened"]["history"][0]["text"] == "Reopened by a user"
    until = re.fullmatch(r"Ignored until (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC\.",
                         ig["for24h"]["detail"])
    assert until, ig["for24h"]
    until_ms = datetime.strptime(until[1], "%Y-%m-%d %H:%M:%S").replace(
        tzinfo=timezone.utc).timestamp() * 1000
    t0, t1 = ig["clicked"]
    assert t0 - 1000 <= until_ms - DAY_MS <= t1, (until_ms, t0, t1)
    assert ig["for1000"]["detail"] == "Ignored for the next 1,000 reports."
    group = get(server, app, f"/groups/{ignored_key}")["group"]
    assert (group["status"], group["until_reports"], group.get("until")) == ("ignored", 1000, None)
    events = get(server, app, f"/groups/{ignored_key}/events")["events"]
    assert [(e["type"], e["cause"]) for e in events] == [
        ("ignored", "user"), ("ignored", "user"), ("open", "user"), ("ignored", "user"),
        ("new_group", "report")]
    assert [h["text"] for h in ig["for1000"]["history"]] == [
        "Ignored by a user", "Ignored by a user", "Reopened by a user", "Ignored by a user",
        f"New group: first report, in {events[-1]['version']}"]

    # Webhooks: the listed one deleted after a confirm, the new one saved
    # as the page sent it (its secret never shown), its test delivered to
    # the receiver and logged as the API logs it.
    assert seen["webhooks_before"] == ["old-team"] and seen["deleted"] == []
    assert [d["type"] for d in seen["dialogs"]] == ["confirm"]
    assert "old-team" in seen["dialogs"][0]["message"]
    hooks = {w["name"]: w for w in get(server, app, "/webhooks")["webhooks"]}
    assert set(hooks) == {hook["name"], broken["name"]}
    assert {k: hooks[hook["name"]][k] for k in ("url", "events", "format")} == \
        {"url": hook["url"], "events": hook["events"], "format": "json"}
    assert hooks[broken["name"]]["events"] == ["new_group", "regressed", "spike"]
    assert SECRET not in json.dumps(seen)
    h = seen["hook"]
    assert h["added"] == f"Added {hook['name']}." and h["secret_cleared"]
    assert (h["fresh"]["url"], h["fresh"]["events"], h["fresh"]["format"]) == (
        hook["url"], "New group, Regressed", "json")
    assert h["fresh"]["deliveries"] == []
    tested = h["tested"]
    assert tested["delivered"] == "true"
    assert tested["result"] == "Delivered: the receiver answered 200."
    sent = receiver.events("test", path="/hook")
    assert len(sent) == 1 and sent[0]["app"] == app["app"], receiver.requests
    assert receiver.bodies("/old") == []
    log = get(server, app, f"/webhooks/{hook['name']}/deliveries")["deliveries"]
    assert [(d["event_id"], d["type"], d["result"], d["status"]) for d in log] == [
        (sent[0]["event_id"], "test", "delivered", 200)]
    assert [(r["event_id"], r["type"], r["result"]) for r in tested["deliveries"]] == [
        (d["event_id"], d["type"], d["result"]) for d in log]
    row = tested["deliveries"][0]["cells"]
    assert row == [utc_text(log[0]["at"]), "test", str(log[0]["attempt"]), "delivered", "200",
                   log[0].get("error") or ""]

    # The test to a closed port: not delivered, the error on the page as
    # the API logged it, visible in its row.
    b = seen["broken"]
    blog = get(server, app, f"/webhooks/{broken['name']}/deliveries")["deliveries"]
    assert [(d["type"], d["result"]) for d in blog] == [("test", "failed")]
    assert blog[0]["error"]
    assert b["delivered"] == "false" and blog[0]["error"] in b["result"]
    assert b["result"].startswith("Not delivered")
    assert [(r["event_id"], r["type"], r["result"]) for r in b["deliveries"]] == [
        (blog[0]["event_id"], "test", "failed")]
    assert b["deliveries"][0]["cells"][3] == "failed"
    assert b["deliveries"][0]["cells"][5] == blog[0]["error"] and b["error_visible"]
    phone_error = seen["phone"][-1]
    assert phone_error["view"] == "error cell" and phone_error["visible"]
    # Nothing else was sent anywhere.
    time.sleep(0.5)
    assert [q["path"] for q in receiver.requests] == ["/hook"]
