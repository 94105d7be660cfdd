"""Integration tests: the real `stallscope` binary over real HTTP against a
real PostgreSQL 15 cluster created for the session (scripts/pg.sh: initdb
as the `postgres` user when run as root, a free port, the unix socket in
the cluster's directory). Tests connect as the server does, as the role
`stallscope` that owns the schema (`psql(db, …)` included); only what needs
more uses `Cluster.superuser_url`. A missing PostgreSQL fails the session; nothing
here skips.

Environment (the Makefile sets them): STALLSCOPE_BIN, STALLSCOPE_FIXTURES
(build/fixtures with manifest.json), LLVM_BIN (llvm-dwarfdump).
"""
import hashlib
import http.client
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("STALLSCOPE_BIN", REPO / "build/stallscope")).resolve()
FIXTURES = Path(os.environ.get("STALLSCOPE_FIXTURES",
                               REPO / "build/fixtures")).resolve()
LLVM_BIN = Path(os.environ.get("LLVM_BIN", "/usr/lib/llvm-14/bin"))
PG_SH = REPO / "scripts/pg.sh"
PSQL = "/usr/lib/postgresql/15/bin/psql"
# Sanitizer builds start and answer more slowly.
STARTUP_SECONDS = 60


def run(cmd, env=None, check=True, timeout=120):
    """Runs CMD, returning the CompletedProcess; fails the test on error."""
    p = subprocess.run([str(c) for c in cmd], env=env, capture_output=True,
                       text=True, timeout=timeout)
    if check and p.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} exited {p.returncode}\n"
                    f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p


# A statement naming the rows ingest leaves to the folder (schema/026).
# group_dim_days with each row's app version, OS version, device and kind
# (schema/039 keeps their combination's number), read as the table was.
DIM_ROWS = ("(SELECT d.*, c.app_version, c.os_version, c.device, c.kind FROM group_dim_days d"
            " JOIN dim_combos c ON c.id = d.combo) AS group_dim_days")
FOLDED = re.compile(r"\b(groups|group_(dim_|facet_|stack_)?days|app_dimensions|"
                    r"activity_(daily|users))\b")
FOLD = ("DO $$ BEGIN IF to_regproc('fold_group_deltas') IS NOT NULL THEN"
        " PERFORM fold_group_deltas(id) FROM apps; END IF; END $$")


def fold(url):
    """Every app's waiting deltas counted into the groups' counters and the
    day rows, as the server's folder does (schema/026, 028)."""
    run([PSQL, url, "-v", "ON_ERROR_STOP=1", "-qAtc", FOLD])


def psql(url, sql, fold_first=True):
    """SQL's rows, unaligned, as one stripped string; fails the test on an
    error. A statement that reads the groups, day, dimension or facet rows
    sees them as the API's readers do: every app's waiting deltas folded
    first (unless FOLD_FIRST is false: the rows as they are)."""
    if fold_first and FOLDED.search(sql):
        fold(url)
    return run([PSQL, url, "-v", "ON_ERROR_STOP=1", "-Atc", sql]).stdout.strip()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A private PostgreSQL cluster in DIR, driven through scripts/pg.sh."""

    def __init__(self, directory):
        self.dir = Path(directory)

    def start(self, durable=False):
        run([PG_SH, "start", self.dir] + ([] if durable else ["--fast"]))

    def stop(self):
        run([PG_SH, "stop", self.dir])

    def create_db(self, name):
        """Creates NAME; returns the URL of the server's role (`stallscope`,
        owner of the schema the migrations fill, no superuser)."""
        run([PG_SH, "createdb", self.dir, name])
        return run([PG_SH, "url", self.dir, name]).stdout.strip()

    def superuser_url(self, name):
        """The superuser's URL for NAME (peer on the socket, as root or the
        cluster's owner): for the few checks the role may not make."""
        return run([PG_SH, "url", self.dir, name, "--superuser"]).stdout.strip()


def stallscope(*args, db_url=None, extra_env=None, check=True):
    env = dict(os.environ)
    if db_url:
        env["STALLSCOPE_DATABASE_URL"] = db_url
    env.update(extra_env or {})
    return run([BIN, *args], env=env, check=check)


