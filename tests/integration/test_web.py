"""GET / and /web/{file}: the dashboard's files as built into the binary,
with the headers that keep a page showing untrusted report data safe."""

import re
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "web"
# A static import or re-export of an ES module: `import … from './x.js'`,
# `export … from './x.js'`, `import './x.js'`.
IMPORT = re.compile(
    rb"""^[ \t]*(?:(?:import|export)\b[^;'"]*?\bfrom[ \t]*|import[ \t]*)['"]([^'"]+)['"]""", re.M)


def test_page_and_files_are_the_current_web_folder(server):
    files = {p.name: p.read_bytes() for p in WEB.iterdir() if p.is_file()}
    assert {"index.html", "app.js", "style.css"} <= set(files)
    page = server.request("GET", "/")
    assert page.status == 200, page
    assert page.raw == files["index.html"]
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    types = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
    for name, body in files.items():
        if name == "index.html":
            continue
        r = server.request("GET", f"/web/{name}")
        assert r.status == 200 and r.raw == body, (name, r)
        assert r.headers["Content-Type"] == types[Path(name).suffix]
    # The page loads its script and style from /web/, nothing from elsewhere.
    assert b'src="/web/app.js"' in page.raw and b'href="/web/style.css"' in page.raw
    assert b'<script type="module" src="/web/app.js">' in page.raw
    assert b"http://" not in page.raw and b"https://" not in page.raw


def test_headers_confine_the_page_to_its_own_files(server):
    r = server.request("GET", "/")
    csp = r.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert "style-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Referrer-Policy"] == "no-referrer"
    assert r.headers["Cache-Control"] == "no-cache"


def test_unchanged_files_revalidate_with_304(server):
    first = server.request("GET", "/web/app.js")
    etag = first.headers["ETag"]
    again = server.request("GET", "/web/app.js", headers={"If-None-Match": etag})
    assert again.status == 304 and again.raw == b""
    assert again.headers["ETag"] == etag
    for also in [f"W/{etag}", f'"0", {etag}', '"0" ,W/' + etag, "*"]:
        r = server.request("GET", "/web/app.js", headers={"If-None-Match": also})
        assert r.status == 304, (also, r)
    stale = server.request("GET", "/web/app.js", headers={"If-None-Match": '"0", W/"1"'})
    assert stale.status == 200 and stale.raw == first.raw
    assert server.request("GET", "/web/style.css").headers["ETag"] != etag


def test_unknown_files_and_methods(server):
    for path in ["/web/nope.js", "/web/index.html", "/web/", "/web/../server/main.c",
                 "/web/app.js/x", "/index.html", "/web/lib/dom.js", "/web/./lib-dom.js"]:
        r = server.request("GET", path)
        assert r.status == 404, (path, r)
        assert r.error_code in ("not_found", "no_route"), (path, r)
    r = server.request("POST", "/", body=b"{}")
    assert r.status == 405 and "GET" in r.headers["Allow"]


def test_every_module_app_js_imports_is_served_as_javascript(server):
    """The dashboard is ES modules the browser fetches one by one: each
    import must name a file the binary serves, with a JavaScript MIME type
    (browsers refuse a module served as anything else), and every .js in
    web/ must be reached from app.js (no file left out of the page)."""
    modules = sorted(p.name for p in WEB.glob("*.js"))
    assert len(modules) > 10, modules  # the entry, its libraries and one file per view
    for view in ["groups", "group", "reports", "report", "missing", "whitelist", "config", "signin"]:
        assert f"view-{view}.js" in modules, view
    reached, todo, graph = set(), ["app.js"], {}
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        r = server.request("GET", f"/web/{name}")
        assert r.status == 200, (name, r)
        assert r.headers["Content-Type"] == "text/javascript; charset=utf-8", (name, r)
        assert r.raw == (WEB / name).read_bytes(), name
        for spec in IMPORT.findall(r.raw):
            spec = spec.decode()
            # Relative to /web/<name>, as the browser resolves it; one folder.
            assert spec.startswith("./") and "/" not in spec[2:], (name, spec)
            todo.append(spec[2:])
            graph.setdefault(name, set()).add(spec[2:])
    assert reached == set(modules), set(modules) ^ reached
    # One way: the entry imports views, views import libraries, a library
    # never a view; and no two modules import each other, even through others.
    for name, deps in graph.items():
        if name.startswith("lib-"):
            assert not any(d.startswith("view-") or d == "app.js" for d in deps), (name, deps)
        if name.startswith("view-"):
            assert "app.js" not in deps, name
    done = set()

    def acyclic(name, path):
        assert name not in path, path + [name]
        if name not in done:
            for d in graph.get(name, ()):
                acyclic(d, path + [name])
            done.add(name)

    acyclic("app.js", [])


def test_every_file_revalidates_with_its_own_etag(server):
    etags = {}
    for p in sorted(WEB.iterdir()):
        if not p.is_file() or p.name == "index.html":
            continue
        first = server.request("GET", f"/web/{p.name}")
        etag = first.headers["ETag"]
        again = server.request("GET", f"/web/{p.name}", headers={"If-None-Match": etag})
        assert again.status == 304 and again.raw == b"", (p.name, again)
        assert again.headers["Content-Security-Policy"] == first.headers["Content-Security-Policy"]
        etags[p.name] = etag
    # The tag is of the content: two different files never share one.
    assert len(set(etags.values())) == len(etags), etags
