"""Issue 23, item 8: /metrics is served to STALLSCOPE_METRICS_ALLOW only
(loopback by default); every other route is unaffected. Issue 43, item 4:
behind a proxy in STALLSCOPE_TRUSTED_PROXIES the client is the one its
X-Forwarded-For names; anyone else's X-Forwarded-For is ignored."""
import http.client
import json

from conftest import BIN, run


def get(server, path, source, forwarded=()):
    """GET PATH from SOURCE with one X-Forwarded-For line per FORWARDED."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30,
                                      source_address=(source, 0))
    try:
        conn.putrequest("GET", path)
        for value in forwarded:
            conn.putheader("X-Forwarded-For", value)
        conn.endheaders()
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


def test_forwarded_for_only_from_trusted_proxies(make_server):
    # 127.0.0.2 plays the proxy, and is in the allow list as nginx's
    # address would be: its X-Forwarded-For decides, not its own address.
    server = make_server(env={"STALLSCOPE_TRUSTED_PROXIES": "127.0.0.2/32",
                              "STALLSCOPE_METRICS_ALLOW": "10.1.2.3/32,127.0.0.2/32"})
    # From an untrusted peer the header is ignored, whatever it says.
    assert_refused(get(server, "/metrics", "127.0.0.1", ["10.1.2.3"]))
    # Through the proxy: the right-most address that is not the proxy.
    assert_metrics(get(server, "/metrics", "127.0.0.2", ["10.1.2.3"]))
    assert_metrics(get(server, "/metrics", "127.0.0.2", ["203.0.113.5, 10.1.2.3, 127.0.0.2"]))
    assert_metrics(get(server, "/metrics", "127.0.0.2", ["203.0.113.5", "10.1.2.3"]))
    # A client behind the proxy naming an allowed address itself: nginx
    # appends the address it saw, which is the one believed.
    assert_refused(get(server, "/metrics", "127.0.0.2", ["10.1.2.3, 203.0.113.5"]))
    assert_refused(get(server, "/metrics", "127.0.0.2", ["10.1.2.3", "203.0.113.5"]))
    # Malformed where the client should be: nobody, even though the proxy
    # itself is allowed.
    for bad in (["10.1.2.3, junk"], ["10.1.2.3:80"], [""]):
        assert_refused(get(server, "/metrics", "127.0.0.2", bad))
    # The proxy's own requests (no header) are its own.
    assert_metrics(get(server, "/metrics", "127.0.0.2"))

    # By default no proxy is trusted: loopback's header counts for nothing.
    plain = make_server(env={"STALLSCOPE_METRICS_ALLOW": "10.1.2.3/32"})
    assert_refused(get(plain, "/metrics", "127.0.0.1", ["10.1.2.3"]))
    assert get(plain, "/healthz", "127.0.0.1", ["10.1.2.3"])[0] == 200


def test_bad_trusted_proxies_stop_the_server(db):
    p = run([BIN, "serve"], env={"STALLSCOPE_DATABASE_URL": db,
                                 "STALLSCOPE_TRUSTED_PROXIES": "nginx",
                                 "STALLSCOPE_LISTEN": "127.0.0.1:0"},
            check=False, timeout=30)
    assert p.returncode != 0
    assert "STALLSCOPE_TRUSTED_PROXIES=nginx" in p.stderr + p.stdout