def migrate(db_url, **kw):
    return stallscope("migrate", db_url=db_url, **kw)


def assert_storage_consistent(db_url, app=None):
    """`stallscope check` over DB_URL (only APP's rows, a bundle id, when
    given: the session's shared database also holds apps other tests
    broke on purpose): every equality the storage relies on holds, the
    deltas not folded yet included (SPEC §12)."""
    args = ["check"] + (["--app", app] if app else [])
    p = stallscope(*args, db_url=db_url, check=False)
    lines = p.stdout.strip().splitlines()
    assert p.returncode == 0 and lines and lines[-1].startswith("ok:"), \
        f"stallscope check exited {p.returncode}\n{p.stdout}{p.stderr}"


def create_app(db_url, bundle_id=None):
    """Registers an app (a fresh bundle id unless given); returns the JSON
    `stallscope app create` printed."""
    bundle_id = bundle_id or f"com.it.{uuid.uuid4().hex[:12]}"
    out = stallscope("app", "create", bundle_id, db_url=db_url).stdout
    app = json.loads(out)
    assert app["app"] == bundle_id
    return app


class Reply:
    def __init__(self, status, headers, raw):
        self.status = status
        self.headers = headers
        self.raw = raw
        ctype = headers.get("Content-Type", "")
        self.json = json.loads(raw) if ctype.startswith("application/json") \
            and raw else None

    @property
    def error_code(self):
        return (self.json or {}).get("error", {}).get("code")

    def __repr__(self):
        return f"<Reply {self.status} {self.raw[:300]!r}>"


