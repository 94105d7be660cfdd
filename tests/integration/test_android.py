"""Issue 44: Matrix TraceCanary (Android) over HTTP on real PostgreSQL —
method mappings uploaded and listed, envelopes of every kind stored with
the right kind, duration and frames, reports waiting for their build's
mapping and moved when it comes, sampling, quota and whitelist as for
native reports, and bad elements refused on their own. The expected
answers are computed here from the inputs (android_util.py)."""

import gzip
import time

import pytest

from android_util import (DISPATCH, Mapping, culprit_of, envelope, evil, fps, heaviest_path,
                          issue_line, post_matrix, startup, upload_mapping)
from conftest import assert_storage_consistent, create_app, psql, stallscope
from ingest_util import allow_everyone, report


def wait_until(cond, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.2)
    return cond()


@pytest.fixture(scope="module")
def mapping():
    return Mapping.generated(400, seed=44)


@pytest.fixture(scope="module")
def app(server, db, mapping):
    a = create_app(db)
    allow_everyone(server, a)
    r = upload_mapping(server, a, mapping)
    assert r.status == 201, r
    return a


# A slow method under the dispatch root: 1 → 2 is the heavy branch.
SLOW = [(0, DISPATCH, 1, 1006), (1, 1, 1, 1000), (2, 2, 1, 900), (3, 4, 2, 700),
        (2, 3, 1, 50), (1, 5, 1, 6)]
ANR = [(0, DISPATCH, 1, 5200), (1, 7, 1, 5100), (2, 8, 1, 5000)]
STARTUP = [(0, 10, 1, 12000), (1, 11, 1, 8000), (1, 12, 1, 4000)]
SIMPLE = (" \n|*\t\tat com.example.app.Feed:load(42)\n"
          "|*\t\tat com.example.app.Feed:refresh(17)\n"
          "|*\t\tat android.os.Handler:dispatchMessage(106)\n")
WHOLE = ("android.os.MessageQueue.nativePollOnce(Native Method)\n"
         "com.example.app.Cache.read(Cache.java:88)\n"
         "com.example.app.Home.onResume(Home.java:31)\n"
         "android.app.Activity.performResume(Activity.java:8000)\n")


def java_frames(rep, thread=0):
    return rep["threads"][thread]["frames"]


def check_path(rep, mapping, lines):
    """The report's main thread is the heaviest path, innermost first,
    each id named by the mapping, with its ms and count."""
    want = heaviest_path(lines)
    got = java_frames(rep)
    assert [f["method_id"] for f in got] == [m for m, _, _ in want]
    assert [(f["ms"], f["count"]) for f in got] == [(ms, c) for _, ms, c in want]
    assert [f["frames"][0]["function"] for f in got] == [mapping.readable(m) for m, _, _ in want]
    assert all(f["status"] == "symbolicated" for f in got)
    assert rep["frames"] == [mapping.identity(m) for m, _, _ in want][:4]
    assert not rep["pending"]


def accepted_ids(r):
    assert r.status == 202, r
    return [a.get("id") for a in r.json["accepted"]]


