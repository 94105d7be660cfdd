"""payloads.py — the request bodies of bench/load.sh's mixed load, written as
a Lua table for bench/load/mixed.lua (wrk), and sent once each to check
that every one is accepted before the load starts.

    payloads.py LUA_OUT BASE_URL

Environment: INGEST_KEY, LLVM_BIN, STALLSCOPE_FIXTURES (its manifest's
first thin dSYM, which bench/load.sh uploads), STALLSCOPE_FORMATS (real
MetricKit trees and KSCrash reports).

Every format the server reads, in the shapes the integration tests send
(tests/integration/ingest_util.py builds them from the fixture dSYM's
real addresses, so they are symbolized) and as real clients wrote them
(/work/shared/formats): native reports alone and in batches of 10,
MetricKit payloads of one and of four hangs, KSCrash reports alone and in
arrays of 5, .ips files. A body is a template: its static parts and the
places where each request puts a fresh report id (RID), a user (USER) or
a MetricKit entry's pid (PID, which keeps the entry's idempotency key
fresh). For the gzip'ed kinds each static part is also deflated here
(raw deflate, sync-flushed to a byte boundary); mixed.lua puts the fresh
values between them as stored blocks and adds the CRC: a real gzip body
per request without compressing in Lua.
"""
import gzip
import itertools
import json
import os
import random
import re
import sys
import urllib.error
import urllib.request
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests/integration"))
from ingest_util import Image, ips, kscrash, metrickit, native  # noqa: E402

FORMATS = Path(os.environ.get("STALLSCOPE_FORMATS", "../shared/formats"))
FIXTURES = Path(os.environ.get("STALLSCOPE_FIXTURES", "build/fixtures"))
SLOT = re.compile(r'"@(RID|USER|PID)@"')
# Stacks per kind: distinct groups, so the dashboard reads have rows.
VARIANTS = 6


def image():
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    return Image(next(f for f in manifest["files"] if f["kind"] == "dwarf"))


def stacks(img):
    fns = img.by_function
    return [[fns[(3 * i + j) % len(fns)] for j in range(3)] for i in range(VARIANTS)]


def real_metrickit_entry(name):
    tree = json.loads((FORMATS / "metrickit" / name).read_text())
    return {"callStackTree": tree,
            "diagnosticMetaData": {"appVersion": "8.0.1", "appBuildVersion": "1234",
                                   "osVersion": "iPhone OS 17.2 (21C62)",
                                   "deviceType": "iPhone14,2", "hangDuration": "2.5 sec",
                                   "pid": "@PID@"}}


def fixture_metrickit_entry(img, stack):
    entry = metrickit(img, stack)["hangDiagnostics"][0]
    entry["diagnosticMetaData"]["pid"] = "@PID@"
    return entry


def real_kscrash(name):
    r = json.loads((FORMATS / "kscrash" / name).read_text())
    r["report"]["id"] = "@RID@"
    r["user"] = {"user_id": "@USER@"}
    return r


def payload(kind, i, img, stack):
    """The JSON (or .ips bytes) of KIND's variant I."""
    rid, user = "@RID@", "@USER@"
    if kind == "native":
        return native(rid, img, stack, user=user)
    if kind == "native-batch":
        return {"reports": [native(rid, img, stack[k % 3:] + stack[:k % 3], user=user)
                            for k in range(10)]}
    if kind == "metrickit":
        entry = real_metrickit_entry("per-thread.json") if i % 2 else \
            fixture_metrickit_entry(img, stack)
        return {"timeStampBegin": "2026-11-20 10:00:00 +0000",
                "timeStampEnd": "2026-11-20 10:05:00 +0000", "hangDiagnostics": [entry]}
    if kind == "metrickit-multi":
        entries = [fixture_metrickit_entry(img, stack), real_metrickit_entry("per-thread.json"),
                   real_metrickit_entry("not-per-thread.json"),
                   real_metrickit_entry("tree-unknown-fields.json")]
        return {"timeStampBegin": "2026-11-20 10:00:00 +0000",
                "timeStampEnd": "2026-11-20 10:05:00 +0000", "hangDiagnostics": entries}
    if kind == "kscrash":
        return real_kscrash("MainThreadDeadlock.json") if i == 0 else \
            kscrash(rid, img, stack, user=user)
    if kind == "kscrash-array":
        return [kscrash(rid, img, stack[k % 3:] + stack[:k % 3], user=user) for k in range(4)] + \
            [real_kscrash("MainThreadDeadlock.json")]
    if kind == "ips":
        return ips(rid, img, stack)
    raise ValueError(kind)


