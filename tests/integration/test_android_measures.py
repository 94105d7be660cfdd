"""Issue 44, SPEC §13: Matrix's Trace_StartUp and Trace_FPS elements, posted
to POST /api/v1/ingest/matrix, are kept as per-day aggregates
(schema/050) and read back through GET /api/v1/apps/{app}/startup and
…/frames.

The expectations are computed here from the elements sent: counts, sums,
means and maxima exactly; p50/p90 by the fine histogram's documented rule
(schema/functions/fine_percentiles.sql): the nearest rank's bucket k, for
durations in (1.04^(k-1), 1.04^k] ms, answered as round(2 × 1.04^k ÷ 2.04),
or as the longest duration in the longest one's bucket."""

import concurrent.futures
import json
import math
import random
import urllib.parse
from fractions import Fraction

from conftest import create_app, psql, stallscope
from ingest_util import allow_everyone

DAY = 86400
NOON = 1795176000  # 2026-11-20T12:00:00Z
TODAY = "2026-11-20"
LEVELS = ("best", "normal", "middle", "high", "frozen")
MATRIX_LEVELS = tuple("DROPPED_" + level.upper() for level in LEVELS)


def startup(ms, warm=False, app_create=None, activity_create=None, at=0):
    """A Trace_StartUp element; AT makes it distinct (Matrix's "time")."""
    return {"tag": "Trace_StartUp", "startup_duration": ms,
            "application_create": 0 if warm else app_create,
            "first_activity_create": 0 if warm else activity_create,
            "application_create_scene": 100, "is_warm_start_up": warm,
            "time": NOON * 1000 + at}


def fps_element(scene, levels, sums, fps, at=0):
    return {"tag": "Trace_FPS", "scene": scene,
            "dropLevel": dict(zip(MATRIX_LEVELS, levels)),
            "dropSum": dict(zip(MATRIX_LEVELS, sums)), "fps": fps,
            "time": NOON * 1000 + at}


def send(server, app, reports, version="1.0", user="u1"):
    body = {"app_version": version, "build": "100", "user_id": user, "os_version": "13",
            "device": "Pixel 7", "reports": reports}
    r = server.request("POST", "/api/v1/ingest/matrix", body=json.dumps(body).encode(),
                       key=app["ingest_key"])
    assert r.status == 202, r
    assert r.json["rejected"] == [], r.json
    return r.json


def get(server, app, route, **q):
    query = urllib.parse.urlencode(q)
    r = server.request("GET", f"/api/v1/apps/{app['app']}/{route}" + ("?" + query if q else ""),
                       token=app["admin_token"])
    assert r.status == 200, r
    return r.json


def fine_bucket(ms):
    return -1 if ms <= 0 else math.ceil(math.log(ms) / math.log(1.04))


def percentile(durations, p):
    """The nearest-rank percentile P (a Fraction) as fine_percentiles
    answers it."""
    rank = math.ceil(p * len(durations))
    k = fine_bucket(sorted(durations)[rank - 1])
    if k < 0:
        return 0
    if k == fine_bucket(max(durations)):
        return max(durations)
    return round(2 * 1.04 ** k / 2.04)


def side(startups):
    """The reply's cold or warm object for STARTUPS [(ms, app, activity)]."""
    if not startups:
        return {"count": 0, "p50_ms": None, "p90_ms": None, "mean_ms": None, "max_ms": None,
                "application_create_mean_ms": None, "first_activity_create_mean_ms": None}
    ms = [s[0] for s in startups]
    apps = [s[1] for s in startups if s[1] is not None]
    acts = [s[2] for s in startups if s[2] is not None]
    return {"count": len(ms), "p50_ms": percentile(ms, Fraction(1, 2)),
            "p90_ms": percentile(ms, Fraction(9, 10)), "mean_ms": sum(ms) / len(ms),
            "max_ms": max(ms),
            "application_create_mean_ms": sum(apps) / len(apps) if apps else None,
            "first_activity_create_mean_ms": sum(acts) / len(acts) if acts else None}