def test_every_kind_stored_with_kind_duration_and_frames(server, app, mapping):
    elements = [
        evil("NORMAL", SLOW, cost=1006),
        evil("ANR", ANR, cost=5200, thread_stack=SIMPLE,
             processPriority=10, processNice=-10, isProcessForeground=True,
             memory={"dalvik_heap": 1, "native_heap": 2, "vm_size": 3}),
        evil("LAG", thread_stack=WHOLE, isProcessForeground=True),
        evil("STARTUP", STARTUP, cost=12000, subType=1),
        evil("PRIORITY_MODIFIED", thread_stack=WHOLE, processPriority=5),
        issue_line(evil("SIGNAL_ANR", thread_stack=WHOLE, when=1700000000001)),
    ]
    r = post_matrix(server, app, envelope(elements))
    ids = accepted_ids(r)
    assert len(ids) == 6 and r.json["rejected"] == []
    reps = [report(server, app, i) for i in ids]
    assert [x["kind"] for x in reps] == ["slow_method", "anr", "lag", "slow_startup",
                                         "thread_policy", "anr"]
    assert [x["duration_ms"] for x in reps] == [1006, 5200, None, 12000, None, None]
    assert all(x["source"] == "matrix" for x in reps)
    # Matrix's own key and the element itself are kept with the report.
    assert [x.get("client_key") for x in reps] == ["5|", "8|", None, "12|", None, None]
    assert reps[1]["matrix"] == elements[1]
    check_path(reps[0], mapping, SLOW)
    check_path(reps[1], mapping, ANR)
    check_path(reps[3], mapping, STARTUP)
    # An ANR with both keeps its threadStack beside the stack it is grouped by.
    simple = java_frames(reps[1], 1)
    assert [(f["frames"][0]["function"], f["frames"][0].get("line")) for f in simple] == [
        ("com.example.app.Feed.load", 42), ("com.example.app.Feed.refresh", 17),
        ("android.os.Handler.dispatchMessage", 106)]
    # threadStack only: its frames are the stack, already names.
    lag = java_frames(reps[2])
    assert [(f["frames"][0]["function"], f["frames"][0].get("file"), f["frames"][0].get("line"))
            for f in lag] == [
        ("android.os.MessageQueue.nativePollOnce", None, None),
        ("com.example.app.Cache.read", "Cache.java", 88),
        ("com.example.app.Home.onResume", "Home.java", 31),
        ("android.app.Activity.performResume", "Activity.java", 8000)]
    assert reps[2]["frames"] == ["java!android.os.MessageQueue.nativePollOnce",
                                 "java!com.example.app.Cache.read",
                                 "java!com.example.app.Home.onResume",
                                 "java!android.app.Activity.performResume"]
    # The culprit: the innermost frame outside the platform's packages.
    groups = server.request("GET", f"/api/v1/apps/{app['app']}/groups?kind=lag",
                            token=app["admin_token"]).json["groups"]
    assert [g["culprit"]["frame"] for g in groups] == ["java!com.example.app.Cache.read"]
    groups = server.request("GET", f"/api/v1/apps/{app['app']}/groups?kind=slow_method",
                            token=app["admin_token"]).json["groups"]
    want = heaviest_path(SLOW)
    assert [g["culprit"]["frame"] for g in groups] == [
        culprit_of(mapping, [m for m, _, _ in want])]
    assert_storage_consistent(server.db_url, app["app"])


def test_bad_elements_refused_with_reasons_the_rest_stored(server, app):
    elements = [
        {"tag": "Trace_Unknown", "time": 1},
        evil("WHATEVER", SLOW, cost=10),
        {**evil("NORMAL", SLOW, cost=10), "stack": "0,1,1,10\nnot,a,line\n"},
        evil("NORMAL", [(0, 1048575, 1, 10)], cost=10),
        evil("NORMAL", SLOW, cost=-1),
        evil("NORMAL", SLOW, cost=3600001),
        evil("NORMAL", SLOW, cost=1006, when=1700000000999),
        startup(-5),
    ]
    r = post_matrix(server, app, envelope(elements))
    assert r.status == 202, r
    assert len(r.json["accepted"]) == 1
    rejected = r.json["rejected"]
    assert len(rejected) == 7
    messages = [x["error"]["message"] for x in rejected]
    for i, m in zip([0, 1, 2, 3, 4, 5, 7], messages):
        assert f"reports[{i}]" in m, messages
    assert rejected[0]["error"]["code"] == "unsupported_report_type"
    assert rejected[1]["error"]["code"] == "unsupported_report_type"
    assert all(x["error"]["code"] == "bad_field" for x in rejected[2:]), rejected
    # A whole body without a build cannot pick a mapping: 400.
    bad = envelope([evil("NORMAL", SLOW, cost=10)])
    del bad["build"]
    r = post_matrix(server, app, bad)
    assert r.status == 400 and "build" in r.json["error"]["message"], r


def test_reports_wait_for_their_builds_mapping_then_move(server, db, app):
    """Before the mapping of build 200: waiting, named java!#ID, listed as a
    missing mapping; within seconds of its upload: named, regrouped, and
    every counter exact."""
    late = Mapping.generated(40, seed=200, prefix="com.example.late")
    lines = [(0, DISPATCH, 1, 900), (1, 21, 1, 880), (2, 22, 1, 800)]
    later = [(d, m, c, ms + 50) for d, m, c, ms in lines]
    r = post_matrix(server, app, envelope([evil("NORMAL", lines, cost=900),
                                           evil("NORMAL", later, cost=950, when=2)],
                                          version="2.0", build="200"))
    ids = accepted_ids(r)
    reps = [report(server, app, i) for i in ids]
    assert all(x["pending"] for x in reps)
    assert reps[0]["frames"] == [f"java!#{m}" for m, _, _ in heaviest_path(lines)]
    assert [f["status"] for f in java_frames(reps[0])] == ["missing_symbols"] * 3
    missing = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms/missing",
                             token=app["admin_token"]).json["missing"]
    (row,) = [m for m in missing if m["kind"] == "method_mapping"]
    assert (row["build"], row["app_versions"], row["reports"], row["name"]) == (
        "200", ["2.0"], 2, "methodMapping.txt")
    before = psql(db, "SELECT count(DISTINCT key1) FROM reports WHERE id IN"
                      f" ({ids[0]}, {ids[1]})")
    assert before == "1"

    r = upload_mapping(server, app, late, version="2.0", build="200")
    assert r.status == 201, r
    assert wait_until(lambda: not any(report(server, app, i)["pending"] for i in ids))
    for i, sent in zip(ids, (lines, later)):
        check_path(report(server, app, i), late, sent)
    # The call tree moved with them, their durations too (schema/051).
    key1 = report(server, app, ids[0])["key1"]
    assert tree_path(server, app, key1) == [
        (late.identity(m), 2, 2 * ms + 50) for m, ms, _ in reversed(heaviest_path(lines))]
    missing = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms/missing",
                             token=app["admin_token"]).json["missing"]
    assert [m for m in missing if m["kind"] == "method_mapping"] == []
    assert_storage_consistent(server.db_url, app["app"])