# name, route, share of all requests (%), gzip'ed, user in a header
KINDS = [
    ("native", "/api/v1/ingest", 10, False, False),
    ("native", "/api/v1/ingest", 10, True, False),
    ("native-batch", "/api/v1/ingest", 10, True, False),
    ("native-batch", "/api/v1/ingest", 4, False, False),
    ("metrickit", "/api/v1/ingest/metrickit", 6, False, True),
    ("metrickit-multi", "/api/v1/ingest/metrickit", 8, True, True),
    ("kscrash", "/api/v1/ingest/kscrash", 6, False, False),
    ("kscrash-array", "/api/v1/ingest/kscrash", 8, True, False),
    ("ips", "/api/v1/ingest/ips", 8, False, True),
    ("ips", "/api/v1/ingest/ips", 10, True, True),
]


def template(body):
    """[(static text, slot name or None)] of BODY with its placeholders."""
    text = body.decode() if isinstance(body, bytes) else json.dumps(body)
    # An .ips file is two JSON documents: its slots are quoted alike.
    parts, last = [], 0
    for m in SLOT.finditer(text):
        quote = '' if m[1] == "PID" else '"'
        parts.append((text[last:m.start()] + quote, m[1]))
        last = m.end() - len(quote)
    parts.append((text[last:], None))
    return parts


def deflated(text):
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    return z.compress(text.encode()) + z.flush(zlib.Z_SYNC_FLUSH)


def lua_string(data):
    if isinstance(data, str):
        data = data.encode()
    out = []
    for b in data:
        c = chr(b)
        out.append(c if 32 <= b < 127 and c not in '"\\' else "\\%03d" % b)
    return '"' + "".join(out) + '"'


def fill(parts, counter):
    """A template's text with fresh values, for the check below."""
    out = []
    for text, slot in parts:
        out.append(text)
        if slot:
            n = next(counter)
            out.append(f"check-{os.getpid()}-{n}" if slot == "RID" else
                       f"u-{n % 50}" if slot == "USER" else str(n))
    return "".join(out).encode()


def check(base, kinds, key):
    """Sends every variant once (with fresh values); exits on a refusal."""
    counter = itertools.count(random.randrange(1 << 40))
    for (name, route, _, gz, user_header), variants in kinds:
        for parts in variants:
            body = fill(parts, counter)
            headers = {"X-Stallscope-Key": key}
            if gz:
                body = gzip.compress(body)
                headers["Content-Encoding"] = "gzip"
            if user_header:
                headers["X-Stallscope-User"] = "u-check"
            req = urllib.request.Request(base + route, data=body, headers=headers,
                                         method="POST")
            try:
                with urllib.request.urlopen(req, timeout=120) as r:
                    status, reply = r.status, r.read()
            except urllib.error.HTTPError as e:
                status, reply = e.code, e.read()
            rejected = json.loads(reply).get("rejected") if status == 202 else None
            if status != 202 or rejected:
                sys.exit(f"payloads: {name} {'gzip' if gz else 'plain'} -> {status} {reply[:300]}")


def main():
    out, base = sys.argv[1], sys.argv[2]
    img = image()
    kinds = []
    for spec in KINDS:
        name = spec[0]
        kinds.append((spec, [template(payload(name, i, img, s))
                             for i, s in enumerate(stacks(img))]))
    check(base, kinds, os.environ["INGEST_KEY"])
    lines = ["-- generated by bench/load/payloads.py", "return {"]
    for (name, route, weight, gz, user_header), variants in kinds:
        lines.append(f"  {{name={lua_string(name + ('-gzip' if gz else ''))}, "
                     f"path={lua_string(route)}, weight={weight}, gzip={str(gz).lower()}, "
                     f"user_header={str(user_header).lower()}, variants={{")
        for parts in variants:
            texts = ", ".join(lua_string(t) for t, _ in parts)
            slots = ", ".join(lua_string(s or "") for _, s in parts)
            zs = ", ".join(lua_string(deflated(t)) for t, _ in parts) if gz else ""
            lines.append(f"    {{text={{{texts}}}, slot={{{slots}}}, z={{{zs}}}}},")
        lines.append("  }},")
    lines.append("}")
    Path(out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
