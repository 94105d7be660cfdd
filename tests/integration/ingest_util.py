"""Helpers for the ingest, grouping and reprocessing tests: fixture
addresses with llvm-symbolizer's answers, report builders for the four
formats, and the grouping identities SPEC §6 defines, computed here from
llvm-symbolizer's frames (never from the server's)."""

import bisect
import gzip
import json
import re
import subprocess
import uuid as uuidlib

from conftest import LLVM_BIN, FIXTURES

LOAD = 0x104000000  # where the test pretends the image was loaded
# SPEC §10.1's lower bucket edges of the duration histogram, in ms.
EDGES = [0, 250, 500, 1000, 2000, 5000, 10000, 30000]


def text_layout(binary):
    """(__TEXT vmaddr, __text start, __text size) of a Mach-O file."""
    out = subprocess.run([LLVM_BIN / "llvm-objdump", "--macho", "--private-headers",
                          str(binary)], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"segname __TEXT\s+vmaddr (0x[0-9a-f]+)", out)
    base = int(m.group(1), 16)
    sec = subprocess.run([LLVM_BIN / "llvm-objdump", "--section-headers", str(binary)],
                         capture_output=True, text=True, check=True).stdout
    for line in sec.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[1] == "__text":
            return base, int(parts[3], 16), int(parts[2], 16)
    raise AssertionError(f"no __text in {binary}")


def symbolize(dwarf, addrs):
    """llvm-symbolizer's inline chains [(function, file, line)] per file
    address, innermost first ([] when it knows nothing)."""
    p = subprocess.run([LLVM_BIN / "llvm-symbolizer", "--output-style=JSON", "--inlining",
                        f"--obj={dwarf}"], input="\n".join(hex(a) for a in addrs),
                       capture_output=True, text=True, check=True)
    out = []
    for line in p.stdout.splitlines():
        sym = json.loads(line)["Symbol"]
        if len(sym) == 1 and not sym[0]["FunctionName"] and not sym[0]["FileName"] \
                and sym[0]["Line"] == 0:
            out.append([])
        else:
            out.append([(s["FunctionName"], s["FileName"], s["Line"]) for s in sym])
    return out


class Image:
    """A fixture dSYM, its binary's layout and interesting addresses."""

    def __init__(self, entry):
        self.entry = entry
        self.dwarf = FIXTURES / entry["path"]
        self.binary = FIXTURES / entry["binary"]
        self.uuid = entry["slices"][0]["uuid"]
        self.arch = entry["slices"][0]["arch"]
        self.name = entry["image"]
        self.base, self.text, self.size = text_layout(self.binary)
        step = 4 if self.arch.startswith("arm") else 1
        addrs = list(range(self.text, self.text + self.size, step))
        answers = symbolize(self.dwarf, addrs)
        self.inlined = [a for a, s in zip(addrs, answers) if len(s) >= 2]
        self.plain = [a for a, s in zip(addrs, answers) if len(s) == 1]
        # One address per distinct outermost function, for stacks whose
        # frames group apart.
        seen, self.by_function = set(), []
        for a, s in zip(addrs, answers):
            if s and s[-1][0] not in seen:
                seen.add(s[-1][0])
                self.by_function.append(a)

    def runtime(self, file_addr, frame_index):
        """The address a device reports for FILE_ADDR at FRAME_INDEX: frames
        after the first are return addresses, one past the call."""
        return LOAD + file_addr - self.base + (1 if frame_index else 0)

    def offset(self, file_addr, frame_index):
        return self.runtime(file_addr, frame_index) - LOAD


def expected_frames(image, stack):
    """llvm-symbolizer's chains for a stack of file addresses."""
    return symbolize(image.dwarf, stack)


def identities(image_name, chains):
    """SPEC §6 identities of a symbolized stack: image!function per inline
    entry, innermost first."""
    base = image_name.rsplit("/", 1)[-1]
    return [f"{base}!{f}" for chain in chains for (f, _, _) in chain]


def frames_of(report_frames):
    """(function, file, line) chains of a report's symbolized frames."""
    return [[(f["function"], f.get("file", ""), f.get("line", 0)) for f in fr["frames"]]
            for fr in report_frames]


def native(report_id, image, stack, user="u-1", **extra):
    r = {"report_id": report_id, "user_id": user, "kind": "stall", "duration_ms": 2500,
         "app_version": "8.0.1", "os": "iOS", "os_version": "17.2", "device": "iPhone14,2",
         "images": [{"name": image.name, "uuid": image.uuid, "arch": image.arch,
                     "load_address": hex(LOAD), "size": image.base + 0x100000}],
         "threads": [{"name": "main", "main": True,
                      "frames": [hex(image.runtime(a, i)) for i, a in enumerate(stack)]}]}
    r.update(extra)
    return r


