"""scripts/upload-dsyms.sh against a running server (issue 3, fifth
acceptance point)."""
import os
import shutil
import socket

from conftest import (REPO, create_app, dwarfdump_uuids, fixture_of,
                      fixture_path, run)

SCRIPT = REPO / "scripts/upload-dsyms.sh"


def bundle_of(manifest, kind, **match):
    entry = fixture_of(manifest, kind, **match)
    return fixture_path(entry).parents[3], fixture_path(entry)


def script(args, env_extra):
    env = dict(os.environ)
    for var in ("STALLSCOPE_URL", "STALLSCOPE_APP", "STALLSCOPE_UPLOAD_TOKEN"):
        env.pop(var, None)
    env.update(env_extra)
    return run(["bash", SCRIPT, *args], env=env, check=False, timeout=300)


def test_uploads_a_folder_of_dsyms(server, db, manifest, tmp_path):
    app = create_app(db)
    # An .xcarchive-like folder: bundles nested at different depths, two
    # of them with the same bundle name.
    archive = tmp_path / "Demo.xcarchive"
    expected = set()
    for i, (kind, match, dest) in enumerate([
            ("dwarf", {"role": "app"}, "dSYMs"),
            ("dwarf", {"variant": "arm64-O2"}, "dSYMs"),
            ("dwarf", {"variant": "x86_64-O2"}, "Products/other")]):
        bundle, dwarf = bundle_of(manifest, kind, **match)
        target = archive / dest / f"{i}" / bundle.name
        shutil.copytree(bundle, target)
        expected |= dwarfdump_uuids(dwarf)
    (archive / "Info.plist").write_text("<plist/>")

    p = script([str(archive)], {
        "STALLSCOPE_URL": f"http://127.0.0.1:{server.port}",
        "STALLSCOPE_APP": app["app"],
        "STALLSCOPE_UPLOAD_TOKEN": app["upload_token"]})
    assert p.returncode == 0, p.stdout + p.stderr
    for uuid, arch in expected:
        assert uuid in p.stdout and arch in p.stdout
    assert {(d["uuid"], d["arch"]) for d in server.list_dsyms(app)} == \
        expected

    # Plain files go as they are: a fat binary here.
    fat = fixture_path(fixture_of(manifest, "fat-symtab"))
    p = script(["-u", f"http://127.0.0.1:{server.port}", "-a", app["app"],
                "-t", app["upload_token"], str(fat)], {})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "uploaded libDemo.dylib" in p.stdout


def test_refusal_is_final(server, db, manifest):
    app = create_app(db)
    bundle, _ = bundle_of(manifest, "dwarf")
    p = script(["--retry-delay", "0", str(bundle)], {
        "STALLSCOPE_URL": f"http://127.0.0.1:{server.port}",
        "STALLSCOPE_APP": app["app"],
        "STALLSCOPE_UPLOAD_TOKEN": "ssu_" + "A" * 43})
    assert p.returncode == 1
    assert "HTTP 401" in p.stderr and "retrying" not in p.stderr


def test_retries_then_gives_up(manifest):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nobody listens there
    bundle, _ = bundle_of(manifest, "dwarf")
    p = script(["--retries", "2", "--retry-delay", "0", str(bundle)], {
        "STALLSCOPE_URL": f"http://127.0.0.1:{port}",
        "STALLSCOPE_APP": "com.example.none",
        "STALLSCOPE_UPLOAD_TOKEN": "ssu_x"})
    assert p.returncode == 1
    assert p.stderr.count("retrying") == 2
    assert "giving up after 3 attempts" in p.stderr


def test_usage_errors(tmp_path):
    assert script([], {}).returncode == 2
    p = script([str(tmp_path / "missing")], {
        "STALLSCOPE_URL": "http://x", "STALLSCOPE_APP": "a",
        "STALLSCOPE_UPLOAD_TOKEN": "t"})
    assert p.returncode == 1 and "no such file" in p.stderr
    p = script([str(tmp_path)], {"STALLSCOPE_APP": "a",
                                 "STALLSCOPE_UPLOAD_TOKEN": "t"})
    assert p.returncode == 1 and "STALLSCOPE_URL" in p.stderr


WRAPPER = """#!/bin/bash
# Records this command's argv, then runs the real one of that name.
name=${0##*/}
{ printf '%s\\0' "$name" "$@"; printf '\\n'; } >>"$ARGV_LOG"
IFS=: read -ra dirs <<<"$REAL_PATH"
for d in "${dirs[@]}"; do
	[ -x "$d/$name" ] && exec "$d/$name" "$@"
done
exit 127
"""


def test_token_never_on_a_command_line(server, db, manifest, tmp_path):
    """Every program on PATH is a wrapper recording its argv: whatever the
    script (and bash itself) runs by name, the token is in none of them."""
    app = create_app(db)
    token = app["upload_token"]
    wrap = tmp_path / "wrap"
    wrap.mkdir()
    (wrap / ".wrapper").write_text(WRAPPER)
    (wrap / ".wrapper").chmod(0o755)
    real_path = os.environ["PATH"]
    for d in real_path.split(":"):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            target = wrap / name
            if not target.exists() and os.access(os.path.join(d, name),
                                                 os.X_OK):
                target.symlink_to(".wrapper")
    log = tmp_path / "argv.log"
    bundle, dwarf = bundle_of(manifest, "dwarf", role="app")
    fat = fixture_path(fixture_of(manifest, "fat-symtab"))

    p = script([str(bundle), str(fat)], {
        "PATH": f"{wrap}:{real_path}", "REAL_PATH": real_path,
        "ARGV_LOG": str(log),
        "STALLSCOPE_URL": f"http://127.0.0.1:{server.port}",
        "STALLSCOPE_APP": app["app"], "STALLSCOPE_UPLOAD_TOKEN": token})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "uploaded dsyms.zip" in p.stdout
    assert "uploaded libDemo.dylib" in p.stdout
    stored = {(d["uuid"], d["arch"]) for d in server.list_dsyms(app)}
    assert dwarfdump_uuids(dwarf) <= stored

    argvs = [line.rstrip(b"\0").split(b"\0")
             for line in log.read_bytes().split(b"\0\n") if line]
    names = [a[0].decode() for a in argvs]
    # The wrappers saw the script's work: bash, zip and both curl runs.
    assert names.count("curl") == 2 and "zip" in names and "bash" in names
    secret = token.split("_", 1)[1].encode()
    leaks = [a for a in argvs if any(secret in arg for arg in a)]
    assert leaks == []
