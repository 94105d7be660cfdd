"""Issue 41, SPEC §11.1: a level-1 group's status — resolved (in a
version), ignored (until a time or a number of reports), regressed, open —
set over HTTP, decided by ingest against each report's own version, by the
fold (ignores that run out, spikes) and by the background loop (ignores
whose time passed), with one event per transition however many reports
race for it.

The stacks are frames of a system image without symbols: each offset is a
group of its own, real (a system image makes no report wait), and the
expected keys come from the lists, never from the server's SQL."""

import concurrent.futures
import datetime
import json
import time

import pytest

from conftest import create_app, psql
from ingest_util import allow_everyone, fresh_id, post

KERNEL = "/usr/lib/system/libsystem_kernel.dylib"
KERNEL_LOAD = 0x1a0000000
KERNEL_UUID = "0F3C9B1E-2A4D-4E7B-9C1A-7D2E5F6A8B90"
NOON = 1795867200  # 2026-11-28 12:00 UTC
DAY = 86400


def system_report(offset, version="2.0", user="u-1"):
    """A stall whose two innermost frames are in libsystem_kernel, at
    OFFSET and at 0x10: one group per offset."""
    return {"report_id": fresh_id(), "user_id": user, "kind": "stall", "duration_ms": 2500,
            "app_version": version, "os": "iOS", "os_version": "17.2", "device": "iPhone14,2",
            "images": [{"name": KERNEL, "uuid": KERNEL_UUID, "arch": "arm64",
                        "load_address": hex(KERNEL_LOAD), "size": 0x100000}],
            "threads": [{"name": "main", "main": True,
                         "frames": [hex(KERNEL_LOAD + offset), hex(KERNEL_LOAD + 0x11)]}]}


def ingest(server, app, *reports):
    r = post(server, app, "/api/v1/ingest", {"reports": list(reports)})
    assert r.status == 202, r
    assert len(r.json["accepted"]) == len(reports), r
    return r


def key_of(offset):
    """The frame identity a group of system_report(OFFSET) starts with."""
    return f"libsystem_kernel.dylib+{hex(offset)}"


def api(server, app, method, path, body=None):
    return server.request(method, f"/api/v1/apps/{app['app']}{path}",
                          body=json.dumps(body).encode() if body is not None else None,
                          token=app["admin_token"])


def group_keys(server, app, query=""):
    r = api(server, app, "GET", f"/groups?limit=500{query}")
    assert r.status == 200, r
    return {g["frames"][0]: g for g in r.json["groups"]}


def group_of(server, app, offset):
    return group_keys(server, app)[key_of(offset)]


def status_of(server, app, key):
    r = api(server, app, "GET", f"/groups/{key}")
    assert r.status == 200, r
    return r.json["group"]["status"]


def events(server, app, key):
    r = api(server, app, "GET", f"/groups/{key}/events")
    assert r.status == 200, r
    return [(e["type"], e["status"], e["cause"], e.get("version"))
            for e in reversed(r.json["events"])]


def patch(server, app, key, body):
    r = api(server, app, "PATCH", f"/groups/{key}", body)
    assert r.status == 200, r
    return r.json


@pytest.fixture
def app(server, db):
    a = create_app(db)
    allow_everyone(server, a)
    return a


def test_resolved_in_a_version_regresses_only_from_that_version_on(server, app):
    ingest(server, app, system_report(0x100, "2.0"), system_report(0x200, "2.8"),
           system_report(0x300, "1.0"))
    a, b, c = (group_of(server, app, o)["key"] for o in (0x100, 0x200, 0x300))
    assert {status_of(server, app, k) for k in (a, b, c)} == {"open"}
    reply = patch(server, app, a, {"status": "resolved", "resolved_in": "2.1"})
    assert reply.pop("changed_at") and reply == {"key": a, "status": "resolved",
                                                 "resolved_in": "2.1"}
    patch(server, app, b, {"status": "resolved", "resolved_in": "2.9"})
    patch(server, app, c, {"status": "resolved"})

    ingest(server, app, system_report(0x100, "2.0"), system_report(0x200, "2.8"))
    assert (status_of(server, app, a), status_of(server, app, b)) == ("resolved", "resolved")

    # 2.2 and 2.10 are later than 2.1 and 2.9 (versions by their numbers,
    # SPEC §10.3); a group resolved without a version regresses with any.
    ingest(server, app, system_report(0x100, "2.2"), system_report(0x200, "2.10"),
           system_report(0x300, "0.9"))
    assert [status_of(server, app, k) for k in (a, b, c)] == ["regressed"] * 3
    ingest(server, app, system_report(0x100, "2.3"))
    assert events(server, app, a) == [
        ("new_group", "open", "report", "2.0"), ("resolved", "resolved", "user", "2.1"),
        ("regressed", "regressed", "report", "2.2")]
    assert events(server, app, b)[-1] == ("regressed", "regressed", "report", "2.10")
    assert events(server, app, c)[-1] == ("regressed", "regressed", "report", "0.9")

    # Lists: every status by default, status= filters, the reply says it.
    listed = group_keys(server, app)
    assert {listed[key_of(o)]["status"] for o in (0x100, 0x200, 0x300)} == {"regressed"}
    assert set(group_keys(server, app, "&status=regressed")) == {
        key_of(0x100), key_of(0x200), key_of(0x300)}
    assert group_keys(server, app, "&status=open,resolved,ignored") == {}
    patch(server, app, c, {"status": "open"})
    assert set(group_keys(server, app, "&status=open")) == {key_of(0x300)}
    today = datetime.date.today().isoformat()
    assert set(group_keys(server, app, f"&status=regressed&from={today}&version=2.2")) == {
        key_of(0x100)}
    sub = api(server, app, "GET", "/groups?level=2&status=regressed").json["groups"]
    assert {g["status"] for g in sub} == {"regressed"} and len(sub) == 2
    assert api(server, app, "GET", "/groups?status=fixed").error_code == "bad_query"


