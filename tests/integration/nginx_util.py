"""docker/nginx.conf made runnable here by Debian's nginx (issue 43, item
4): the compose service names of its upstream mapped to loopback ports,
and everything nginx writes (pid, logs, request bodies) in a temp dir, so
neither root nor /var is needed. Nothing else of the file changes: the
limits, timeouts and routes tested are the ones shipped."""
import os
import re
import subprocess
import time
from pathlib import Path

from conftest import REPO

NGINX = "/usr/sbin/nginx"
CONF = REPO / "docker/nginx.conf"
UPSTREAM_SERVER = re.compile(r"^(\s*server\s+)([A-Za-z0-9.-]+):(\d+)(\s)", re.M)


def upstream_servers(text):
    """[(name, port)] of the `server` lines in the upstream block."""
    return [(m[2], int(m[3])) for m in UPSTREAM_SERVER.finditer(text)]


def render(directory, upstream, listen=None):
    """A copy of docker/nginx.conf in DIRECTORY with UPSTREAM ({compose
    name: "127.0.0.1:PORT"}) for its servers and LISTEN ("127.0.0.1:PORT")
    for port 80; returns its path. Fails on a name UPSTREAM lacks."""
    directory = Path(directory)
    for sub in ("body", "proxy", "logs"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    text = CONF.read_text()

    def swap(m):
        return m[1] + upstream[m[2]] + m[4]
    text = UPSTREAM_SERVER.sub(swap, text)
    if listen:
        text, n = re.subn(r"^(\s*)listen 80;", rf"\1listen {listen};", text, flags=re.M)
        assert n == 1, "docker/nginx.conf no longer listens on port 80"
    text = text.replace("access_log /dev/stdout", f"access_log {directory}/logs/access.log")
    # Where nginx spools request bodies and replies: its compiled-in
    # /var/lib/nginx is root's.
    text = re.sub(r"^http \{", "http {\n    client_body_temp_path %s/body;\n"
                  "    proxy_temp_path %s/proxy;" % (directory, directory), text,
                  count=1, flags=re.M)
    if os.geteuid() == 0:
        # Workers would run as nobody, who cannot enter the temp dir.
        text = "user root;\n" + text
    path = directory / "nginx.conf"
    path.write_text(text)
    return path


def command(conf, *args):
    d = Path(conf).parent
    return [NGINX, "-p", str(d), "-c", str(conf), "-e", str(d / "logs/error.log"),
            "-g", f"pid {d}/nginx.pid;", *args]


def check(conf):
    """`nginx -t` on CONF: the CompletedProcess."""
    return subprocess.run(command(conf, "-t"), capture_output=True, text=True, timeout=60)


class Nginx:
    """nginx in the foreground on CONF; stop() ends it."""

    def __init__(self, conf):
        self.conf = Path(conf)
        log = open(self.conf.parent / "logs/stderr.log", "ab")
        self.proc = subprocess.Popen(command(conf, "-g", "daemon off;"),
                                     stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def access_log(self):
        path = self.conf.parent / "logs/access.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def error_log(self):
        parts = []
        for name in ("stderr.log", "error.log"):
            path = self.conf.parent / "logs" / name
            if path.exists():
                parts.append(path.read_text(errors="replace"))
        return "\n".join(parts)

    def wait_ready(self, probe, seconds=30):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.error_log()
            try:
                if probe():
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"nginx not ready\n{self.error_log()}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
