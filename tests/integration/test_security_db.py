"""The database no local account can take (issue 23, item 2). A cluster
set up as `make run` sets it up (scripts/pg.sh start, createdb, url, then
`stallscope migrate` with that URL) admits no other local account, over the
socket or 127.0.0.1, with or without a guessed password; the server's role
is no superuser: it cannot create a function outside its schema nor run
`COPY … TO PROGRAM`, and the normal flow still works.

Another account means a real one: the test creates a throwaway system user
and runs psql as it (runuser), so it needs root, as CI and `make test` run.
"""
import os
import pwd
import stat
import subprocess
import uuid
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import PSQL, REPO, Cluster, create_app, migrate, psql, run

GUESSES = [None, "", "stallscope", "postgres", "password"]


@pytest.fixture(scope="module")
def setup(tmp_root):
    """(cluster, role URL), made the way scripts/run.sh makes them."""
    c = Cluster(tmp_root / "pg-security")
    c.start(durable=True)
    url = c.create_db("stallscope")
    migrate(url)
    yield c, url
    c.stop()


@pytest.fixture(scope="module")
def stranger():
    """A throwaway local account, removed afterwards."""
    if os.geteuid() != 0:
        pytest.fail("this test runs psql as another account: run it as root")
    name = f"ssit{uuid.uuid4().hex[:8]}"
    run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
         "--shell", "/usr/sbin/nologin", name])
    yield name
    run(["userdel", name], check=False)


def connect_as(account, host, port, role, password):
    """psql `SELECT current_user` run by the OS ACCOUNT; never prompts."""
    env = {"PATH": "/usr/bin:/bin", "PGCONNECT_TIMEOUT": "10",
           "PGPASSFILE": "/nonexistent"}
    if password is not None:
        env["PGPASSWORD"] = password
    cmd = ["runuser", "-u", account, "--", "env", "-i",
           *[f"{k}={v}" for k, v in env.items()],
           PSQL, "-w", "-X", "-h", host, "-p", str(port), "-U", role,
           "-d", "stallscope", "-Atc", "SELECT current_user"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                          cwd="/", stdin=subprocess.DEVNULL)


def the_password(cluster):
    # host:port:database:user:password, as libpq reads it.
    line = (cluster.dir / "passfile").read_text().strip()
    return line.split(":", 4)[4]


def test_files_only_their_owners_can_read(setup):
    cluster, url = setup
    socket_dir = cluster.dir / "socket"
    st = socket_dir.stat()
    assert stat.S_IMODE(st.st_mode) == 0o700
    # The server's own user: the one whose peer identity the socket admits.
    assert st.st_uid == pwd.getpwnam("postgres").pw_uid
    assert stat.S_IMODE(cluster.dir.stat().st_mode) == 0o700
    passfile = cluster.dir / "passfile"
    st = passfile.stat()
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_uid == os.geteuid()
    # The URL names the file, never the secret.
    password = the_password(cluster)
    assert len(password) >= 32
    assert password not in url
    query = parse_qs(urlsplit(url).query)
    assert query["passfile"] == [str(passfile)]


def test_another_account_cannot_connect(setup, stranger):
    cluster, _ = setup
    port = (cluster.dir / "port").read_text().strip()
    refused = []
    for host in (str(cluster.dir / "socket"), "127.0.0.1"):
        for role in ("stallscope", "postgres", stranger):
            for password in GUESSES:
                p = connect_as(stranger, host, port, role, password)
                refused.append(p.returncode != 0)
                assert p.returncode != 0 and p.stdout == "", \
                    (host, role, password, p.stdout, p.stderr)
    assert len(refused) == 2 * 3 * len(GUESSES)
    # Not refused for a reason of its own: with the real password the same
    # account does get in over TCP, as the role only.
    p = connect_as(stranger, "127.0.0.1", port, "stallscope",
                   the_password(cluster))
    assert (p.returncode, p.stdout.strip()) == (0, "stallscope"), p.stderr
    # and the superuser, over TCP, not even with it.
    p = connect_as(stranger, "127.0.0.1", port, "postgres",
                   the_password(cluster))
    assert p.returncode != 0


