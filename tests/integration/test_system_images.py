"""Issue 22 §5: system images. A report whose only unsymbolized frames are
in system images (by path: docs/INGEST.md §System images) is not waiting
for symbols; dsyms/missing ranks the app's own images, with the system's
apart (?images=system) and a cursor; system symbols imported once with
`stallscope system-symbols import DIR` serve every app's reports, and the
reports waiting for them are reprocessed with exact group counters.

Expected answers come from what the test posted and from llvm-symbolizer
(ingest_util.symbolize), never from the server."""

import json
import os
import shutil
import uuid as uuidlib

import pytest

from conftest import FIXTURES, create_app, fixture_of, migrate, psql, stallscope
from ingest_util import (LOAD, Image, allow_everyone, expected_frames, fresh_id, frames_of,
                         post, report, symbolize, text_layout)

UIKIT_PATH = "/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore"
SYS_LOAD = 0x180000000
APP_PATH = "/private/var/containers/Bundle/Application/5D1C/Demo.app/Frameworks/"


class SystemImage:
    """The UIKitCore stand-in: its symbol-table-only binary (what Xcode's
    DeviceSupport holds) and llvm-symbolizer's answers on it."""

    def __init__(self, entry):
        self.binary = FIXTURES / entry["path"]
        self.dwarf = FIXTURES / entry["dwarf"]
        self.uuid = entry["slices"][0]["uuid"]
        self.arch = entry["slices"][0]["arch"]
        self.base, text, size = text_layout(self.binary)
        addrs = list(range(text, text + size, 4))
        answers = symbolize(self.binary, addrs)
        self.by_function = {}
        for a, s in zip(addrs, answers):
            if s:
                self.by_function.setdefault(s[-1][0], []).append(a)

    def runtime(self, file_addr, frame_index):
        return SYS_LOAD + file_addr - self.base + (1 if frame_index else 0)


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


@pytest.fixture(scope="module")
def system(manifest):
    return SystemImage(fixture_of(manifest, "symtab", role="sys"))


def image_entry(name, uuid, arch, load, size):
    return {"name": name, "uuid": uuid, "arch": arch, "load_address": hex(load), "size": size}


def body(rid, user, images, frames):
    return {"report_id": rid, "user_id": user, "kind": "stall", "duration_ms": 2500,
            "app_version": "8.0.1", "os": "iOS", "os_version": "17.2", "device": "iPhone14,2",
            "images": images,
            "threads": [{"name": "main", "main": True, "frames": [hex(f) for f in frames]}]}


def accepted_id(r):
    assert r.status == 202, r
    return r.json["accepted"][0]["id"]


def missing_list(server, app, query="", limit=None):
    """Every row of dsyms/missing?QUERY, following next_cursor pages of
    LIMIT."""
    rows, cursor = [], None
    while True:
        params = [p for p in (query, f"limit={limit}" if limit else "",
                              f"cursor={cursor}" if cursor else "") if p]
        path = f"/api/v1/apps/{app['app']}/dsyms/missing" + \
            ("?" + "&".join(params) if params else "")
        r = server.request("GET", path, token=app["upload_token"])
        assert r.status == 200, r
        rows += r.json["missing"]
        cursor = r.json["next_cursor"]
        if cursor is None or limit is None:
            return rows


def groups(server, app, level):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?level={level}&limit=500",
                       token=app["admin_token"])
    assert r.status == 200, r
    return r.json["groups"]


