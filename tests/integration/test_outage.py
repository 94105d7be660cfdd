"""Database outage (issue 3, fourth acceptance point): with PostgreSQL
stopped, /healthz and writes answer 503; once it is back both recover
without restarting the server. Runs on a cluster of its own so stopping it
disturbs no other test."""
import json
import re
import time

import pytest

from conftest import (Cluster, _new_server, assert_storage_consistent, create_app,
                      fixture_of, fixture_path, migrate)


@pytest.fixture
def own_cluster(tmp_root):
    c = Cluster(tmp_root / "pg-outage")
    c.start()
    yield c
    c.stop()


def test_database_down_then_back(own_cluster, tmp_root, manifest):
    url = own_cluster.create_db("outage")
    migrate(url)
    app = create_app(url)
    server = _new_server(url, tmp_root, name="outage").start()
    dwarf = fixture_path(fixture_of(manifest, "dwarf"))
    zipped = fixture_path(fixture_of(manifest, "zip"))
    report = json.dumps({
        "report_id": "outage-1", "user_id": "u", "images": [],
        "threads": [{"main": True, "frames": ["0x1000"]}]}).encode()
    try:
        assert server.upload(app, dwarf).status == 201
        assert server.request("PUT", f"/api/v1/apps/{app['app']}/config",
                              body=b'{"sample_rate":1}',
                              token=app["admin_token"]).status == 200

        own_cluster.stop()
        r = server.request("GET", "/healthz")
        assert r.status == 503, r
        assert r.json["database"] == "unavailable"
        r = server.upload(app, zipped)
        assert r.status == 503 and r.error_code == "database_unavailable", r
        r = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms",
                           token=app["admin_token"])
        assert r.status == 503 and r.error_code == "database_unavailable", r
        # Ingest refuses rather than pretends: a 2xx means committed.
        r = server.request("POST", "/api/v1/ingest", body=report,
                           key=app["ingest_key"])
        assert r.status == 503 and r.error_code == "database_unavailable", r
        assert server.alive()
        assert server.temp_files() == [] or wait_no_temp(server)

        own_cluster.start()
        deadline = time.monotonic() + 15
        while server.request("GET", "/healthz").status != 200:
            assert time.monotonic() < deadline, server.log()[-3000:]
            time.sleep(0.1)
        r = server.upload(app, zipped)
        assert r.status == 201, r
        assert len(server.list_dsyms(app)) == 3
        # The device's retry now lands, once.
        for _ in range(2):
            r = server.request("POST", "/api/v1/ingest", body=report,
                               key=app["ingest_key"])
            assert r.status == 202 and len(r.json["accepted"]) == 1, r

        metrics = server.request("GET", "/metrics").raw.decode()
        errors = re.search(r"^stallscope_db_errors_total (\d+)$", metrics,
                           re.M)
        assert errors and int(errors.group(1)) > 0
        assert_storage_consistent(url)
    finally:
        assert server.stop() == 0, server.log()[-3000:]


def wait_no_temp(server):
    deadline = time.monotonic() + 5
    while server.temp_files():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
