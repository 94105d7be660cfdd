"""SPEC §10.7's search over an app of more groups than the list's walk
(store/groups.c SEARCHED: the first 500 groups of the page probed in order,
the trigram index read only when that walk neither fills the page nor sees
the whole list). Whichever way a page is found, it is the unsearched list's
order filtered by the pattern, through every cursor, for the groups' own
totals and for a filtered list. Which way is faster is bench/dashboard.sh's
to say (docs/PERFORMANCE.md), not a test's.

The groups are 620 Android lags (SPEC §13: a threadStack is its own frames,
already names), one group each; the expected pages come from the names the
test gave them and the unsearched list, never from the search."""

import time
import urllib.parse

import pytest

from android_util import envelope, evil, post_matrix
from conftest import create_app
from ingest_util import allow_everyone

GROUPS = 620


def method(i):
    """Every group's innermost method: all in com.walk; "needle" in 7,
    "sparse" in every 11th (57: fewer than a page in the first 500),
    "dense" in every 5th (124: a page well within them)."""
    name = "needle" if i % 97 == 13 else "run"
    tags = "".join(t for t, n in (("Sparse", 11), ("Dense", 5)) if i % n == 0)
    return f"com.walk.feature{i % 7}.Screen{i}{tags}.{name}"


@pytest.fixture(scope="module")
def walked(server, db):
    app = create_app(db)
    allow_everyone(server, app)
    for start in range(0, GROUPS, 155):
        elements = [evil("LAG", thread_stack=f"{method(i)}(Screen{i}.java:10)\n"
                         "com.walk.Base.dispatch(Base.java:5)\n", isProcessForeground=True)
                    for i in range(start, min(start + 155, GROUPS))]
        r = post_matrix(server, app, envelope(elements, user=f"u-{start}"))
        assert r.status == 202 and not r.json.get("rejected"), r
    order = pages(server, app, limit=200)
    assert len(order) == GROUPS
    return app, order


def page(server, app, **query):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?"
                       + urllib.parse.urlencode(query), token=app["admin_token"])
    assert r.status == 200, r
    return r.json


def pages(server, app, **query):
    """Every group through the cursors, in order: [(key, innermost function)]."""
    seen, cursor = [], None
    while True:
        q = dict(query, **({"cursor": cursor} if cursor else {}))
        reply = page(server, app, **q)
        seen += [(g["key"], g["culprit"]["function"]) for g in reply["groups"]]
        cursor = reply.get("next_cursor")
        if not cursor:
            return seen


@pytest.mark.parametrize("q", ["com.walk", "DENSE", "sparse", "needle", "Screen6"])
def test_search_pages_are_the_list_filtered_in_its_order(server, walked, q):
    app, order = walked
    want = [(k, f) for k, f in order if q.lower() in f.lower()]
    assert want and len(want) <= GROUPS
    assert pages(server, app, q=q, limit=50) == want
    first = page(server, app, q=q, limit=7)["groups"]
    assert [g["key"] for g in first] == [k for k, _ in want[:7]]


@pytest.mark.parametrize("q", ["com.walk", "sparse", "needle"])
def test_filtered_search_pages_are_the_filtered_list_in_its_order(server, walked, q):
    app, _ = walked
    today = time.strftime("%Y-%m-%d", time.gmtime())
    filters = {"kind": "lag", "from": "2020-01-01", "to": today}
    order = pages(server, app, limit=200, **filters)
    assert len(order) == GROUPS
    want = [(k, f) for k, f in order if q.lower() in f.lower()]
    assert pages(server, app, q=q, limit=50, **filters) == want
