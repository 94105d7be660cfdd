"""SPEC §10.2, issue 42 item 3: sampling check-ins may carry os_version and
device; a group's rate under an OS version or device filter divides its
affected users by the sampled users of that OS version or device, and
where no check-in said the dimension the reply says
"rate_basis":"all_devices" and divides by everyone (schema/045).

Every user here is sampled (rate 1) except the whitelisted ones, who are
in no rate; the expected rates are computed from the check-ins and
reports the test makes."""

import json
import urllib.parse

import pytest

from conftest import create_app, fixture_of
from ingest_util import Image, allow_everyone, fresh_id, native, post

NOON = 1795176000  # 2026-11-20T12:00:00Z


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def check_in(server, app, user, **dims):
    q = dict({"user_id": user, "app_version": "3.0"}, **dims)
    r = server.request("GET", "/api/v1/sampling?" + urllib.parse.urlencode(q),
                       key=app["ingest_key"])
    assert r.status == 200, r
    return r.json


def groups(server, app, **q):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?"
                       + urllib.parse.urlencode(dict(q, level=1)), token=app["admin_token"])
    assert r.status == 200, r
    return r.json["groups"]


def stall(server, app, image, user, os_version, device):
    r = post(server, app, "/api/v1/ingest",
             native(fresh_id(), image, [image.plain[0], image.plain[1]], user=user,
                    app_version="3.0", os_version=os_version, device=device))
    assert r.status == 202, r


def test_rates_under_os_and_device_filters_divide_by_their_users(db, make_server, image):
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    allow_everyone(server, app)
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/whitelist/vip", body=b"{}",
                       token=app["admin_token"])
    assert r.status == 200, r
    # 30 users on iOS 17 (10 of them on an iPad), 10 on iOS 18, 5 old
    # clients that say neither, and a whitelisted iOS 17 user.
    fleet = {f"a{i}": ("17.2", "iPad13,1" if i < 10 else "iPhone14,2") for i in range(30)}
    fleet.update({f"b{i}": ("18.0", "iPhone15,3") for i in range(10)})
    for user, (os_version, device) in fleet.items():
        assert check_in(server, app, user, os_version=os_version, device=device)["upload"]
        # A later check-in saying otherwise does not move the user.
        check_in(server, app, user, os_version="9.9", device="Other1,1")
    for i in range(5):
        check_in(server, app, f"old{i}")
    check_in(server, app, "vip", os_version="17.2", device="iPad13,1")
    # Stalls: 4 iPad users, 3 other iOS 17 users, 2 iOS 18 users, the
    # whitelisted user (in no rate), 1 old client.
    stalled = ["a0", "a1", "a2", "a3", "a10", "a11", "a12", "b0", "b1"]
    for user in stalled:
        stall(server, app, image, user, *fleet[user])
    stall(server, app, image, "vip", "17.2", "iPad13,1")
    stall(server, app, image, "old0", "17.2", "iPad13,1")
    # A user who never checked in: active through the report, on no device.
    stall(server, app, image, "silent", "17.2", "iPad13,1")
    # A user whose report is counted (a read folds it) before the check-in
    # that says their device: the check-in places them.
    stall(server, app, image, "late", "17.2", "iPad13,1")
    assert groups(server, app)
    check_in(server, app, "late", os_version="17.2", device="iPad13,1")

    everyone = 30 + 10 + 5 + 2
    (g,) = groups(server, app)
    assert g["affected"] == len(stalled) + 3 and g["rate_basis"] == "all_devices"
    assert g["rate"] == pytest.approx((len(stalled) + 3) / everyone)
    cases = [({"os_version": "17.2"}, 7 + 3, 31), ({"os_version": "18.0"}, 2, 10),
             ({"device": "iPad13,1"}, 4 + 3, 11), ({"device": "iPhone14,2"}, 3, 20),
             ({"os_version": "17.2", "device": "iPad13,1"}, 4 + 3, 11),
             ({"os_version": "17.2", "kind": "stall"}, 7 + 3, 31)]
    for f, affected, sampled in cases:
        (g,) = groups(server, app, **f)
        # The old client's and the silent user's reports say iOS 17 and an
        # iPad: they count as affected there, and in no filter's
        # denominator (only check-ins say where a user is).
        assert (g["affected"], g["rate_basis"]) == (affected, "filtered"), f
        assert g["rate"] == pytest.approx(affected / sampled), f
    # The detail says the same as the list.
    detail = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{g['key']}?device=iPad13,1",
                            token=app["admin_token"]).json["group"]
    assert (detail["rate"], detail["rate_basis"]) == (pytest.approx(7 / 11), "filtered")


def test_rates_say_all_devices_when_no_check_in_said_the_dimension(db, make_server, image):
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    allow_everyone(server, app)
    for i in range(8):
        check_in(server, app, f"u{i}", os_version="17.2")
    stall(server, app, image, "u0", "17.2", "iPad13,1")
    stall(server, app, image, "u1", "17.2", "iPhone14,2")
    # Check-ins said the OS version: filtered.
    (g,) = groups(server, app, os_version="17.2")
    assert (g["rate"], g["rate_basis"]) == (pytest.approx(2 / 8), "filtered")
    # None said the device: everyone's users, and the reply says so.
    (g,) = groups(server, app, device="iPad13,1")
    assert (g["affected"], g["rate"], g["rate_basis"]) == (1, pytest.approx(1 / 8),
                                                           "all_devices")
    bad = server.request("GET", "/api/v1/sampling?user_id=x&app_version=1&device=",
                         key=app["ingest_key"])
    assert bad.status == 400 and "device" in bad.json["error"]["message"]


def test_backfilled_check_ins_say_os_version_and_device_or_are_refused(db, make_server, image):
    """The backfill's check-ins carry os_version and device as the device
    route does: counted under those filters when strings of 1 to 256
    bytes, else 400 naming the call and the member (never dropped)."""
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    allow_everyone(server, app)

    def backfill(calls):
        return server.request("POST", f"/api/v1/apps/{app['app']}/backfill?received_at="
                              "2026-11-20T09%3A00%3A00Z&format=check_ins",
                              body=json.dumps({"check_ins": calls}).encode(),
                              token=app["admin_token"])

    good = {"user_id": "u0", "app_version": "3.0", "os_version": "17.2", "device": "iPad13,1"}
    for member, value in (("os_version", ""), ("os_version", 17), ("device", None),
                          ("device", ["iPad13,1"]), ("device", "d" * 257)):
        r = backfill([good, dict(good, user_id="u1", **{member: value})])
        assert r.status == 400 and r.error_code == "bad_field", (member, value, r)
        assert r.json["error"]["message"].startswith(f"check_ins[1].{member}: "), r
    r = backfill([dict(good, user_id=f"u{i}", device="iPad13,1" if i < 2 else "iPhone14,2")
                  for i in range(4)] + [{"user_id": "old", "app_version": "3.0"}])
    assert r.status == 200, r
    stall(server, app, image, "u0", "17.2", "iPad13,1")
    (g,) = groups(server, app, os_version="17.2")
    assert (g["rate"], g["rate_basis"]) == (pytest.approx(1 / 4), "filtered")
    (g,) = groups(server, app, device="iPad13,1")
    assert (g["rate"], g["rate_basis"]) == (pytest.approx(1 / 2), "filtered")