def test_two_builds_same_ids_each_its_own_mapping(server, app):
    a = Mapping.generated(30, seed=301, prefix="com.example.alpha")
    b = Mapping.generated(30, seed=302, prefix="com.example.beta")
    assert upload_mapping(server, app, a, version="3.0", build="301").status == 201
    assert upload_mapping(server, app, b, version="3.0", build="302").status == 201
    lines = [(0, 5, 1, 800), (1, 6, 1, 790)]
    ra = post_matrix(server, app, envelope([evil("NORMAL", lines, cost=800)],
                                           version="3.0", build="301"))
    rb = post_matrix(server, app, envelope([evil("NORMAL", lines, cost=800, when=3)],
                                           version="3.0", build="302"))
    check_path(report(server, app, accepted_ids(ra)[0]), a, lines)
    check_path(report(server, app, accepted_ids(rb)[0]), b, lines)


def test_mapping_upload_idempotent_listed_gzip_and_refusals(server, app, mapping):
    again = upload_mapping(server, app, mapping)
    assert again.status == 200 and again.json["mapping"]["status"] == "unchanged", again
    gz = Mapping.generated(25, seed=9, prefix="com.example.gz")
    r = upload_mapping(server, app, gz, version="9.0", build="900", body=gzip.compress(gz.text()))
    assert r.status == 201 and r.json["mapping"]["methods"] == len(gz.methods), r
    listed = server.request("GET", f"/api/v1/apps/{app['app']}/method-mappings",
                            token=app["admin_token"])
    assert listed.status == 200, listed
    pairs = {(m["app_version"], m["build"]): m["methods"] for m in listed.json["mappings"]}
    assert pairs[("1.0", "100")] == len(mapping.methods)
    assert pairs[("9.0", "900")] == len(gz.methods)
    assert upload_mapping(server, app, mapping, body=b"\x00\x01 not a mapping").status == 400
    r = server.request("POST", f"/api/v1/apps/{app['app']}/method-mappings?app_version=1.0",
                       body=mapping.text(), token=app["upload_token"])
    assert r.status == 400 and r.json["error"]["code"] == "bad_query", r
    r = server.request("POST", f"/api/v1/apps/{app['app']}/method-mappings?app_version=1&build=1",
                       body=mapping.text(), token=app["ingest_key"])
    assert r.status in (401, 403), r


def test_sampling_quota_and_whitelist_as_for_native_reports(server, db, mapping):
    a = create_app(db)
    assert upload_mapping(server, a, mapping).status == 201
    cfg = server.request("PUT", f"/api/v1/apps/{a['app']}/config",
                         body=b'{"sample_rate": 0, "daily_quota": 2}', token=a["admin_token"])
    assert cfg.status == 200, cfg
    r = post_matrix(server, a, envelope([evil("NORMAL", SLOW, cost=800)], user="nobody"))
    assert r.status == 202 and r.json["accepted"] == [], r
    assert [x["error"]["code"] for x in r.json["rejected"]] == ["not_sampled"]
    w = server.request("PUT", f"/api/v1/apps/{a['app']}/whitelist/vip", body=b"{}",
                       token=a["admin_token"])
    assert w.status in (200, 201), w
    r = post_matrix(server, a, envelope([evil("NORMAL", SLOW, cost=800, when=t)
                                         for t in (1, 2, 3)], user="vip"))
    assert len(accepted_ids(r)) == 3  # the whitelist lifts the quota too
    cfg = server.request("PUT", f"/api/v1/apps/{a['app']}/config",
                         body=b'{"sample_rate": 1, "daily_quota": 2}', token=a["admin_token"])
    r = post_matrix(server, a, envelope([evil("NORMAL", SLOW, cost=800, when=t)
                                         for t in (1, 2, 3)], user="someone"))
    assert len(r.json["accepted"]) == 2, r
    assert [x["error"]["code"] for x in r.json["rejected"]] == ["quota_exhausted"]
    # The same envelope again: stored once (the elements' keys).
    again = post_matrix(server, a, envelope([evil("NORMAL", SLOW, cost=800, when=t)
                                             for t in (1, 2)], user="someone"))
    assert [x["id"] for x in again.json["accepted"]] == [x["id"] for x in r.json["accepted"]]


