"""The HTTP layer: request ids, the access log, /healthz, /metrics,
concurrent uploads and graceful shutdown."""
import re
import signal
import threading
import time

from conftest import (create_app, dwarfdump_uuids, fixture_of, fixture_path,
                      slices_of)


def test_healthz(server):
    r = server.request("GET", "/healthz")
    assert r.status == 200
    assert r.json == {"status": "ok", "database": "ok"}


def test_request_id_echoed_or_generated_and_logged(server):
    r = server.request("GET", "/healthz", headers={"X-Request-Id": "abc-42"})
    assert r.headers["X-Request-Id"] == "abc-42"
    r = server.request("GET", "/healthz",
                       headers={"X-Request-Id": "bad id with spaces"})
    generated = r.headers["X-Request-Id"]
    assert re.fullmatch(r"[0-9a-f]{16}", generated)
    r = server.request("GET", "/no/such/thing")
    assert r.status == 404 and re.fullmatch(r"[0-9a-f]{16}",
                                            r.headers["X-Request-Id"])
    deadline = time.monotonic() + 5
    pattern = (r"access method=GET path=/healthz status=200 bytes=\d+ "
               r"ms=[\d.]+ id=abc-42")
    # The line is written when the request completes, just after the reply.
    while not (re.search(pattern, server.log()) and
               f"id={generated}" in server.log()):
        assert time.monotonic() < deadline, server.log()[-2000:]
        time.sleep(0.02)


def test_metrics(server, db, manifest):
    app = create_app(db)
    assert server.upload(app, fixture_path(fixture_of(manifest, "dwarf"))) \
        .status == 201
    server.request("GET", "/healthz")
    r = server.request("GET", "/metrics")
    assert r.status == 200
    assert r.headers["Content-Type"].startswith("text/plain")
    text = r.raw.decode()
    for needle in (
            'stallscope_http_requests_total{method="GET",route="/healthz",'
            'status="200"}',
            'stallscope_http_requests_total{method="POST",'
            'route="/api/v1/apps/{app}/dsyms",status="201"}',
            'stallscope_http_request_duration_seconds_bucket{method="GET",'
            'route="/healthz",le="+Inf"}',
            "stallscope_http_request_duration_seconds_count",
            'stallscope_dsym_uploads_total{result="ok"}',
            'stallscope_symcache_builds_total{result="ok"}',
            # 2 for requests + 2 workers + the reprocessing, retention and
            # webhook delivery threads.
            "stallscope_db_pool_size 7", "stallscope_db_pool_in_use",
            'stallscope_webhook_deliveries_total{result="delivered"}',
            "stallscope_outbox_depth", "stallscope_outbox_oldest_seconds",
            'stallscope_symcache_lookups_total{result="hit"}',
            "stallscope_db_errors_total"):
        assert needle in text, needle
    # Every sample line is NAME{labels} VALUE or NAME VALUE.
    for line in text.splitlines():
        if line and not line.startswith("#"):
            assert re.fullmatch(r'[a-z_]+(\{([a-z_]+="[^"]*",?)+\})? '
                                r'[0-9.e+-]+', line), line


def test_concurrent_uploads(server, db, manifest):
    apps = [create_app(db) for _ in range(6)]
    path = fixture_path(fixture_of(manifest, "zip"))
    expected = dwarfdump_uuids(path)
    results = [None] * len(apps)

    def go(i):
        results[i] = server.upload(apps[i], path)

    threads = [threading.Thread(target=go, args=(i,))
               for i in range(len(apps))]
    for t in threads:
        t.start()
    # Uploads are built on the workers: the HTTP threads keep answering.
    assert server.request("GET", "/healthz").status == 200
    for t in threads:
        t.join()
    for r in results:
        assert r.status == 201, r
        assert slices_of(r) == expected


def test_graceful_shutdown_finishes_in_flight_upload(make_server, db,
                                                     manifest):
    server = make_server()
    app = create_app(db)
    data = fixture_path(fixture_of(manifest, "zip")).read_bytes()
    conn = server.connection()
    conn.putrequest("POST", f"/api/v1/apps/{app['app']}/dsyms")
    conn.putheader("Authorization", f"Bearer {app['upload_token']}")
    conn.putheader("Content-Length", str(len(data)))
    conn.endheaders()
    conn.send(data[:len(data) // 2])
    deadline = time.monotonic() + 10
    while not server.temp_files():
        assert time.monotonic() < deadline
        time.sleep(0.01)

    server.proc.send_signal(signal.SIGTERM)
    # New connections are refused once the server quiesces…
    deadline = time.monotonic() + 10
    while True:
        try:
            server.request("GET", "/healthz", timeout=2)
        except OSError:
            break
        assert time.monotonic() < deadline, "still accepting after SIGTERM"
        time.sleep(0.02)
    # …but the upload in flight completes.
    conn.send(data[len(data) // 2:])
    resp = conn.getresponse()
    assert resp.status == 201, resp.read()
    resp.read()
    conn.close()
    assert server.proc.wait(30) == 0, server.log()[-3000:]
    assert "stopped" in server.log()
    assert server.temp_files() == []


def test_header_size_and_idle_limits(make_server):
    import socket
    server = make_server(env={"STALLSCOPE_IDLE_TIMEOUT": "1"})
    # Headers beyond the per-connection buffer are refused, not buffered.
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n" +
              b"".join(b"X-Filler-%d: %s\r\n" % (i, b"y" * 1000)
                       for i in range(100)) + b"\r\n")
    head = s.recv(200)
    s.close()
    assert head.startswith(b"HTTP/1.1 4"), head
    # A connection that goes silent mid-request is closed.
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
    t0 = time.monotonic()
    assert s.recv(100) == b""
    assert time.monotonic() - t0 < 8
    s.close()
    assert server.request("GET", "/healthz").status == 200