def test_only_system_frames_unsymbolized_is_not_waiting(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    kernel = str(uuidlib.uuid4()).upper()
    images = [image_entry(image.name, image.uuid, image.arch, LOAD, image.base + 0x100000),
              image_entry("/usr/lib/system/libsystem_kernel.dylib", kernel, "arm64",
                          0x1a0000000, 0x40000)]
    stack = [image.by_function[1], image.by_function[2]]
    frames = [0x1a0001234, 0x1a0002000] + [image.runtime(a, i + 2) for i, a in enumerate(stack)]
    rid = accepted_id(post(server, app, "/api/v1/ingest", body(fresh_id(), "u1", images, frames)))
    got = report(server, app, rid)
    assert got["pending"] is False
    assert [(i["name"], i["system"]) for i in got["images"]] == \
        [(image.name, False), ("/usr/lib/system/libsystem_kernel.dylib", True)]
    assert got["images"][1]["status"] == "missing"
    shown = got["threads"][0]["frames"]
    assert [f["status"] for f in shown] == ["missing_symbols"] * 2 + ["symbolicated"] * 2
    assert frames_of(shown[2:]) == expected_frames(image, stack)
    assert missing_list(server, app) == []
    (row,) = missing_list(server, app, "images=system")
    assert (row["uuid"], row["system"], row["reports"], row["name"], row["path"]) == \
        (kernel, True, 1, "libsystem_kernel.dylib", "/usr/lib/system/libsystem_kernel.dylib")

    # The same report with an app framework in place of the kernel waits.
    own = str(uuidlib.uuid4()).upper()
    images[1] = image_entry(APP_PATH + "Own.framework/Own", own, "arm64", 0x1a0000000, 0x40000)
    rid2 = accepted_id(post(server, app, "/api/v1/ingest",
                            body(fresh_id(), "u2", images, frames)))
    got2 = report(server, app, rid2)
    assert got2["pending"] is True and got2["images"][1]["system"] is False
    assert [m["uuid"] for m in missing_list(server, app)] == [own]


def test_metrickit_bare_names(server, db, image):
    """MetricKit names binaries without a path: Apple's names are the
    system's, any other name the app's (docs/INGEST.md)."""
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    uikit, kernel, sentry = (str(uuidlib.uuid4()).upper() for _ in range(3))
    # (binaryName, UUID, offset) innermost first; the app's frame last.
    frames = [("libsystem_kernel.dylib", kernel, 0x1234), ("UIKitCore", uikit, 0x5678),
              (image.name, image.uuid, image.offset(image.by_function[1], 2))]
    node = None
    for i in reversed(range(len(frames))):
        name, uuid, offset = frames[i]
        frame = {"binaryUUID": uuid, "binaryName": name, "sampleCount": 1,
                 "offsetIntoBinaryTextSegment": offset,
                 "address": 0x1a0000000 * (i + 1) + offset}
        if node:
            frame["subFrames"] = [node]
        node = frame
    payload = {"timeStampBegin": "2026-11-20 10:00:00 +0000",
               "timeStampEnd": "2026-11-20 10:05:00 +0000",
               "hangDiagnostics": [{
                   "callStackTree": {"callStackPerThread": True, "callStacks": [
                       {"threadAttributed": True, "callStackRootFrames": [node]}]},
                   "diagnosticMetaData": {"appVersion": "8.0.1", "osVersion": "iPhone OS 17.2",
                                          "deviceType": "iPhone14,2",
                                          "hangDuration": "3 sec"}}]}
    rid = accepted_id(post(server, app, "/api/v1/ingest/metrickit", payload, user="mk"))
    got = report(server, app, rid)
    assert {i["name"]: i["system"] for i in got["images"]} == \
        {"libsystem_kernel.dylib": True, "UIKitCore": True, image.name: False}
    assert got["pending"] is False
    assert {m["uuid"] for m in missing_list(server, app, "images=system")} == {uikit, kernel}
    # The same stack with a framework of the app's own: it waits.
    node["binaryName"] = "Sentry"
    node["binaryUUID"] = sentry
    payload["timeStampBegin"] = "2026-11-20 11:00:00 +0000"
    rid2 = accepted_id(post(server, app, "/api/v1/ingest/metrickit", payload, user="mk"))
    assert report(server, app, rid2)["pending"] is True
    assert [m["uuid"] for m in missing_list(server, app)] == [sentry]


def test_dsyms_missing_ranks_app_images_apart_with_a_cursor(server, db):
    app = create_app(db)
    allow_everyone(server, app)
    # Image i: (name, uuid, reports naming it); system images in more
    # reports than any app image, as in real data sets.
    app_imgs = [(APP_PATH + f"F{i}.framework/F{i}", str(uuidlib.uuid4()).upper(), n)
                for i, n in enumerate([3, 1, 2, 2, 1])]
    sys_imgs = [("/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation",
                 str(uuidlib.uuid4()).upper(), 7),
                ("/usr/lib/system/libsystem_kernel.dylib", str(uuidlib.uuid4()).upper(), 7),
                ("/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore",
                 str(uuidlib.uuid4()).upper(), 6)]
    all_imgs = app_imgs + sys_imgs
    loads = {u: 0x190000000 + k * 0x1000000 for k, (_, u, _) in enumerate(all_imgs)}
    most = max(n for _, _, n in all_imgs)
    for r in range(most):
        named = [(nm, u) for nm, u, n in all_imgs if r < n]
        images = [image_entry(nm, u, "arm64", loads[u], 0x100000) for nm, u in named]
        frames = [loads[u] + 0x100 + r for _, u in named]
        accepted_id(post(server, app, "/api/v1/ingest",
                         body(fresh_id(), f"u{r}", images, frames)))

    def ranked(imgs):
        return [(u, n) for _, u, n in sorted(imgs, key=lambda x: (-x[2], x[1]))]

    everything = missing_list(server, app)
    assert [(m["uuid"], m["reports"]) for m in everything] == ranked(app_imgs)
    assert all(m["system"] is False and m["arch"] == "arm64" and m["last_seen"]
               for m in everything)
    assert missing_list(server, app, "images=app") == everything
    for limit in (1, 2, 4):
        assert missing_list(server, app, "images=app", limit=limit) == everything
    sys_rows = missing_list(server, app, "images=system", limit=2)
    assert [(m["uuid"], m["reports"], m["system"]) for m in sys_rows] == \
        [(u, n, True) for u, n in ranked(sys_imgs)]
    # Named by basename, the reports' path beside it (issue 42).
    assert {(m["name"], m["path"]) for m in sys_rows} == \
        {(nm.rsplit("/", 1)[-1], nm) for nm, _, _ in sys_imgs}
    first = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms/missing?limit=2",
                           token=app["admin_token"])
    assert first.status == 200 and len(first.json["missing"]) == 2
    want_cursor = f"{first.json['missing'][1]['reports']}." + \
        first.json["missing"][1]["uuid"].replace("-", "").lower()
    assert first.json["next_cursor"] == want_cursor
    for bad in ("images=all", "cursor=12", "cursor=abc.def", "cursor=1.123", "limit=0"):
        r = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms/missing?{bad}",
                           token=app["upload_token"])
        assert r.status == 400, (bad, r)


