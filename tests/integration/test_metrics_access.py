"""Issue 23, item 8: /metrics is served to STALLSCOPE_METRICS_ALLOW only
(loopback by default); every other route is unaffected."""
import http.client
import json

from conftest import BIN, run


def get(server, path, source):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30,
                                      source_address=(source, 0))
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type", ""), resp.read()
    finally:
        conn.close()


def assert_metrics(reply):
    status, ctype, body = reply
    assert status == 200 and ctype.startswith("text/plain"), reply
    assert b"# TYPE " in body


def assert_refused(reply):
    status, ctype, body = reply
    assert status == 403 and ctype.startswith("application/json"), reply
    assert json.loads(body)["error"]["code"] == "address_not_allowed"
    assert b"# TYPE" not in body


def test_default_is_loopback_host_only(make_server):
    server = make_server()
    assert_metrics(get(server, "/metrics", "127.0.0.1"))
    # 127.0.0.2 is loopback too, but not 127.0.0.1/32.
    assert_refused(get(server, "/metrics", "127.0.0.2"))
    assert get(server, "/healthz", "127.0.0.2")[0] == 200


def test_configured_ranges(make_server):
    server = make_server(env={
        "STALLSCOPE_METRICS_ALLOW": "10.0.0.0/8, 127.0.0.2/32,::1/128"})
    assert_metrics(get(server, "/metrics", "127.0.0.2"))
    assert_refused(get(server, "/metrics", "127.0.0.1"))
    assert_refused(get(server, "/metrics", "127.0.0.3"))
    assert get(server, "/healthz", "127.0.0.1")[0] == 200

    everyone = make_server(env={"STALLSCOPE_METRICS_ALLOW": "0.0.0.0/0"})
    for source in ("127.0.0.1", "127.0.0.9"):
        assert_metrics(get(everyone, "/metrics", source))


def test_bad_range_stops_the_server(db):
    for value in ("10.0.0.1/8", "10.0.0.0/33", "localhost"):
        p = run([BIN, "serve"], env={"STALLSCOPE_DATABASE_URL": db,
                                     "STALLSCOPE_METRICS_ALLOW": value,
                                     "STALLSCOPE_LISTEN": "127.0.0.1:0"},
                check=False, timeout=30)
        assert p.returncode != 0
        assert "STALLSCOPE_METRICS_ALLOW=" + value in p.stderr + p.stdout
