"""Credentials of one app never reach another app's data (issue 3, scope
point 3)."""
from conftest import create_app, fixture_of, fixture_path


def test_keys_of_one_app_never_reach_another(make_server, db, manifest):
    server = make_server()
    a, b = create_app(db), create_app(db)
    # Different images, so no UUID is shared between the two apps.
    assert server.upload(a, fixture_path(fixture_of(manifest, "dwarf",
                                                    role="app"))).status == 201
    assert server.upload(b, fixture_path(fixture_of(manifest, "zip"))) \
        .status == 201
    a_list, b_list = server.list_dsyms(a), server.list_dsyms(b)
    b_uuid = b_list[0]["uuid"]
    files = server.stored_files()

    base_b = f"/api/v1/apps/{b['app']}/dsyms"
    for token in (a["upload_token"], a["admin_token"], a["ingest_key"]):
        assert server.request("GET", base_b, token=token).status == 403
        assert server.request("POST", base_b, token=token,
                              body=fixture_path(fixture_of(manifest, "dwarf"))
                              ).status == 403
        assert server.request("DELETE", f"{base_b}/{b_uuid}",
                              token=token).status == 403
    # Through its own URL, A sees none of B's files.
    assert server.request("DELETE", f"/api/v1/apps/{a['app']}/dsyms/"
                                    f"{b_uuid}",
                          token=a["admin_token"]).status == 404
    assert server.list_dsyms(b) == b_list
    assert {d["uuid"] for d in server.list_dsyms(a)} == \
        {d["uuid"] for d in a_list}
    assert server.stored_files() == files
