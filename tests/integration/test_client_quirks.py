"""Issue 22 item 3: what real clients write and strict JSON refuses is
stored, over HTTP in every format — duplicate keys (the last value wins,
as in JSON.parse and Python's json), integers beyond 64 bits where no used
field holds them (Apple's .ips registers), commas before a closing bracket
(KSCrash's reader skips them), KSCrash's minimal recrash reports, iOS 14's
"20 secs." — and the .ips types are mapped by Apple's table. Expected
values come from the payloads built here and from llvm-symbolizer, never
from the server."""

import json

import pytest

from conftest import create_app, fixture_of
from ingest_util import (LOAD, Image, allow_everyone, expected_frames, fresh_id,
                         frames_of, ips, kscrash, metrickit, native, post, report)

# A value Apple writes in .ips register dumps: above 2^63, beyond int64.
BEYOND_INT64 = 18446744069414586112


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


@pytest.fixture(scope="module")
def app(server, db, image):
    a = create_app(db)
    r = server.upload(a, image.dwarf)
    assert r.status in (200, 201), r
    allow_everyone(server, a)
    return a


@pytest.fixture(scope="module")
def stack(image):
    f = image.by_function
    return [image.inlined[0], f[1], f[2]]


def dup_key(text, obj_start, key, first_value):
    """TEXT (JSON) with KEY: FIRST_VALUE inserted as the first member of
    the object that begins at the first occurrence of OBJ_START, so KEY
    appears twice there and the payload's own value comes last."""
    at = text.index(obj_start) + len(obj_start)
    return text[:at] + json.dumps(key) + ":" + json.dumps(first_value) + "," + text[at:]


def accepted_report(server, app, r):
    assert r.status == 202, r
    (acc,) = r.json["accepted"]
    return report(server, app, acc["id"])


def assert_stack(rep, image, stack, thread=0):
    assert frames_of(rep["threads"][thread]["frames"]) == expected_frames(image, stack)


def test_native_duplicate_keys_last_wins(server, app, image, stack):
    text = json.dumps(native(fresh_id(), image, stack, os_version="17.2",
                             duration_ms=2500, app_version="8.0.1"))
    assert text.startswith("{")
    for key, first in (("os_version", "16.0"), ("duration_ms", 99), ("app_version", "1.0")):
        text = dup_key(text, "{", key, first)
    assert text.count('"os_version"') == 2
    rep = accepted_report(server, app, post(server, app, "/api/v1/ingest", text.encode()))
    assert (rep["os_version"], rep["duration_ms"], rep["app_version"]) == ("17.2", 2500, "8.0.1")
    assert_stack(rep, image, stack)


def test_native_numbers_beyond_64_bits(server, app, image, stack):
    """Unused fields may hold them; a used field still refuses them by name
    (SPEC §4.1: above 2^53 is rejected, not rounded) — not the whole body
    as bad_json."""
    body = native(fresh_id(), image, stack)
    text = json.dumps(body)[:-1] + ', "registers": {"x1": %d}}' % BEYOND_INT64
    rep = accepted_report(server, app, post(server, app, "/api/v1/ingest", text.encode()))
    assert_stack(rep, image, stack)
    body = native(fresh_id(), image, stack)
    body["threads"][0]["frames"][1] = "@BIG@"
    text = json.dumps(body).replace('"@BIG@"', str(BEYOND_INT64))
    r = post(server, app, "/api/v1/ingest", text.encode())
    assert (r.status, r.error_code) == (400, "bad_field"), r
    assert "threads[0].frames[1]: JSON number above 2^53" in r.json["error"]["message"]


def test_kscrash_system_memory_twice(server, app, image, stack):
    """KSCrash's recorder writes system.memory twice ({"size"}, later
    {"usable","free"}); the report is stored, and in the same object a
    duplicated system_version keeps its second value."""
    ks = kscrash(fresh_id(), image, stack)
    ks["system"]["memory"] = {"usable": 16010616832, "free": 3427287040}
    text = json.dumps(ks)
    text = dup_key(text, '"system": {', "memory", {"size": 17179869184})
    text = dup_key(text, '"system": {', "system_version", "16.0")
    assert text.count('"memory"') == 2
    rep = accepted_report(server, app, post(server, app, "/api/v1/ingest/kscrash",
                                            text.encode()))
    assert rep["os_version"] == ks["system"]["system_version"] == "17.2"
    assert rep["kind"] == "stall"
    assert_stack(rep, image, stack)