def sys_stacks(system, image):
    """Stacks of (image, file address) innermost first: two that differ
    only by the offset inside UIEventFetcherDrain (apart while unsymbolized,
    one group once symbolized), one through other functions."""
    drain = system.by_function["UIEventFetcherDrain"]
    handle = system.by_function["UIApplicationHandleEventQueue"][0]
    perform = system.by_function["UIRunLoopSourcePerform"][0]
    spec = system.by_function["UIRunLoopRunSpecific"][0]
    f = image.by_function
    return [[(system, drain[1]), (system, handle), (image, f[1])],
            [(system, drain[2]), (system, handle), (image, f[1])],
            [(system, perform), (system, spec), (image, f[3])]]


def sys_report(rid, user, system, image, stack):
    images = [image_entry(UIKIT_PATH, system.uuid, system.arch, SYS_LOAD, 0x10000),
              image_entry(APP_PATH + image.name, image.uuid, image.arch, LOAD,
                          image.base + 0x100000)]
    frames = [img.runtime(a, i) for i, (img, a) in enumerate(stack)]
    return body(rid, user, images, frames)


def expected_chains_at(stack):
    """llvm-symbolizer's chain per frame: the system image from its symbol
    table, the app's from its dSYM (the report's frames after the first
    are return addresses, one past the file address, which the server
    looks up at address - 1)."""
    return [symbolize(img.binary if isinstance(img, SystemImage) else img.dwarf, [a])[0]
            for img, a in stack]


