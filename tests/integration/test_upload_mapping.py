"""scripts/upload-mapping.sh against a running server (issue 44, item 6):
the same environment as upload-dsyms.sh plus the version and build, the
file gzip'ed on the way, 4xx final with the server's message, retries."""
import gzip
import os
import socket

from conftest import REPO, create_app, run

SCRIPT = REPO / "scripts/upload-mapping.sh"
ENV_VARS = ("STALLSCOPE_URL", "STALLSCOPE_APP", "STALLSCOPE_UPLOAD_TOKEN",
            "STALLSCOPE_APP_VERSION", "STALLSCOPE_BUILD")


def script(args, env_extra):
    env = dict(os.environ)
    for var in ENV_VARS:
        env.pop(var, None)
    env.update(env_extra)
    return run(["bash", SCRIPT, *args], env=env, check=False, timeout=300)


def write_mapping(path, methods):
    """A methodMapping.txt as Matrix's Gradle plugin writes it: sorted by
    id, the dispatch entry last (FORMATS §6)."""
    lines = [f"{i},1,com.example.feed.FeedAdapter$Holder bind{i} "
             f"(Landroid.view.View;I)V" for i in range(1, methods + 1)]
    lines.append("1048574,1,android.os.Handler dispatchMessage "
                 "(Landroid.os.Message;)V")
    path.write_text("\n".join(lines) + "\n")
    return path


def mappings(server, app):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/method-mappings",
                       token=app["upload_token"])
    assert r.status == 200, r
    return r.json["mappings"]


def test_uploads_under_version_and_build(server, db, tmp_path):
    app = create_app(db)
    mapping = write_mapping(tmp_path / "methodMapping.txt", 500)
    env = {"STALLSCOPE_URL": f"http://127.0.0.1:{server.port}",
           "STALLSCOPE_APP": app["app"],
           "STALLSCOPE_UPLOAD_TOKEN": app["upload_token"],
           "STALLSCOPE_APP_VERSION": "3.2.0", "STALLSCOPE_BUILD": "3200417"}
    p = script([str(mapping)], env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "uploaded" in p.stdout
    listed = mappings(server, app)
    assert [(m["app_version"], m["build"]) for m in listed] == \
        [("3.2.0", "3200417")]
    assert listed[0]["methods"] == 501

    # Flags instead of the environment; a file gzip'ed already goes as it
    # is; a build of its own is a mapping of its own.
    gz = tmp_path / "methodMapping.txt.gz"
    gz.write_bytes(gzip.compress(write_mapping(tmp_path / "b.txt", 20)
                                 .read_bytes()))
    p = script(["-u", f"http://127.0.0.1:{server.port}", "-a", app["app"],
                "-t", app["upload_token"], "--app-version", "3.2.0",
                "--build", "3200418", str(gz)], {})
    assert p.returncode == 0, p.stdout + p.stderr
    listed = {(m["app_version"], m["build"]): m for m in mappings(server, app)}
    assert set(listed) == {("3.2.0", "3200417"), ("3.2.0", "3200418")}
    assert listed[("3.2.0", "3200418")]["methods"] == 21

    # The same text again changes nothing.
    p = script([str(mapping)], env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert len(mappings(server, app)) == 2


def test_refusal_is_final_with_the_servers_message(server, db, tmp_path):
    app = create_app(db)
    mapping = write_mapping(tmp_path / "methodMapping.txt", 3)
    base = {"STALLSCOPE_URL": f"http://127.0.0.1:{server.port}",
            "STALLSCOPE_APP": app["app"], "STALLSCOPE_APP_VERSION": "1.0",
            "STALLSCOPE_BUILD": "1"}
    p = script(["--retry-delay", "0", str(mapping)],
               {**base, "STALLSCOPE_UPLOAD_TOKEN": "ssu_" + "A" * 43})
    assert p.returncode == 1
    assert "HTTP 401" in p.stderr and "retrying" not in p.stderr
    # Another app's token: 403, and the reply's code and message.
    other = create_app(db)
    p = script(["--retry-delay", "0", str(mapping)],
               {**base, "STALLSCOPE_UPLOAD_TOKEN": other["upload_token"]})
    assert p.returncode == 1
    assert "HTTP 403" in p.stderr and "retrying" not in p.stderr
    r = server.request("POST", f"/api/v1/apps/{app['app']}/method-mappings"
                       "?app_version=1.0&build=1", body=b"x",
                       token=other["upload_token"])
    assert r.status == 403 and r.json["error"]["message"] in p.stderr
    assert mappings(server, app) == []


def test_retries_then_gives_up(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nobody listens there
    mapping = write_mapping(tmp_path / "methodMapping.txt", 3)
    p = script(["--retries", "2", "--retry-delay", "0", str(mapping)], {
        "STALLSCOPE_URL": f"http://127.0.0.1:{port}",
        "STALLSCOPE_APP": "com.example.none",
        "STALLSCOPE_UPLOAD_TOKEN": "ssu_x",
        "STALLSCOPE_APP_VERSION": "1.0", "STALLSCOPE_BUILD": "1"})
    assert p.returncode == 1
    assert p.stderr.count("retrying") == 2
    assert "giving up after 3 attempts" in p.stderr


def test_usage_errors(tmp_path):
    assert script([], {}).returncode == 2
    full = {"STALLSCOPE_URL": "http://x", "STALLSCOPE_APP": "a",
            "STALLSCOPE_UPLOAD_TOKEN": "t", "STALLSCOPE_APP_VERSION": "1",
            "STALLSCOPE_BUILD": "1"}
    p = script([str(tmp_path / "missing")], full)
    assert p.returncode == 1 and "no such file" in p.stderr
    mapping = write_mapping(tmp_path / "methodMapping.txt", 1)
    for var in ("STALLSCOPE_URL", "STALLSCOPE_APP_VERSION",
                "STALLSCOPE_BUILD"):
        env = {k: v for k, v in full.items() if k != var}
        p = script([str(mapping)], env)
        assert p.returncode == 1 and var in p.stderr, (var, p.stderr)