def test_startup_counts_percentiles_and_resends(db, make_server):
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    allow_everyone(server, app)
    # Cold startups of 1.0 spread over several buckets (and a duration
    # repeated), warm ones of 1.0, and cold ones only of 2.0.
    cold = [(ms, 200 + i, 400 + i) for i, ms in
            enumerate([1234, 980, 2210, 1500, 1501, 760, 5030, 1234, 3100, 870, 1999])]
    warm = [(ms, None, None) for ms in (310, 295, 640, 402)]
    cold2 = [(ms, 150, 350) for ms in (700, 720, 9000)]
    elements = [startup(ms, app_create=a, activity_create=f, at=i)
                for i, (ms, a, f) in enumerate(cold)]
    elements += [startup(ms, warm=True, at=100 + i) for i, (ms, _, _) in enumerate(warm)]
    # The same element twice in one batch counts once.
    reply = send(server, app, elements + [elements[0]])
    assert len(reply["accepted"]) >= len(elements)
    send(server, app, [startup(ms, app_create=a, activity_create=f, at=200 + i)
                       for i, (ms, a, f) in enumerate(cold2)], version="2.0")

    want_versions = [{"app_version": "1.0", "cold": side(cold), "warm": side(warm)},
                     {"app_version": "2.0", "cold": side(cold2), "warm": side([])}]
    want_days = [dict(v, day=TODAY) for v in want_versions]
    got = get(server, app, "startup")
    assert got == {"versions": want_versions, "days": want_days}
    # The figures are not all trivial: a percentile answered from a
    # bucket's middle, not a sent duration.
    assert got["versions"][0]["cold"]["p50_ms"] not in [c[0] for c in cold]

    # A resent envelope (a client retrying) adds nothing.
    send(server, app, elements)
    assert get(server, app, "startup") == got
    assert get(server, app, "startup", version="2.0") == \
        {"versions": want_versions[1:], "days": want_days[1:]}
    assert get(server, app, "startup", version="") == {"versions": [], "days": []}
    assert get(server, app, "startup", **{"from": "2026-11-21"}) == {"versions": [], "days": []}


def frames_row(scene, version, elements):
    levels = [sum(e[0][i] for e in elements) for i in range(5)]
    sums = [sum(e[1][i] for e in elements) for i in range(5)]
    return {"scene": scene, "app_version": version, "elements": len(elements),
            "frames": dict(zip(LEVELS, levels)), "dropped": dict(zip(LEVELS, sums)),
            "frozen_share": levels[4] / sum(levels) if sum(levels) else None,
            "mean_fps": sum(e[2] for e in elements) / len(elements)}


def test_frames_by_scene_worst_first(db, make_server):
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    allow_everyone(server, app)
    main = [([100, 5, 2, 1, 0], [0, 18, 20, 30, 0], 55.5),
            ([300, 9, 0, 3, 1], [0, 30, 0, 80, 50], 58.25)]
    detail = [([50, 2, 1, 4, 6], [0, 6, 10, 100, 300], 31.0)]
    quiet = [([900, 0, 0, 0, 0], [0, 0, 0, 0, 0], 60.0)]
    main2 = [([80, 1, 1, 2, 0], [0, 3, 9, 50, 0], 50.5)]
    send(server, app, [fps_element("com.app.MainActivity", *e, at=i) for i, e in enumerate(main)]
         + [fps_element("com.app.DetailActivity", *e, at=10) for e in detail]
         + [fps_element("com.app.Quiet", *e, at=11) for e in quiet])
    send(server, app, [fps_element("com.app.MainActivity", *e, at=20) for e in main2],
         version="2.0")
    # Worst first: frozen + high frames 10 (Detail), 5 (Main 1.0), 2 (Main
    # 2.0), 0 (Quiet).
    want = [frames_row("com.app.DetailActivity", "1.0", detail),
            frames_row("com.app.MainActivity", "1.0", main),
            frames_row("com.app.MainActivity", "2.0", main2),
            frames_row("com.app.Quiet", "1.0", quiet)]
    assert get(server, app, "frames") == {"scenes": want}
    assert want[3]["frozen_share"] == 0 and want[0]["mean_fps"] == 31.0
    # Resent: nothing more.
    send(server, app, [fps_element("com.app.MainActivity", *e, at=i) for i, e in enumerate(main)])
    assert get(server, app, "frames") == {"scenes": want}
    assert get(server, app, "frames", scene="com.app.MainActivity") == {"scenes": want[1:3]}
    assert get(server, app, "frames", version="2.0") == {"scenes": want[2:3]}
    assert get(server, app, "frames", limit=2) == {"scenes": want[:2]}
    assert get(server, app, "frames", scene="nope") == {"scenes": []}