def level1_key(stack):
    ids = []
    for (img, _), chain in zip(stack, expected_chains_at(stack)):
        base = "UIKitCore" if isinstance(img, SystemImage) else img.name
        ids += [f"{base}!{fn}" for (fn, _, _) in chain]
    return tuple(ids[:2])


def test_system_symbols_serve_two_apps_and_reprocess(cluster, make_server, image, system,
                                                      tmp_path, manifest):
    # A database of its own, no other server on it (every server moves the
    # reports a file's arrival unblocks), and a periodic look an hour away:
    # the import's own reprocessing moves every report, so its count is
    # exact.
    db = cluster.create_db("it_system_symbols_import")
    migrate(db)
    server = make_server(env={"STALLSCOPE_REPROCESS_INTERVAL": "3600"}, db_url=db)
    stacks = sys_stacks(system, image)
    apps, ids = [], {}
    for k in range(2):
        app = create_app(db)
        allow_everyone(server, app)
        assert server.upload(app, image.dwarf).status in (200, 201)
        apps.append(app)
        plan = stacks * 2 if k == 0 else stacks + [stacks[0]]
        ids[app["app"]] = []
        for i, stack in enumerate(plan):
            rid = accepted_id(post(server, app, "/api/v1/ingest",
                                   sys_report(fresh_id(), f"u{i % 3}", system, image, stack)))
            ids[app["app"]].append((rid, stack, f"u{i % 3}"))

    for app in apps:
        for rid, stack, _ in ids[app["app"]]:
            got = report(server, app, rid)
            assert got["pending"] is False
            assert [f["status"] for f in got["threads"][0]["frames"]] == \
                ["missing_symbols", "missing_symbols", "symbolicated"]
        assert missing_list(server, app) == []
        (row,) = missing_list(server, app, "images=system")
        assert (row["uuid"], row["reports"]) == (system.uuid, len(ids[app["app"]]))
        # Unsymbolized, the two UIEventFetcherDrain stacks group apart.
        assert len(groups(server, app, 1)) == 3

    # DIR as an operator extracts it, plus what must not be imported.
    root = tmp_path / "Symbols"
    fw = root / "System/Library/PrivateFrameworks/UIKitCore.framework"
    fw.mkdir(parents=True)
    shutil.copy(system.binary, fw / "UIKitCore")
    (root / "System/Library/PrivateFrameworks/UIKitCore.framework/Info.plist").write_text(
        "<plist/>")
    (root / "usr/lib").mkdir(parents=True)
    (root / "usr/lib/truncated.dylib").write_bytes(
        system.binary.read_bytes()[:4] + b"\0" * 60)
    outside = Image(fixture_of(manifest, "dwarf", variant="x86_64-O2"))
    os.symlink(outside.dwarf, root / "usr/lib/escape.dylib")
    os.symlink(outside.dwarf.parent, root / "usr/lib/escape-dir")
    env = {"STALLSCOPE_DATA_DIR": str(server.data_dir)}
    total = sum(len(v) for v in ids.values())
    # The operator imports with the server down: an upload wakes the
    # server's own pass, which could otherwise move reports first and make
    # the import's count depend on timing.
    assert server.stop() == 0
    out = json.loads(stallscope("system-symbols", "import", str(root), db_url=db,
                                extra_env=env).stdout)
    assert out["files"] == 2 and out["created"] == 1 and out["failed"] == 1
    assert out["reprocessed"] == total
    server.start()
    listed = [json.loads(line) for line in
              stallscope("system-symbols", "list", db_url=db, extra_env=env).stdout.splitlines()]
    assert (system.uuid, system.arch, False) in \
        {(r["uuid"], r["arch"], r["has_dwarf"]) for r in listed}
    assert outside.uuid not in {r["uuid"] for r in listed}

    for app in apps:
        for rid, stack, _ in ids[app["app"]]:
            got = report(server, app, rid)
            assert got["pending"] is False
            shown = got["threads"][0]["frames"]
            assert [f["status"] for f in shown] == ["symbolicated"] * 3
            assert frames_of(shown) == expected_chains_at(stack)
        assert missing_list(server, app, "images=system") == []
        # Counters: every report once per level; the two drain stacks now
        # one group; users per group exact.
        want, users = {}, {}
        for _, stack, user in ids[app["app"]]:
            key = level1_key(stack)
            want[key] = want.get(key, 0) + 1
            users.setdefault(key, set()).add(user)
        got1 = {tuple(g["frames"]): g for g in groups(server, app, 1)}
        assert {k: g["reports"] for k, g in got1.items()} == want
        assert {k: g["users"] for k, g in got1.items()} == {k: len(u) for k, u in users.items()}
        assert sum(g["reports"] for g in groups(server, app, 2)) == len(ids[app["app"]])

    # Files above the upload bound are refused like uploads: UIKitCore
    # now, the truncated one (64 bytes) still for what it holds.
    assert system.binary.stat().st_size > 1024
    small = json.loads(stallscope("system-symbols", "import", str(root), db_url=db,
                                  extra_env=dict(env, STALLSCOPE_MAX_UPLOAD="1024")).stdout)
    assert (small["files"], small["failed"], small["created"]) == (1, 2, 0)

    # Idempotent: nothing new, nothing to move.
    again = json.loads(stallscope("system-symbols", "import", str(root), db_url=db,
                                  extra_env=env).stdout)
    assert (again["created"], again["unchanged"], again["reprocessed"]) == (0, 1, 0)
    assert psql(db, f"SELECT count(*) FROM system_symbols WHERE uuid = '{system.uuid}'") == "1"

    # A third app that uploads the framework's dSYM itself gets its DWARF
    # answers (file and line): its own upload wins over the system symbols.
    third = create_app(db)
    allow_everyone(server, third)
    assert server.upload(third, system.dwarf).status in (200, 201)
    assert server.upload(third, image.dwarf).status in (200, 201)
    rid = accepted_id(post(server, third, "/api/v1/ingest",
                           sys_report(fresh_id(), "u1", system, image, stacks[2])))
    shown = report(server, third, rid)["threads"][0]["frames"]
    want = [symbolize(system.dwarf, [a])[0] if isinstance(img, SystemImage)
            else symbolize(img.dwarf, [a])[0] for img, a in stacks[2]]
    assert frames_of(shown) == want
    assert any(line for chain in want[:2] for (_, _, line) in chain)



    # A system symbol of an older symcache format has no kept copy to be
    # rebuilt from (issue 40): it is not served — its frames are missing
    # symbols again — and importing the folder again rebuilds it, moving
    # the reports that waited.
    psql(db, f"UPDATE system_symbols SET symcache_version = 1 WHERE uuid = '{system.uuid}'")
    assert server.stop() == 0
    server.start()  # nothing remembered of the row
    app = apps[0]
    rid = accepted_id(post(server, app, "/api/v1/ingest",
                           sys_report(fresh_id(), "u7", system, image, stacks[0])))
    assert [f["status"] for f in report(server, app, rid)["threads"][0]["frames"]] == \
        ["missing_symbols", "missing_symbols", "symbolicated"]
    assert server.stop() == 0
    rebuilt = json.loads(stallscope("system-symbols", "import", str(root), db_url=db,
                                    extra_env=env).stdout)
    assert (rebuilt["created"], rebuilt["replaced"], rebuilt["reprocessed"]) == (0, 1, 1)
    assert psql(db, "SELECT symcache_version FROM system_symbols"
                    f" WHERE uuid = '{system.uuid}'") == \
        str(json.loads(stallscope("symcache", "--info", str(server.data_dir / psql(
            db, f"SELECT symcache_path FROM system_symbols WHERE uuid = '{system.uuid}'")))
            .stdout)["version"])
    server.start()
    assert frames_of(report(server, app, rid)["threads"][0]["frames"]) == \
        expected_chains_at(stacks[0])