def test_reports_racing_to_regress_a_group_make_one_event(server, app, make_server):
    """Three servers, each storing its batches on its own connection, so
    their transactions do race for the status row."""
    ingest(server, app, system_report(0x400, "1.0"))
    key = group_of(server, app, 0x400)["key"]
    patch(server, app, key, {"status": "resolved", "resolved_in": "1.1"})
    servers = [server, make_server(), make_server()]

    def one(i):
        return post(servers[i % 3], app, "/api/v1/ingest",
                    system_report(0x400, "1.2", user=f"racer-{i}")).status

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        assert set(pool.map(one, range(40))) == {202}
    assert status_of(server, app, key) == "regressed"
    assert [e for e in events(server, app, key) if e[0] == "regressed"] == [
        ("regressed", "regressed", "report", "1.2")]


def test_ignored_until_three_reports_reopens_with_the_fourth(server, app):
    ingest(server, app, system_report(0x500))
    key = group_of(server, app, 0x500)["key"]
    reply = patch(server, app, key, {"status": "ignored", "until_reports": 3})
    assert (reply["status"], reply["until_reports"]) == ("ignored", 3)
    for _ in range(3):
        ingest(server, app, system_report(0x500))
    assert status_of(server, app, key) == "ignored"
    ingest(server, app, system_report(0x500))
    assert status_of(server, app, key) == "open"
    assert events(server, app, key)[1:] == [("ignored", "ignored", "user", None),
                                            ("open", "open", "report", None)]


def test_ignored_until_a_time_is_reopened_by_the_background_loop(server, app):
    ingest(server, app, system_report(0x600))
    key = group_of(server, app, 0x600)["key"]
    until = (datetime.datetime.now(datetime.timezone.utc)
             + datetime.timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert patch(server, app, key, {"status": "ignored", "until": until})["until"] == until
    assert status_of(server, app, key) == "ignored"
    deadline = time.time() + 15
    while time.time() < deadline and status_of(server, app, key) != "open":
        time.sleep(0.3)
    assert status_of(server, app, key) == "open"
    assert events(server, app, key)[-1] == ("open", "open", "until", None)


def test_a_patch_is_checked_and_names_an_existing_group(server, app):
    ingest(server, app, system_report(0x700))
    key = group_of(server, app, 0x700)["key"]
    bad = [{"status": "regressed"}, {"status": "fixed"}, {},
           {"status": "open", "resolved_in": "2.0"},
           {"status": "resolved", "until_reports": 3},
           {"status": "ignored", "until_reports": 0},
           {"status": "ignored", "until": "tomorrow"},
           {"status": "ignored", "until": "2026-02-30T00:00:00Z"},
           {"status": "ignored", "until": "2026-12-01T24:00:00Z"},
           {"status": "resolved", "resolved_in": ""},
           {"status": "resolved", "resolved_in": 21},
           {"status": "open", "colour": "red"}]
    for body in bad:
        r = api(server, app, "PATCH", f"/groups/{key}", body)
        assert (r.status, r.error_code) == (400, "bad_field"), (body, r)
    r = api(server, app, "PATCH", "/groups/0123456789abcdef", {"status": "resolved"})
    assert (r.status, r.error_code) == (404, "not_found")
    assert api(server, app, "GET", "/groups/0123456789abcdef/events").status == 404
    assert status_of(server, app, key) == "open"
    assert [e[0] for e in events(server, app, key)] == ["new_group"]
    # Only a change is an event: open again, or the same resolve again,
    # writes none.
    patch(server, app, key, {"status": "open"})
    patch(server, app, key, {"status": "resolved", "resolved_in": "3.0"})
    patch(server, app, key, {"status": "resolved", "resolved_in": "3.0"})
    patch(server, app, key, {"status": "resolved", "resolved_in": "3.1"})
    assert events(server, app, key)[1:] == [("resolved", "resolved", "user", "3.0"),
                                            ("resolved", "resolved", "user", "3.1")]


def test_a_spike_fires_once_per_group_and_day(app, make_server):
    """Yesterday 7 reports (a mean of 1 a day over the week before today),
    today 9: no spike (fewer than 10); the 10th is one, further reports
    are not. A group with 30 yesterday (mean 30/7) spikes at 13, not 12;
    its 30 against an empty week spiked yesterday."""
    yesterday = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON - DAY)})
    today = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    ingest(yesterday, app, *[system_report(0x800, user=f"y{i}") for i in range(7)])
    ingest(yesterday, app, *[system_report(0x900, user=f"y{i}") for i in range(30)])
    quiet, busy = (group_of(today, app, o)["key"] for o in (0x800, 0x900))

    def spikes(key):
        r = api(today, app, "GET", f"/groups/{key}/events")
        return [(e["day"], e["reports"]) for e in reversed(r.json["events"])
                if e["type"] == "spike"]

    # A request's reports commit in the writer's batches, and a fold may
    # run between two of them: yesterday's spike counted the reports the
    # fold that crossed 10 saw, some number from 10 to 30.
    assert spikes(quiet) == []
    [(day, counted)] = spikes(busy)
    assert day == "2026-11-27" and 10 <= counted <= 30
    ingest(today, app, *[system_report(0x800, user=f"t{i}") for i in range(9)])
    ingest(today, app, *[system_report(0x900, user=f"t{i}") for i in range(12)])
    assert spikes(quiet) == [] and spikes(busy) == [("2026-11-27", counted)]
    ingest(today, app, system_report(0x800, user="t9"), system_report(0x900, user="t12"))
    assert spikes(quiet) == [("2026-11-28", 10)]
    assert spikes(busy) == [("2026-11-27", counted), ("2026-11-28", 13)]
    ingest(today, app, *[system_report(0x800, user=f"u{i}") for i in range(5)])
    ingest(today, app, *[system_report(0x900, user=f"u{i}") for i in range(5)])
    assert spikes(quiet) == [("2026-11-28", 10)]
    assert spikes(busy) == [("2026-11-27", counted), ("2026-11-28", 13)]