def metrickit(image, stack):
    """An MXDiagnosticPayload with one hang whose attributed thread is
    STACK, as a per-thread tree nested leaf first."""
    node = None
    for i in reversed(range(len(stack))):
        frame = {"binaryUUID": image.uuid, "binaryName": image.name, "sampleCount": 1,
                 "offsetIntoBinaryTextSegment": image.offset(stack[i], i),
                 "address": image.runtime(stack[i], i)}
        if node:
            frame["subFrames"] = [node]
        node = frame
    return {"timeStampBegin": "2026-11-20 10:00:00 +0000",
            "timeStampEnd": "2026-11-20 10:05:00 +0000",
            "hangDiagnostics": [{
                "callStackTree": {"callStackPerThread": True, "callStacks": [
                    {"threadAttributed": True, "callStackRootFrames": [node]}]},
                "diagnosticMetaData": {"appVersion": "8.0.1", "appBuildVersion": "1234",
                                       "osVersion": "iPhone OS 17.2 (21C62)",
                                       "deviceType": "iPhone14,2",
                                       "hangDuration": "3 sec"}}]}


def kscrash(report_id, image, stack, user="u-1"):
    """A KSCrash report as Matrix writes a foreground stall (dump 2001)."""
    return {"report": {"id": report_id, "timestamp": "2026-11-20T10:00:00Z"},
            "system": {"CFBundleShortVersionString": "8.0.1", "CFBundleVersion": "1234",
                       "system_name": "iOS", "system_version": "17.2",
                       "machine": "iPhone14,2"},
            "user": {"user_id": user},
            "binary_images": [{"name": f"/private/var/containers/App/{image.name}",
                               "image_addr": LOAD, "image_size": image.base + 0x100000,
                               "uuid": image.uuid, "cpu_type": 16777228,
                               "cpu_subtype": 0}],
            "crash": {"error": {"type": "user", "user_reported": {"name": "2001"}},
                      "threads": [{"index": 0, "dispatch_queue": "com.apple.main-thread",
                                   "backtrace": {"contents": [
                                       {"instruction_addr": image.runtime(a, i)}
                                       for i, a in enumerate(stack)]}}]}}


def ips(report_id, image, stack, reasons=None):
    """An Apple .ips hang file: a one-line header, then the body of a
    crash report (bug_type 309) whose termination is the watchdog's
    0x8badf00d, as iOS writes an app killed while hung (with REASONS, the
    termination's text, when given)."""
    header = {"bug_type": "309", "incident_id": report_id, "app_version": "8.0.1",
              "build_version": "1234", "os_version": "iPhone OS 17.2 (21C62)",
              "timestamp": "2026-11-20 10:00:00.00 +0000"}
    body = {"modelCode": "iPhone14,2",
            "termination": {"namespace": "FRONTBOARD", "code": 0x8badf00d, "flags": 6,
                            **({"reasons": reasons} if reasons else {})},
            "usedImages": [{"base": LOAD, "size": image.base + 0x100000, "uuid": image.uuid,
                            "name": image.name, "arch": image.arch}],
            "threads": [{"triggered": True, "queue": "com.apple.main-thread",
                         "frames": [{"imageIndex": 0, "imageOffset": image.offset(a, i)}
                                    for i, a in enumerate(stack)]}]}
    return (json.dumps(header) + "\n" + json.dumps(body)).encode()


def post(server, app, path, body, user=None, encoding=None):
    headers = {}
    if user:
        headers["X-Stallscope-User"] = user
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    if encoding == "gzip":
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    return server.request("POST", path, body=body, headers=headers, key=app["ingest_key"])


def allow_everyone(server, app, **extra):
    """Sample every user and lift the quota for tests that are not about
    the policy."""
    cfg = {"sample_rate": 1, "daily_quota": 100000}
    cfg.update(extra)
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config",
                       body=json.dumps(cfg).encode(), token=app["admin_token"])
    assert r.status == 200, r


def report(server, app, rid):
    r = server.request("GET", f"/api/v1/reports/{rid}", token=app["admin_token"])
    assert r.status == 200, r
    return r.json


def severity(durations):
    """What a group holding reports of DURATIONS (None: unknown) says of
    them (SPEC §10.1): the bucket of each by bisect over EDGES."""
    known = [d for d in durations if d is not None]
    hist = [0] * len(EDGES)
    for d in known:
        hist[bisect.bisect_right(EDGES, d) - 1] += 1
    return {"stall_ms": sum(known), "max_duration_ms": max(known) if known else None,
            "duration_hist": hist}


def fresh_id():
    return uuidlib.uuid4().hex
