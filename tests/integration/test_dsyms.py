"""dSYM upload, listing and deletion (issue 3, first acceptance point):
every fixture kind uploads, the reply lists exactly the slices
llvm-dwarfdump reports, GET lists them, DELETE removes rows and files."""
import pytest

from conftest import (create_app, dwarfdump_uuids, fixture_of, fixture_path,
                      slices_of)

KINDS = [
    ("dwarf", "thin dSYM DWARF file"),
    ("fat-dwarf", "fat dSYM DWARF file"),
    ("symtab", "plain dylib"),
    ("fat-symtab", "fat plain dylib"),
    ("zip", "zip of two .dSYM bundles"),
]


@pytest.mark.parametrize("kind,what", KINDS)
def test_upload_list_delete(make_server, db, manifest, kind, what):
    server = make_server()  # its own data dir: every file in it is ours
    app = create_app(db)
    entry = fixture_of(manifest, kind)
    path = fixture_path(entry)
    expected = dwarfdump_uuids(path)
    assert expected, f"llvm-dwarfdump found no UUID in {path}"
    assert expected == {(s["uuid"], s["arch"]) for s in entry["slices"]}

    r = server.upload(app, path, name=entry["image"])
    assert r.status == 201, r
    assert slices_of(r) == expected
    assert len(r.json["files"]) == len(expected)
    for f in r.json["files"]:
        assert f["has_dwarf"] == (kind in ("dwarf", "fat-dwarf", "zip"))
        assert f["functions"] > 0
        assert f["name"] == entry["image"]
        assert f["status"] == "created"

    listed = server.list_dsyms(app)
    assert {(d["uuid"], d["arch"]) for d in listed} == expected
    # The admin token reads too.
    assert {(d["uuid"], d["arch"]) for d in
            server.list_dsyms(app, token=app["admin_token"])} == expected
    files = server.stored_files()
    # One symcache and one kept slice per slice, nothing else.
    assert len([p for p in files if p.startswith("symcaches/")]) == \
        len(expected)
    assert len([p for p in files if p.startswith("debug/")]) == len(expected)
    for uuid, arch in expected:
        assert any(f"/{uuid}-{arch}-" in p for p in files)

    for u in sorted({u for u, _ in expected}):
        d = server.request("DELETE", f"/api/v1/apps/{app['app']}/dsyms/{u}",
                           token=app["upload_token"])
        assert d.status == 204, d
        again = server.request("DELETE",
                               f"/api/v1/apps/{app['app']}/dsyms/{u}",
                               token=app["admin_token"])
        assert again.status == 404 and again.error_code == "not_found"
    assert server.list_dsyms(app) == []
    assert server.stored_files() == {}


def test_reupload_is_idempotent(make_server, db, manifest):
    server = make_server()
    app = create_app(db)
    path = fixture_path(fixture_of(manifest, "dwarf"))
    first = server.upload(app, path)
    assert first.status == 201
    files = server.stored_files()
    second = server.upload(app, path)
    assert second.status == 200, second
    assert [f["status"] for f in second.json["files"]] == ["unchanged"]
    assert len(server.list_dsyms(app)) == 1
    assert server.stored_files() == files


def test_dwarf_replaces_symbol_table_never_the_reverse(make_server, db,
                                                       manifest):
    server = make_server()
    app = create_app(db)
    binary = fixture_of(manifest, "symtab")
    dsym = fixture_of(manifest, "dwarf", variant=binary["variant"])
    assert dwarfdump_uuids(fixture_path(binary)) == \
        dwarfdump_uuids(fixture_path(dsym))

    r = server.upload(app, fixture_path(binary))
    assert r.status == 201 and not r.json["files"][0]["has_dwarf"]
    symtab_files = server.stored_files()
    assert len(symtab_files) == 2

    r = server.upload(app, fixture_path(dsym))
    assert r.status == 201, r
    assert r.json["files"][0]["has_dwarf"]
    assert r.json["files"][0]["status"] == "replaced"
    listed = server.list_dsyms(app)
    assert len(listed) == 1 and listed[0]["has_dwarf"]
    # The symbol-table-only files went with their row.
    dwarf_files = server.stored_files()
    assert len(dwarf_files) == 2 and not set(dwarf_files) & set(symtab_files)

    r = server.upload(app, fixture_path(binary))
    assert r.status == 200, r
    assert r.json["files"][0]["has_dwarf"]
    assert r.json["files"][0]["status"] == "kept_existing"
    assert server.list_dsyms(app)[0]["has_dwarf"]
    assert server.stored_files() == dwarf_files


def test_pagination(server, db, manifest):
    app = create_app(db)
    for kind in ("dwarf", "zip"):
        assert server.upload(app, fixture_path(fixture_of(manifest, kind))) \
            .status == 201
    everything = server.list_dsyms(app)  # pages of 2
    r = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms?limit=1000",
                       token=app["upload_token"])
    assert r.status == 200 and r.json["next_cursor"] is None
    assert r.json["dsyms"] == everything
    for bad in ("limit=0", "limit=1001", "limit=x"):
        r = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms?{bad}",
                           token=app["upload_token"])
        assert r.status == 400 and r.error_code == "bad_query", r
    r = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms?cursor=abc",
                       token=app["upload_token"])
    assert r.status == 400 and r.error_code == "bad_cursor"


def test_same_slice_for_two_apps_is_kept_apart(make_server, db, manifest):
    server = make_server()
    one, two = create_app(db), create_app(db)
    path = fixture_path(fixture_of(manifest, "dwarf"))
    assert server.upload(one, path).status == 201
    assert server.upload(two, path).status == 201
    uuid = server.list_dsyms(one)[0]["uuid"]
    before = server.stored_files()
    r = server.request("DELETE", f"/api/v1/apps/{one['app']}/dsyms/{uuid}",
                       token=one["upload_token"])
    assert r.status == 204
    assert len(server.list_dsyms(two)) == 1
    after = server.stored_files()
    removed = set(before) - set(after)
    assert len(removed) == 2
    assert all(after[p] == before[p] for p in after)


def test_uuid_without_dashes_and_lowercase(server, db, manifest):
    app = create_app(db)
    assert server.upload(app, fixture_path(fixture_of(manifest, "dwarf"))) \
        .status == 201
    uuid = server.list_dsyms(app)[0]["uuid"]
    r = server.request("DELETE", f"/api/v1/apps/{app['app']}/dsyms/"
                                 f"{uuid.replace('-', '').lower()}",
                       token=app["admin_token"])
    assert r.status == 204
    r = server.request("DELETE", f"/api/v1/apps/{app['app']}/dsyms/not-a-uuid",
                       token=app["admin_token"])
    assert r.status == 400 and r.error_code == "bad_request"