def test_status_lives_in_its_own_table_keyed_by_app_and_group(server, app, db):
    ingest(server, app, system_report(0xa00))
    key = group_of(server, app, 0xa00)["key"]
    patch(server, app, key, {"status": "ignored", "until_reports": 5})
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    assert psql(db, f"SELECT status, until_reports FROM group_status WHERE app_id = {app_id}"
                    f" AND key1 = '{key}'") == "ignored|5"
    other = create_app(db)
    assert api(server, other, "GET", f"/groups/{key}/events").status == 404


def test_a_report_moved_out_of_a_temporary_group_counts_where_it_lands(server, app, db):
    """lifecycle_report_moved, called as reprocessing calls it after a late
    dSYM moved a report (its delta long folded): into a resolved group it
    regresses it, into an ignored one it counts towards until_reports; out
    of a real group (names changed), or into another temporary one, it
    raises nothing."""
    ingest(server, app, system_report(0xb00, "5.0"), system_report(0xc00, "5.0"),
           system_report(0xd00, "5.0"))
    resolved, ignored, real = (group_of(server, app, o)["key"] for o in (0xb00, 0xc00, 0xd00))
    patch(server, app, resolved, {"status": "resolved", "resolved_in": "5.1"})
    patch(server, app, ignored, {"status": "ignored", "until_reports": 1})
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    temp = "feedfacefeedface"
    psql(db, "INSERT INTO groups (app_id, level, key, frames, reports, users, users_hll,"
             " first_seen, last_seen, waits_for_symbols) VALUES"
             f" ({app_id}, 1, '{temp}', '[\"App+0x10\", \"App+0x20\"]', 1, 1,"
             " hll_empty(12, 5, 1024, 0), now(), now(), true)")
    frames = '["libsystem_kernel.dylib!f"]'

    def moved(to_key, version, from_key=temp, waits="[]", frames=frames):
        psql(db, f"SELECT lifecycle_report_moved({app_id}, -1, '{from_key}', '{to_key}',"
                 f" '{frames}', '{waits}', '{version}')")

    moved(resolved, "5.0")
    assert status_of(server, app, resolved) == "resolved"
    moved(resolved, "5.2")
    assert status_of(server, app, resolved) == "regressed"
    moved(ignored, "5.0")
    assert status_of(server, app, ignored) == "ignored"
    moved(ignored, "5.0")
    assert status_of(server, app, ignored) == "open"
    assert events(server, app, ignored)[-1] == ("open", "open", "report", None)
    patch(server, app, real, {"status": "resolved"})
    moved(real, "6.0", from_key=resolved)
    still = '[{"image_name": "/var/App.app/App", "reason": "missing"}]'
    moved(real, "6.0", waits=still, frames='["App+0x30"]')
    assert status_of(server, app, real) == "resolved"
    # A group that is new to the app gets its one new_group from the move.
    fresh = "0badc0de0badc0de"
    psql(db, "INSERT INTO groups (app_id, level, key, frames, reports, users, users_hll,"
             f" first_seen, last_seen) VALUES ({app_id}, 1, '{fresh}', '[]', 1, 1,"
             " hll_empty(12, 5, 1024, 0), now(), now())")
    moved(fresh, "6.0")
    moved(fresh, "6.0")
    assert events(server, app, fresh) == [("new_group", "open", "report", "6.0")]