def sql_error(url, sql):
    p = run([PSQL, url, "-X", "-v", "ON_ERROR_STOP=1", "-Atc", sql],
            check=False)
    assert p.returncode != 0, f"{sql!r} succeeded: {p.stdout}"
    return p.stderr


def test_the_servers_role_is_no_superuser(setup):
    cluster, url = setup
    assert psql(url, "SELECT current_user") == "stallscope"
    assert psql(url, "SELECT rolsuper, rolcreatedb, rolcreaterole, rolreplication,"
                     " rolbypassrls FROM pg_roles WHERE rolname = current_user") \
        == "f|f|f|f|f"
    assert psql(url, "SELECT pg_has_role(current_user, 'pg_execute_server_program',"
                     " 'USAGE')") == "f"
    err = sql_error(url, "COPY (SELECT 1) TO PROGRAM 'true'")
    assert "pg_execute_server_program" in err, err

    # Every schema the role does not own, found from the catalog.
    others = psql(url, "SELECT nspname FROM pg_namespace"
                       " WHERE nspowner <> (SELECT oid FROM pg_roles"
                       "                    WHERE rolname = current_user)"
                       " AND nspname NOT LIKE 'pg_temp%'"
                       " AND nspname NOT LIKE 'pg_toast_temp%'"
                       " ORDER BY 1").split()
    assert {"public", "pg_catalog", "information_schema"} <= set(others)
    # Nor in a temporary schema of its own: no TEMPORARY on the database.
    for schema in others + ["pg_temp"]:
        err = sql_error(url, f"CREATE FUNCTION {schema}.ssit_probe() RETURNS int"
                             " LANGUAGE sql AS 'SELECT 1'")
        assert "permission denied" in err, (schema, err)
    for sql in ("CREATE DATABASE ssit_probe", "CREATE ROLE ssit_probe",
                "CREATE SCHEMA ssit_probe",
                "ALTER ROLE postgres PASSWORD 'x'"):
        sql_error(url, sql)

    # The migrations ran as the role: it owns every relation and function of
    # its schema, and nothing anywhere else (but its tables' TOAST).
    admin = cluster.superuser_url("stallscope")
    assert psql(admin, "SELECT current_user, rolsuper FROM pg_roles"
                       " WHERE rolname = current_user") == "postgres|t"
    assert psql(admin, "SELECT nspowner::regrole FROM pg_namespace"
                       " WHERE nspname = 'stallscope'") == "stallscope"
    owners = psql(admin, "SELECT DISTINCT relowner::regrole FROM pg_class"
                         " WHERE relnamespace = 'stallscope'::regnamespace")
    assert owners == "stallscope"
    owners = psql(admin, "SELECT DISTINCT proowner::regrole FROM pg_proc"
                         " WHERE pronamespace = 'stallscope'::regnamespace")
    assert owners == "stallscope"
    elsewhere = psql(admin, "SELECT count(*) FROM pg_class WHERE relowner ="
                            " 'stallscope'::regrole AND relnamespace <>"
                            " 'stallscope'::regnamespace AND relnamespace <>"
                            " 'pg_toast'::regnamespace")
    assert elsewhere == "0"
    applied = psql(admin, "SELECT name FROM stallscope.schema_migrations"
                          " ORDER BY 1").split()
    assert applied == sorted(p.name for p in (REPO / "schema").glob("*.sql"))


def test_the_normal_flow_still_works(setup, make_server):
    _, url = setup
    app = create_app(url)
    server = make_server(db_url=url)
    assert server.request("GET", "/healthz").status == 200
    r = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms",
                       token=app["upload_token"])
    assert r.status == 200 and r.json["dsyms"] == [], r
