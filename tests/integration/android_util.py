"""Matrix TraceCanary inputs for the Android tests (SPEC §13,
../shared/tracecanary/FORMATS.md): method mappings as the Matrix Gradle
plugin writes them, elements as its tracers build them, envelopes as an
app's PluginListener would post them, and what the server should make of
them, computed here independently of the server's code."""

import json
import random

from ingest_util import post

DISPATCH = 1048574
PRIMITIVES = {"Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int",
              "J": "long", "F": "float", "D": "double", "V": "void"}
PLATFORM = ("android.", "java.", "kotlin.", "androidx.", "com.android.")


class Mapping:
    """A methodMapping.txt: id → (access, class, method, descriptor)."""

    def __init__(self, methods):
        self.methods = dict(methods)

    @classmethod
    def generated(cls, n, seed, prefix="com.example.app"):
        rnd = random.Random(seed)
        args = ["", "I", "Landroid.os.Bundle;", "[J", "Ljava.lang.String;I", "ZD",
                "[[Ljava.lang.String;"]
        methods = {}
        for i in range(1, n + 1):
            cls_name = f"{prefix}.feature{i % 7}.Screen{i % 13}" + ("$1" if i % 5 == 0 else "")
            methods[i] = (1, cls_name, f"step{i}", f"({rnd.choice(args)})V")
        methods[DISPATCH] = (1, "android.os.Handler", "dispatchMessage",
                             "(Landroid.os.Message;)V")
        return cls(methods)

    def text(self):
        lines = []
        for i in sorted(self.methods):
            acc, c, m, d = self.methods[i]
            lines.append(f"{i},{acc},{c} {m}" + (f" {d}" if d else ""))
        return ("\n".join(lines) + "\n").encode()

    def linkage(self, mid):
        _, c, m, d = self.methods[mid]
        return f"{c}.{m}{d or ''}"

    def readable(self, mid):
        _, c, m, d = self.methods[mid]
        return f"{c}.{m}" + (readable_args(d) if d else "")

    def identity(self, mid):
        return f"java!{self.linkage(mid)}" if mid in self.methods else f"java!#{mid}"


def readable_args(desc):
    """(Landroid.os.Bundle;I[J)V → (android.os.Bundle, int, long[])."""
    inner = desc[1:desc.index(")")]
    out, i = [], 0
    while i < len(inner):
        dims = 0
        while inner[i] == "[":
            dims, i = dims + 1, i + 1
        if inner[i] == "L":
            end = inner.index(";", i)
            name, i = inner[i + 1:end], end + 1
        else:
            name, i = PRIMITIVES[inner[i]], i + 1
        out.append(name + "[]" * dims)
    return "(" + ", ".join(out) + ")"


def stack_text(lines):
    """Matrix's `stack`: one depth,id,count,ms line per frame, pre-order."""
    return "".join(f"{d},{m},{c},{ms}\n" for d, m, c, ms in lines)


def heaviest_path(lines):
    """Innermost first: from the top level, the child with the most ms
    (the first on a tie) at each level (SPEC §13)."""
    nodes = [{"d": d, "id": m, "ms": ms, "count": c, "kids": []} for d, m, c, ms in lines]
    top, stack = [], []
    for n in nodes:
        while stack and stack[-1]["d"] >= n["d"]:
            stack.pop()
        (stack[-1]["kids"] if stack else top).append(n)
        stack.append(n)
    path, level = [], top
    while level:
        best = max(level, key=lambda n: (max(n["ms"], 0) if n["ms"] <= 3600000 else 0,
                                         -level.index(n)))
        path.append(best)
        level = best["kids"]
    return [(n["id"], n["ms"], n["count"]) for n in reversed(path)]


def evil(detail, lines=None, cost=None, thread_stack=None, key=None, when=1700000000000,
         **extra):
    """A Trace_EvilMethod content object, keys in the tracers' order."""
    e = {"machine": "HIGH", "cpu_app": 0, "mem": 8000000000, "mem_free": 2000000,
         "detail": detail}
    if cost is not None:
        e["cost"] = cost
    e["scene"] = "com.example.app.MainActivity"
    if lines is not None:
        e["stack"] = stack_text(lines)
        e["stackKey"] = key if key is not None else f"{lines[-1][1]}|"
    if thread_stack is not None:
        e["threadStack"] = thread_stack
    e.update(extra)
    e.update({"tag": "Trace_EvilMethod", "process": "com.example.app", "time": when})
    return e


def startup(duration, warm=False, app_create=300, first_activity=500, when=1700000000000):
    return {"machine": "HIGH", "cpu_app": 0, "mem": 8000000000, "mem_free": 2000000,
            "application_create": 0 if warm else app_create,
            "application_create_scene": 159,
            "first_activity_create": 0 if warm else first_activity,
            "startup_duration": duration, "is_warm_start_up": warm,
            "tag": "Trace_StartUp", "process": "com.example.app", "time": when}


LEVELS = ("DROPPED_BEST", "DROPPED_NORMAL", "DROPPED_MIDDLE", "DROPPED_HIGH", "DROPPED_FROZEN")


def fps(scene, frames, dropped, rate, when=1700000000000):
    return {"machine": "HIGH", "cpu_app": 0, "mem": 8000000000, "mem_free": 2000000,
            "scene": scene, "dropLevel": dict(zip(LEVELS, frames)),
            "dropSum": dict(zip(LEVELS, dropped)), "fps": rate,
            "tag": "Trace_FPS", "process": "com.example.app", "time": when}


def issue_line(content, tag=None, key="0", type_="0"):
    """Issue.toString(): tag[%s]type[%d];key[%s];content[%s]."""
    return f"tag[{tag or content['tag']}]type[{type_}];key[{key}];content[{json.dumps(content)}]"


def envelope(reports, version="1.0", build="100", user="u-1", os_version="13",
             device="Pixel 7"):
    body = {"app_version": version, "build": build, "os_version": os_version,
            "device": device, "reports": reports}
    if user is not None:
        body["user_id"] = user
    return body


def post_matrix(server, app, body, user=None):
    return post(server, app, "/api/v1/ingest/matrix", body, user=user)


def upload_mapping(server, app, mapping, version="1.0", build="100", body=None, token=None):
    return server.request(
        "POST", f"/api/v1/apps/{app['app']}/method-mappings?app_version={version}&build={build}",
        body=body if body is not None else mapping.text(),
        token=token or app["upload_token"])


def culprit_of(mapping, path_ids):
    """The innermost frame outside the platform's packages."""
    for mid in path_ids:
        if mid not in mapping.methods:
            return mapping.identity(mid)
        if not mapping.linkage(mid).startswith(PLATFORM):
            return mapping.identity(mid)
    return None