class Server:
    """One `stallscope serve` process on a free loopback port."""

    # A command the server runs under (its arguments follow), e.g. one that
    # mounts something in a namespace of its own first.
    wrapper = ()

    def __init__(self, db_url, data_dir, log_path, env=None):
        self.db_url = db_url
        self.data_dir = Path(data_dir)
        self.log_path = Path(log_path)
        self.extra_env = env or {}
        self.proc = None
        self.port = None

    def env(self):
        env = dict(os.environ)
        env.update({
            "STALLSCOPE_DATABASE_URL": self.db_url,
            "STALLSCOPE_LISTEN": f"127.0.0.1:{self.port}",
            "STALLSCOPE_DATA_DIR": str(self.data_dir),
            "STALLSCOPE_DB_CONNECTIONS": "2",
            "STALLSCOPE_WORKERS": "2",
            "STALLSCOPE_SHUTDOWN_TIMEOUT": "20",
        })
        env.update(self.extra_env)
        return env

    def start(self, expect_db=True):
        self.port = self.port or free_port()
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([*self.wrapper, str(BIN), "serve"], env=self.env(),
                                     stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"stallscope serve exited {self.proc.returncode}"
                            f"\n{self.log()[-3000:]}")
            try:
                r = self.request("GET", "/healthz")
                if r.status == 200 or not expect_db:
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        pytest.fail(f"stallscope serve not ready\n{self.log()[-3000:]}")

    def log(self):
        return self.log_path.read_text(errors="replace")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if not self.alive():
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"stallscope serve ignored {sig}\n{self.log()[-3000:]}")

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def connection(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=timeout)

    def request(self, method, path, body=None, headers=None, token=None,
                key=None, timeout=60):
        """One request on a fresh connection; BODY is bytes or a Path."""
        headers = dict(headers or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if key:
            headers["X-Stallscope-Key"] = key
        conn = self.connection(timeout)
        try:
            if isinstance(body, Path):
                with open(body, "rb") as f:
                    headers["Content-Length"] = str(body.stat().st_size)
                    conn.request(method, path, body=f, headers=headers)
            else:
                conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            return Reply(resp.status, dict(resp.getheaders()), resp.read())
        finally:
            conn.close()

    def upload(self, app, body, token=None, name=None):
        path = f"/api/v1/apps/{app['app']}/dsyms"
        if name:
            path += f"?name={name}"
        return self.request("POST", path, body=body,
                            token=token or app["upload_token"])

    def list_dsyms(self, app, token=None):
        """Every debug file of APP, following next_cursor."""
        items, cursor = [], None
        while True:
            path = f"/api/v1/apps/{app['app']}/dsyms?limit=2"
            if cursor:
                path += f"&cursor={cursor}"
            r = self.request("GET", path, token=token or app["upload_token"])
            assert r.status == 200, r
            items += r.json["dsyms"]
            cursor = r.json["next_cursor"]
            if cursor is None:
                return items

    def stored_files(self):
        """{relative path: sha256} of every file under debug/ and
        symcaches/."""
        out = {}
        for top in ("debug", "symcaches"):
            root = self.data_dir / top
            for p in sorted(root.rglob("*")) if root.exists() else []:
                if p.is_file():
                    out[str(p.relative_to(self.data_dir))] = \
                        hashlib.sha256(p.read_bytes()).hexdigest()
        return out

    def temp_files(self):
        return sorted(p.name for p in (self.data_dir / "tmp").iterdir())


@pytest.fixture(scope="session")
def tmp_root():
    # Under /tmp and world-traversable: the postgres user must reach the
    # cluster directory inside it.
    d = Path(tempfile.mkdtemp(prefix="stallscope-it-", dir="/tmp"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def cluster(tmp_root):
    c = Cluster(tmp_root / "pg")
    c.start()
    yield c
    c.stop()


@pytest.fixture(scope="session")
def db(cluster):
    url = cluster.create_db("stallscope_it")
    migrate(url)
    return url


_server_numbers = itertools.count()


def _new_server(db_url, tmp_root, env=None, name=None):
    """A Server (not started) with its own data dir and log under
    TMP_ROOT."""
    name = name or f"server-{next(_server_numbers)}"
    (tmp_root / name).mkdir(parents=True, exist_ok=True)
    return Server(db_url, tmp_root / name / "data", tmp_root / f"{name}.log",
                  env)


@pytest.fixture(scope="session")
def server(db, tmp_root):
    s = _new_server(db, tmp_root, name="main").start()
    yield s
    assert s.stop() == 0, s.log()[-3000:]


@pytest.fixture
def make_server(db, tmp_root):
    """Factory for extra servers (own data dir, env overrides); each is
    stopped at the end of the test."""
    made = []

    def make(env=None, db_url=None, start=True):
        s = _new_server(db_url or db, tmp_root, env)
        made.append(s)
        return s.start() if start else s

    yield make
    for s in made:
        if s.alive():
            assert s.stop() == 0, s.log()[-3000:]


@pytest.fixture(scope="session")
def manifest():
    path = FIXTURES / "manifest.json"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make fixtures`")
    return json.loads(path.read_text())


def fixture_of(manifest, kind, role="lib", **match):
    """The first manifest entry of KIND (and ROLE, and other fields)."""
    for f in manifest["files"]:
        if f["kind"] == kind and f.get("role") == role and \
                all(f.get(k) == v for k, v in match.items()):
            return f
    pytest.fail(f"no {kind} fixture with role {role} {match} in the manifest")


def fixture_path(entry):
    return FIXTURES / entry["path"]


def dwarfdump_uuids(path):
    """{(UUID, arch)} of a Mach-O file or of every file in a zip, as
    llvm-dwarfdump --uuid reports them."""
    path = Path(path)
    if zipfile.is_zipfile(path):
        out = set()
        with tempfile.TemporaryDirectory() as d, zipfile.ZipFile(path) as z:
            for i, name in enumerate(z.namelist()):
                if name.endswith("/"):
                    continue
                target = Path(d) / str(i)
                target.write_bytes(z.read(name))
                out |= dwarfdump_uuids(target)
        return out
    p = run([LLVM_BIN / "llvm-dwarfdump", "--uuid", path], check=False)
    found = set()
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "UUID:":
            found.add((parts[1].upper(), parts[2].strip("()")))
    return found


def slices_of(reply):
    return {(f["uuid"], f["arch"]) for f in reply.json["files"]}


def make_zip(path, entries, compression=zipfile.ZIP_DEFLATED):
    """Writes a zip of ENTRIES ({name: bytes}) to PATH."""
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return path