def test_bad_filters_and_credentials(db, make_server):
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    for route, query in (("startup", "from=yesterday"), ("startup", "to=2026-13-01"),
                         ("frames", "from=2026-11"), ("frames", "limit=0"),
                         ("frames", "limit=501")):
        r = server.request("GET", f"/api/v1/apps/{app['app']}/{route}?{query}",
                           token=app["admin_token"])
        assert r.status == 400 and r.error_code == "bad_query", (route, query, r)
    for route in ("startup", "frames"):
        r = server.request("GET", f"/api/v1/apps/{app['app']}/{route}", key=app["ingest_key"])
        assert r.status in (401, 403), r
    assert get(server, app, "startup") == {"versions": [], "days": []}
    assert get(server, app, "frames") == {"scenes": []}


def test_days_default_to_retention_and_purge_removes_old_days(db, make_server):
    app = create_app(db)
    # Servers purge at start too: keep a month while the old day's
    # elements arrive.
    old = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON - 10 * DAY)})
    allow_everyone(old, app, retention_days=30)
    send(old, app, [startup(900, app_create=100, activity_create=300, at=1),
                    fps_element("com.app.Main", [10, 1, 0, 0, 1], [0, 3, 0, 0, 60], 40.0, at=2)])
    today = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    send(today, app, [startup(1200, app_create=100, activity_create=300, at=3),
                      fps_element("com.app.Main", [20, 0, 0, 0, 0], [0] * 5, 60.0, at=4)])
    every = get(today, app, "startup", **{"from": "2026-11-01"})
    assert [(d["day"], d["cold"]["max_ms"]) for d in every["days"]] == \
        [("2026-11-10", 900), (TODAY, 1200)]
    assert every["versions"][0]["cold"]["count"] == 2
    assert get(today, app, "startup") == every
    assert get(today, app, "frames", **{"from": "2026-11-01"})["scenes"][0]["elements"] == 2

    # retention_days 7: 2026-11-10 is outside the default range, today
    # inside, and the purge deletes the old day's rows.
    allow_everyone(today, app, retention_days=7)
    got = get(today, app, "startup")
    assert [(d["day"], d["cold"]["count"], d["cold"]["max_ms"]) for d in got["days"]] == \
        [(TODAY, 1, 1200)]
    stallscope("purge", db_url=db, extra_env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    after = get(today, app, "startup", **{"from": "2026-11-01"})
    assert after == got
    (scene,) = get(today, app, "frames", **{"from": "2026-11-01"})["scenes"]
    assert scene["elements"] == 1 and scene["mean_fps"] == 60.0
    for table in ("measure_keys", "startup_days", "frame_days"):
        assert psql(db, f"SELECT DISTINCT t.day FROM {table} t JOIN apps a ON a.id = t.app_id"
                        f" WHERE a.bundle_id = '{app['app']}'") == TODAY, table


def test_concurrent_resends_count_once(db, make_server):
    """The same elements sent by several clients at once, in different
    orders (so their batches touch the same keys and day rows in different
    orders), are counted once, and every batch is answered."""
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    allow_everyone(server, app)
    durations = [500 + 37 * i for i in range(20)]
    elements = [startup(ms, app_create=100, activity_create=200, at=i)
                for i, ms in enumerate(durations)]
    scenes = [(f"com.app.S{i % 4}", [10 + i, 1, 0, i % 3, i % 2], [0, 3, 0, 30, 50], 50.0 + i)
              for i in range(12)]
    elements += [fps_element(s, lv, sm, fps, at=100 + i) for i, (s, lv, sm, fps)
                 in enumerate(scenes)]

    def client(seed):
        mine = list(elements)
        random.Random(seed).shuffle(mine)
        return send(server, app, mine)

    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        list(pool.map(client, range(12)))
    (version,) = get(server, app, "startup")["versions"]
    assert version["cold"] == side([(ms, 100, 200) for ms in durations])
    got = {s["scene"]: s for s in get(server, app, "frames")["scenes"]}
    for name in {s[0] for s in scenes}:
        mine = [(lv, sm, fps) for s, lv, sm, fps in scenes if s == name]
        assert got[name] == frames_row(name, "1.0", mine)
