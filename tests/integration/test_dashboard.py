"""The web dashboard (SPEC §7, GET /) in headless Chromium, against the
real server and PostgreSQL: what a user reads at each step must be what
llvm-symbolizer says of the stacks and what the API counted, and what they
change (the whitelist) must reach the database. tests/browser/dashboard.mjs
does the clicking and reports what it saw."""

import json
import subprocess
import uuid as uuidlib
from pathlib import Path

import pytest

from conftest import create_app, fixture_of
from ingest_util import (LOAD, Image, allow_everyone, expected_frames, fresh_id, identities,
                         native, post)

BROWSER_DIR = Path(__file__).resolve().parents[1] / "browser"
HOSTILE_USER = '<img src=x onerror="alert(1)">'


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def run_dashboard(scenario, tmp_path):
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    p = subprocess.run(["node", str(BROWSER_DIR / "dashboard.mjs"), str(path)],
                       cwd=BROWSER_DIR, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def test_dashboard_from_groups_to_stack(server, db, image, tmp_path):
    app = create_app(db)
    assert server.upload(app, image.dwarf).status in (200, 201)
    allow_everyone(server, app)
    f = image.by_function
    deep = [image.inlined[0], f[1], f[2], f[3], f[4]]
    other = [f[5], f[1]]
    ids = []
    for user in ["ana", "ben", "ana", HOSTILE_USER]:
        r = post(server, app, "/api/v1/ingest", native(fresh_id(), image, deep, user=user))
        assert r.status == 202, r
        ids.append(r.json["accepted"][0]["id"])
    assert post(server, app, "/api/v1/ingest",
                native(fresh_id(), image, other, user="cy")).status == 202
    # A report whose second image has no dSYM here: it waits, listed missing.
    absent = str(uuidlib.uuid4()).upper()
    waiting = native(fresh_id(), image, [f[5]], user="cy")
    waiting["images"].append({"name": "Absent.dylib", "uuid": absent, "arch": "arm64",
                              "load_address": hex(LOAD + 0x10000000), "size": 0x100000})
    waiting["threads"][0]["frames"].append(hex(LOAD + 0x10000000 + 0x2000))
    assert post(server, app, "/api/v1/ingest", waiting).status == 202
    token = app["admin_token"]
    assert server.request("PUT", f"/api/v1/apps/{app['app']}/whitelist/vip-0",
                          body=b'{"note": "from the API"}', token=token).status in (200, 201)

    # What to find, from llvm-symbolizer (never from the server's answers),
    # and the keys the API gives those groups.
    chains = expected_frames(image, deep)
    want = identities(image.name, chains)
    groups = server.request("GET", f"/api/v1/apps/{app['app']}/groups",
                            token=token).json["groups"]
    (group,) = [g for g in groups if g["frames"] == want[:2]]
    detail = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{group['key']}",
                            token=token).json
    (sub,) = [g for g in detail["subgroups"] if g["frames"] == want[:4]]
    missing = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms/missing",
                             token=token).json
    (absent_entry,) = [m for m in missing["missing"] if m["uuid"].upper() == absent]

    seen = run_dashboard({"url": f"http://127.0.0.1:{server.port}", "app": app["app"],
                          "token": token, "key1": group["key"], "key2": sub["key"],
                          "report_id": str(ids[0]), "missing_uuid": absent_entry["uuid"],
                          "whitelist_add": "vip-1", "whitelist_remove": "vip-0",
                          "other_version": "9.9.9", "sample_rate": 0.25}, tmp_path)

    assert not seen["page_errors"] and not seen["dialogs"], seen
    # No request failed until the wrong token's, which must fail as 401.
    failed = seen["failed_requests"]
    assert seen["failed_before_bad_token"] == 0, failed
    assert seen["console_errors_before_bad_token"] == 0, seen["console_errors"]
    assert failed and {r["status"] for r in failed} == {401}, failed
    # The group's row names its innermost two frames and counts as the API
    # does: 4 reports from 3 users.
    (row,) = [g for g in seen["groups"] if g["key1"] == group["key"]]
    for identity in want[:2]:
        assert identity in row["text"]
    assert group["reports"] == 4 and group["users"] == 3
    cells = [c.strip() for c in row["text"].split("\t")]
    assert cells[1:3] == ["4", "3"], row
    assert len(seen["groups"]) == len(groups)
    # No report has app version 9.9.9: the filtered list is empty.
    assert seen["filtered"]["rows"] == 0
    # Drill-down: the level-2 group names its innermost four frames.
    (subrow,) = [g for g in seen["group"]["subgroups"] if g["key2"] == sub["key"]]
    for identity in want[:4]:
        assert identity in subrow["text"]
    # Its reports, the hostile user id shown as text, not markup.
    assert {r["id"] for r in seen["reports"]} == {str(i) for i in ids}
    assert any(HOSTILE_USER in r["text"] for r in seen["reports"])
    # The stack: every function of every inline chain, innermost first,
    # with its file and line, as llvm-symbolizer gives them.
    assert seen["report"]["hash"] == f"#/reports/{ids[0]}"
    text = seen["report"]["text"]
    at = 0
    for chain in chains:
        for function, file, line in chain:
            where = text.find(function, at)
            assert where >= 0, (function, text)
            at = where + len(function)
            assert f"{Path(file).name}:{line}" in text, (file, line)
    assert len(seen["report"]["representative_frames"]) == len(deep)
    # The downloaded trace is the API's, byte for byte in meaning.
    trace = server.request("GET", f"/api/v1/reports/{ids[0]}/trace", token=token).json
    assert seen["trace"]["json"] == trace and trace["traceEvents"]
    assert seen["trace"]["name"].endswith(".json")
    assert seen["missing"][0]["uuid"] == absent_entry["uuid"]
    assert "Absent.dylib" in seen["missing"][0]["text"]
    # The whitelist changes reached the database.
    assert seen["whitelist"] == ["vip-1"]
    listed = server.request("GET", f"/api/v1/apps/{app['app']}/whitelist",
                            token=token).json["whitelist"]
    assert [(w["user_id"], w["note"]) for w in listed] == [("vip-1", "added from the dashboard")]
    # The config change reached the database, and only the field changed.
    config = server.request("GET", f"/api/v1/apps/{app['app']}/config", token=token).json
    assert config["sample_rate"] == 0.25 and config["daily_quota"] == 100000, config
    assert "sample rate" in seen["config"]["status"]
    assert seen["reload"]["frames"] == len(deep)
    assert seen["bad_token"]["signin_visible"] and seen["bad_token"]["error"].strip()