def test_kscrash_trailing_commas_and_big_registers(server, app, image, stack):
    ks = kscrash(fresh_id(), image, stack)
    ks["crash"]["threads"][0]["registers"] = {"basic": {"x0": "@BIG@"}}
    text = json.dumps(ks).replace('"@BIG@"', str(BEYOND_INT64))
    text = text.replace("}]}}", "},]},}", 1)  # after the last frame, as cut by KSCrash
    assert ",]" in text and ",}" in text
    rep = accepted_report(server, app, post(server, app, "/api/v1/ingest/kscrash",
                                            text.encode()))
    assert_stack(rep, image, stack)
    # Cut off mid-write: refused, as KSCrash's own store drops it.
    r = post(server, app, "/api/v1/ingest/kscrash", text[:len(text) // 2].encode())
    assert (r.status, r.error_code) == (400, "bad_json"), r


def test_kscrash_minimal_recrash_report(server, app, image, stack):
    """As kscrashreport_writeRecrashReport lays it out: the interrupted
    report under recrash_report, then a minimal report whose crash has only
    crashed_thread; stored with that thread's stack."""
    full = kscrash(fresh_id(), image, [image.plain[0]])
    rid = fresh_id()
    crashed = {"backtrace": {"contents": [{"instruction_addr": image.runtime(a, i)}
                                          for i, a in enumerate(stack)], "skipped": 0},
               "index": 7, "name": "KSCrash Exception Handler (Primary)",
               "crashed": True, "current_thread": False}
    minimal = {"recrash_report": full,
               "report": {"id": rid, "type": "minimal", "timestamp": 1700000000000000},
               "crash": {"error": {"type": "mach", "address": 0,
                                   "mach": {"exception": 1, "code": 2}},
                         "crashed_thread": crashed}}
    rep = accepted_report(server, app, post(server, app, "/api/v1/ingest/kscrash", minimal))
    assert rep["kind"] == "crash"
    assert len(rep["threads"]) == 1
    assert_stack(rep, image, stack)
    assert rep["app_version"] == full["system"]["CFBundleShortVersionString"]
    assert rep["device"] == full["system"]["machine"]


def test_metrickit_ios14_duration_and_duplicates(server, app, image, stack):
    mk = metrickit(image, stack)
    meta = mk["hangDiagnostics"][0]["diagnosticMetaData"]
    meta["hangDuration"] = "20 secs."
    text = dup_key(json.dumps(mk), '"diagnosticMetaData": {', "appVersion", "1.0")
    assert text.count('"appVersion"') == 2
    rep = accepted_report(server, app, post(server, app, "/api/v1/ingest/metrickit",
                                            text.encode(), user="mk-14"))
    assert (rep["kind"], rep["duration_ms"]) == ("stall", 20000)
    assert rep["app_version"] == meta["appVersion"] == "8.0.1"
    assert_stack(rep, image, stack)


def test_metrickit_unreadable_duration_keeps_the_hang(server, app, image, stack):
    """A duration that cannot be read leaves it unknown; the hang is stored
    beside the payload's crash instead of being dropped."""
    mk = metrickit(image, stack)
    mk["hangDiagnostics"][0]["diagnosticMetaData"]["hangDuration"] = "a while"
    crash = json.loads(json.dumps(mk["hangDiagnostics"][0]))
    crash["diagnosticMetaData"] = {"appVersion": "8.0.1", "exceptionType": 1, "signal": 11}
    mk["crashDiagnostics"] = [crash]
    r = post(server, app, "/api/v1/ingest/metrickit", mk, user="mk-x")
    assert r.status == 202, r
    assert r.json["rejected"] == []
    kinds = {}
    for acc in r.json["accepted"]:
        rep = report(server, app, acc["id"])
        kinds[rep["kind"]] = rep
    assert set(kinds) == {"stall", "crash"}
    assert kinds["stall"]["duration_ms"] is None
    assert_stack(kinds["stall"], image, stack)


def ips_text(header, body):
    return (json.dumps(header) + "\n" + json.dumps(body)).encode()


def test_ips_crash_registers_beyond_64_bits(server, app, image, stack):
    header, body = (json.loads(x) for x in ips(fresh_id(), image, stack).split(b"\n", 1))
    del body["termination"]
    body["threads"][0]["threadState"] = {
        "x": [{"value": 0}, {"value": "@BIG@"}, {"value": 18446744073709551615}],
        "flavor": "ARM_THREAD_STATE64", "lr": {"value": 13835058057412575236},
        "far": {"value": "@BIG@"}, "pc": {"value": LOAD, "matchesCrashFrame": 1}}
    text = ips_text(header, body).replace(b'"@BIG@"', str(BEYOND_INT64).encode())
    assert str(BEYOND_INT64).encode() in text
    rep = accepted_report(server, app, post(server, app, "/api/v1/ingest/ips", text,
                                            user="ips-u"))
    assert rep["kind"] == "crash"
    assert_stack(rep, image, stack)


def test_ips_409_watchdog_stackshot_is_a_hang(server, app, image, stack):
    """bug_type 409 as Apple writes it: the killed process's threads under
    stackshot.processByPid, frames [imageIndex, offset] into binaryImages
    (whose kernel entry has a base above 2^63)."""
    rid = fresh_id()
    header = {"app_name": "Demo", "timestamp": "2026-11-22 09:15:00.00 +0000",
              "app_version": "8.0.1", "bug_type": "409", "name": "Demo",
              "os_version": "iPhone OS 17.5 (21F79)", "incident_id": rid}
    frames = [[1, image.offset(a, i)] for i, a in enumerate(stack)]
    body = {"modelCode": "iPhone15,2", "bug_type": "409", "pid": 812, "procName": "Demo",
            "termination": {"namespace": "WATCHDOG", "code": 1,
                            "indicator": "monitoring timed out for service"},
            "stackshot": {
                "processByPid": {
                    "1": {"pid": 1, "procname": "launchd",
                          "threadById": {"100": {"id": 100, "userFrames": [[0, 16]]}}},
                    "812": {"pid": 812, "procname": "Demo", "threadById": {
                        "9001": {"id": 9001, "queue": "com.apple.main-thread",
                                 "userFrames": frames, "kernelFrames": [[0, 4096]]},
                        "9002": {"id": 9002, "name": "worker",
                                 "userFrames": [[1, image.offset(image.plain[0], 0)]]}}}},
                "binaryImages": [["B3C4D5E6-F708-3192-A3B4-C5D6E7F80912", "@BIG@", "K"],
                                 [image.uuid, LOAD, "P"]]}}
    text = ips_text(header, body).replace(b'"@BIG@"', str(BEYOND_INT64).encode())
    rep = accepted_report(server, app, post(server, app, "/api/v1/ingest/ips", text,
                                            user="ips-u"))
    assert rep["kind"] == "hang"
    assert rep["device"] == "iPhone15,2"
    assert [t["name"] for t in rep["threads"]] == ["com.apple.main-thread", "worker"]
    assert_stack(rep, image, stack)
    assert_stack(rep, image, [image.plain[0]], thread=1)


@pytest.mark.parametrize("bug_type, body, why", [
    ("298", '{"product":"iPhone14,2","largestProcess":"Demo","processes":'
            '[{"name":"Demo","pid":4242,"rpages":131072,"reason":"per-process-limit"}]}',
     "298 is a Jetsam event (memory pressure), not a stall"),
    ("228", "Event:            Timed Out Runloop Hang\nReason:           "
            "UIKit-runloop-Demo: timeout 9850ms\n\n  Thread 0xf1970    DispatchQueue "
            "\"com.apple.main-thread\"(1)\n  11  ??? (<4C4C443B-5555-3144-A187-670DA53251E7>"
            " + 16544) [0x1000040a0]\n",
     "228 is a third-party hang, whose body is text (spindump), not JSON"),
    ("222", "Event:            Long Runloop Hang\n", "222 is a long run-loop hang"),
    ("223", "Event:            Short Runloop Hang\n", "223 is a short run-loop hang"),
    ("288", '{"processByPid":{}}', "288 is a system-wide stackshot"),
])
def test_ips_types_that_are_no_app_stall_are_refused(server, app, bug_type, body, why):
    header = {"bug_type": bug_type, "incident_id": fresh_id(),
              "os_version": "iPhone OS 17.2 (21C62)"}
    r = post(server, app, "/api/v1/ingest/ips", json.dumps(header).encode() + b"\n" + body.encode())
    assert (r.status, r.error_code) == (400, "unsupported_report_type"), r
    assert why in r.json["error"]["message"]


def test_ips_duplicate_keys_last_wins(server, app, image, stack):
    header, body = ips(fresh_id(), image, stack).split(b"\n", 1)
    header = dup_key(header.decode(), "{", "app_version", "1.0")
    body = dup_key(body.decode(), "{", "modelCode", "iPhone8,1")
    rep = accepted_report(server, app, post(server, app, "/api/v1/ingest/ips",
                                            (header + "\n" + body).encode(), user="ips-u"))
    assert (rep["app_version"], rep["device"]) == ("8.0.1", "iPhone14,2")
    assert rep["kind"] == "hang"
    assert_stack(rep, image, stack)
