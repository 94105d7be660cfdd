"""Issue 26 §4, SPEC §10.5: a group's culprit, the innermost frame of the
representative stack in one of the app's own images. System frames
(libsystem_kernel, CoreFoundation) innermost are skipped, a stack with no
app frame has none, a late dSYM names it, and a group without one (as
every group stored before schema 022) gets one from its next report.

Expected culprits come from what the test posted and from llvm-symbolizer
(ingest_util.symbolize), never from the server."""

import uuid as uuidlib

import pytest

from conftest import create_app, fixture_of, psql
from ingest_util import (Image, allow_everyone, fresh_id, native, post, report, symbolize)
from test_reprocess import wait_for

KERNEL = ("/usr/lib/system/libsystem_kernel.dylib", 0x1a0000000)
CF = ("/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation", 0x1b0000000)
# An app framework nobody uploads symbols for.
PLUGIN = ("/private/var/containers/Bundle/Application/5D1C/Demo.app/Frameworks/"
          "Plugin.framework/Plugin", 0x1c0000000)
SYSTEM_WAIT = [(KERNEL, 0x1234), (CF, 0x88)]


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def stall(image, outer, app_stack=(), user="u-1"):
    """A native report of IMAGE whose main thread is OUTER ((image, load),
    offset) frames innermost, then APP_STACK's file addresses of IMAGE."""
    r = native(fresh_id(), image, [], user=user)
    for path, load in (KERNEL, CF, PLUGIN):
        r["images"].append({"name": path, "uuid": str(uuidlib.uuid4()).upper(),
                            "arch": "arm64", "load_address": hex(load), "size": 0x100000})
    frames = [hex(load + off) for (_, load), off in outer]
    frames += [hex(image.runtime(a, len(outer) + i)) for i, a in enumerate(app_stack)]
    r["threads"][0]["frames"] = frames
    return r


def symbolized_culprit(image, file_addr):
    """The culprit a symbolized app frame at FILE_ADDR makes: its innermost
    inline entry, as llvm-symbolizer names it."""
    function, file, line = symbolize(image.dwarf, [file_addr])[0][0]
    return {"frame": f"{image.name}!{function}", "function": function,
            "file": file or None, "line": line or None}


def unsymbolized_culprit(name, offset):
    return {"frame": f"{name.rsplit('/', 1)[-1]}+{hex(offset)}", "function": None,
            "file": None, "line": None}


def ingest(server, app, body):
    r = post(server, app, "/api/v1/ingest", body)
    assert r.status == 202, r
    return r.json["accepted"][0]["id"]


def groups(server, app, level):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?level={level}",
                       token=app["admin_token"])
    assert r.status == 200, r
    return r.json["groups"]


def only_group(server, app):
    """The app's one level-1 group as the list and the detail show it,
    and its subgroups."""
    (listed,) = groups(server, app, 1)
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{listed['key']}",
                       token=app["admin_token"])
    assert r.status == 200, r
    assert r.json["group"]["culprit"] == listed["culprit"]
    return listed, r.json["subgroups"]


def test_culprit_skips_system_frames_and_takes_the_innermost_inline_entry(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    app_stack = [image.inlined[0], image.by_function[1]]
    assert len(symbolize(image.dwarf, [image.inlined[0]])[0]) >= 2
    ingest(server, app, stall(image, SYSTEM_WAIT, app_stack))
    want = symbolized_culprit(image, image.inlined[0])
    group, subgroups = only_group(server, app)
    assert group["culprit"] == want
    assert [s["culprit"] for s in subgroups] == [want]
    assert [g["culprit"] for g in groups(server, app, 2)] == [want]


def test_culprit_is_null_without_an_app_frame(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    ingest(server, app, stall(image, SYSTEM_WAIT + [(KERNEL, 0x40)]))
    group, subgroups = only_group(server, app)
    assert group["culprit"] is None
    assert [s["culprit"] for s in subgroups] == [None]


def test_a_culprit_with_a_function_replaces_one_without_and_stays(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    # Same two innermost frames, so one level-1 group: first the
    # unsymbolized framework, then the symbolized app frame, then the
    # framework again.
    ingest(server, app, stall(image, SYSTEM_WAIT + [(PLUGIN, 0x500)]))
    group, _ = only_group(server, app)
    assert group["culprit"] == unsymbolized_culprit(PLUGIN[0], 0x500)
    ingest(server, app, stall(image, SYSTEM_WAIT, [image.plain[0]]))
    want = symbolized_culprit(image, image.plain[0])
    assert only_group(server, app)[0]["culprit"] == want
    ingest(server, app, stall(image, SYSTEM_WAIT + [(PLUGIN, 0x600)]))
    assert only_group(server, app)[0]["culprit"] == want


def test_late_dsym_names_the_culprit(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    app_stack = [image.plain[0], image.by_function[2]]
    rid = ingest(server, app, stall(image, SYSTEM_WAIT, app_stack))
    before = unsymbolized_culprit(image.name, image.offset(app_stack[0], len(SYSTEM_WAIT)))
    group, subgroups = only_group(server, app)
    assert group["culprit"] == before and [s["culprit"] for s in subgroups] == [before]
    key1 = group["key"]

    assert server.upload(app, image.dwarf).status in (200, 201)
    assert wait_for(lambda: not report(server, app, rid)["pending"]), "not reprocessed"
    want = symbolized_culprit(image, app_stack[0])
    # Level 1 keeps its key (the two system frames) and is named now; the
    # report's level-2 group is a new one, named from the start.
    group, subgroups = only_group(server, app)
    assert group["key"] == key1 and group["culprit"] == want
    assert [s["culprit"] for s in subgroups] == [want]


def test_group_without_culprit_gets_one_from_its_next_report(server, db, image):
    """Groups stored before schema 022 have none (no backfill): the next
    report fills it in."""
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    ingest(server, app, stall(image, SYSTEM_WAIT, [image.plain[1]]))
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    psql(db, f"UPDATE groups SET culprit = NULL WHERE app_id = {app_id}")
    assert only_group(server, app)[0]["culprit"] is None
    ingest(server, app, stall(image, SYSTEM_WAIT, [image.plain[1]], user="u-2"))
    group, subgroups = only_group(server, app)
    want = symbolized_culprit(image, image.plain[1])
    assert group["culprit"] == want and [s["culprit"] for s in subgroups] == [want]