def tree_path(server, app, key1, query=""):
    tree = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{key1}/tree{query}",
                          token=app["admin_token"]).json
    node, path = tree["root"], []
    while node.get("children"):
        node = node["children"][0]
        path.append((node["frame"], node["count"], node["ms"]))
    return path


def test_call_tree_sums_ms_per_node(server, db, app, mapping):
    # One path, other durations in each report: one stack, its durations
    # summed per node (schema/051).
    runs = [[(0, DISPATCH, 1, 2000 + k), (1, 30, 1, 1990 + k), (2, 31, 1, 1500 + k),
             (2, 32, 1, 400)] for k in (0, 7, 30)]
    r = post_matrix(server, app, envelope([evil("NORMAL", lines, cost=2000, when=t)
                                           for t, lines in zip((11, 12, 13), runs)],
                                          user="tree"))
    ids = accepted_ids(r)
    rep = report(server, app, ids[0])
    key1 = rep["key1"]
    paths = [list(reversed(heaviest_path(lines))) for lines in runs]
    assert tree_path(server, app, key1) == [
        (mapping.identity(m), 3, sum(p[d][1] for p in paths))
        for d, (m, _, _) in enumerate(paths[0])]
    # The scan (a kind filter reads the reports' own durations) agrees.
    assert tree_path(server, app, key1, "?kind=slow_method") == tree_path(server, app, key1)
    # Each report still shows its own durations.
    for i, lines in zip(ids, runs):
        check_path(report(server, app, i), mapping, lines)
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    assert psql(db, "SELECT count(DISTINCT stack_at(symbolized_stacks, 2)) FROM reports"
                f" WHERE app_id = {app_id} AND key1 = '{key1}'") == "1"
    assert psql(db, "SELECT count(*), sum(reports) FROM group_stack_days"
                f" WHERE app_id = {app_id} AND key1 = '{key1}'") == "1|3"
    # `stallscope check` holds the tree's durations (every frame's, in total)
    # to the reports'.
    assert_storage_consistent(server.db_url, app["app"])
    where = f" WHERE app_id = {app_id} AND key1 = '{key1}'"
    psql(db, "UPDATE group_stack_days SET ms = ms_add(ms, '{5}')" + where)
    p = stallscope("check", "--app", app["app"], db_url=server.db_url, check=False)
    assert p.returncode != 0 and "call tree: app " in p.stdout, p.stdout
    total = sum(ms for path in paths for _, ms, _ in path)
    assert f"3 reports, {total} ms" in p.stdout, p.stdout
    assert f"3 + 0 reports, {total + 5} + 0 ms" in p.stdout, p.stdout
    psql(db, "UPDATE group_stack_days SET ms = ms_add(ms, '{-5}')" + where)
    assert_storage_consistent(server.db_url, app["app"])


def test_trace_of_an_android_report_nests_its_heaviest_path(server, app, mapping):
    r = post_matrix(server, app, envelope([evil("NORMAL", SLOW, cost=1006, when=77)]))
    (rid,) = accepted_ids(r)
    t = server.request("GET", f"/api/v1/reports/{rid}/trace", token=app["admin_token"])
    assert t.status == 200, t
    begun = [e["name"] for e in t.json["traceEvents"] if e["ph"] == "B"]
    assert begun == [mapping.readable(m) for m, _, _ in reversed(heaviest_path(SLOW))]


def test_durations_add_per_frame(db):
    """The call tree's sums of durations (schema/051): element-wise, a
    NULL array or element counting as none, arrays of other lengths (a
    lost stack's reports) padded."""
    assert psql(db, "SELECT ms_add('{1,NULL,3}', '{10,20}'), ms_add(NULL, '{5}'),"
                    " ms_add('{5}', NULL), ms_add(NULL, NULL) IS NULL") == "{11,20,3}|{5}|{5}|t"
    assert psql(db, "SELECT ms_sum('[[1,null,3],null,[10,20],[100,null,null,4]]'),"
                    " ms_sum('[null]') IS NULL, ms_sum('[[null]]')") == "{111,20,3,4}|t|{NULL}"
