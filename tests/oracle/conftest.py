"""Shared helpers of the oracle tests: `stallscope symbolicate` against
`llvm-symbolizer --inlining` (our test oracle, SPEC §3.5) on the fixtures of
tests/fixtures/build.sh and the corpus in ../shared/corpus.

Environment (set by `make oracle`; the defaults suit a run from the repo
root): STALLSCOPE_BIN (build/stallscope), STALLSCOPE_FIXTURES
(build/fixtures), LLVM_BIN (/usr/lib/llvm-14/bin). A missing binary, fixture
tree or tool is a test failure, never a skip.

Equivalence of one address (what every oracle comparison uses):
  llvm's `Symbol` list with a single entry whose FunctionName and FileName are
  empty and Line is 0 means "no answer" and equals our `"frames":[]`;
  otherwise both lists have the same length and, frame by frame,
  function == FunctionName, file == FileName (absent == ""), line == Line
  (absent == 0). Columns are compared and counted as a statistic only: they
  never fail a test (llvm-symbolizer's column choice for rows that start
  mid-statement is not part of the contract).
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("STALLSCOPE_SHARED") or REPO.parent / "shared")
CORPUS = SHARED / "corpus"


def _env_path(name, default):
    value = os.environ.get(name)
    if not value:
        return default
    p = Path(value)
    if p.is_absolute():
        return p
    # `make` runs from the repo root; fall back to the repo when pytest was
    # started elsewhere.
    return (Path.cwd() / p) if (Path.cwd() / p).exists() else REPO / p


STALLSCOPE_BIN = _env_path("STALLSCOPE_BIN", REPO / "build/stallscope")
FIXTURES = _env_path("STALLSCOPE_FIXTURES", REPO / "build/fixtures")
LLVM_BIN = _env_path("LLVM_BIN", Path("/usr/lib/llvm-14/bin"))

# Generous: the slowest call symbolizes ~20,000 addresses under ASan.
TIMEOUT = 600


class HarnessError(Exception):
    """The comparison itself could not be made (tool missing, bad output)."""


def llvm_tool(name):
    p = LLVM_BIN / name
    if not os.access(p, os.X_OK):
        raise HarnessError("%s is missing (scripts/install-deps.sh --test)" % p)
    return str(p)


def require_bin():
    """Path of the stallscope binary; fails the calling test when absent."""
    if not (STALLSCOPE_BIN.is_file() and os.access(STALLSCOPE_BIN, os.X_OK)):
        pytest.fail("STALLSCOPE_BIN %s does not exist or is not executable "
                    "(run `make`)" % STALLSCOPE_BIN, pytrace=False)
    return str(STALLSCOPE_BIN)


# ---- manifest and slices ------------------------------------------------


def load_manifest():
    """The fixtures' manifest.json; raises HarnessError when unusable."""
    path = FIXTURES / "manifest.json"
    try:
        with open(path) as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        raise HarnessError("cannot read %s (run `make fixtures`): %s" % (path, e))
    if not m.get("files"):
        raise HarnessError("%s lists no files" % path)
    return m


class Slice:
    """One slice of one fixture file the CLI can symbolicate.

    `arch` is what to pass as --arch / --default-arch: set for the slices of
    fat files, None for thin files (a thin file must not need it).
    """

    def __init__(self, entry, sl, arch):
        self.entry = entry
        self.slice = sl
        self.path = FIXTURES / entry["path"]
        self.kind = entry["kind"]
        self.arch = arch
        self.slice_arch = sl["arch"]
        self.uuid = sl["uuid"]
        self.has_dwarf = self.kind in ("dwarf", "fat-dwarf")
        self.id = "%s%s" % (entry["path"], ":" + arch if arch else "")

    def __repr__(self):
        return self.id


def symbolicatable_slices(manifest, kinds=("dwarf", "symtab", "fat-dwarf", "fat-symtab")):
    """Every (file, slice) of the manifest the CLI takes as --debug-file.
    Zips are upload-only (SPEC §3.5: a Mach-O/DWARF file or a symcache).
    The Swift-named fixture is compared on its own (test_swift_fixture.py):
    llvm-symbolizer 14 leaves Swift names raw, we demangle them."""
    out = []
    for entry in manifest["files"]:
        if entry["kind"] not in kinds or entry.get("role") == "swift":
            continue
        fat = entry["kind"].startswith("fat-")
        for sl in entry["slices"]:
            out.append(Slice(entry, sl, sl["arch"] if fat else None))
    return out


def parametrize_slices(metafunc, argname, select):
    """pytest_generate_tests helper: one test per selected slice. When the
    manifest cannot be read, a single parameter carrying the error makes the
    test fail instead of silently collecting nothing."""
    if argname not in metafunc.fixturenames:
        return
    try:
        slices = select(load_manifest())
        if not slices:
            raise HarnessError("the manifest has no slice of the kind this test needs")
    except HarnessError as e:
        metafunc.parametrize(argname, [e], ids=["manifest-unavailable"])
        return
    metafunc.parametrize(argname, slices, ids=[s.id for s in slices])


def unwrap(param):
    """The Slice of a parametrized test, or a failure for the error sentinel."""
    if isinstance(param, Exception):
        pytest.fail(str(param), pytrace=False)
    return param


# ---- Mach-O facts from LLVM's tools ------------------------------------


def _run(argv, stdin=None, timeout=TIMEOUT):
    return subprocess.run(argv, input=stdin, capture_output=True, text=True,
                          timeout=timeout)


def _arch_flag(path, arch):
    return ["--arch=" + arch] if arch else []


def text_section(path, arch=None):
    """(address, size) of __TEXT,__text per llvm-objdump --section-headers."""
    r = _run([llvm_tool("llvm-objdump"), "--section-headers"] + _arch_flag(path, arch) + [str(path)])
    if r.returncode != 0:
        raise HarnessError("llvm-objdump failed on %s: %s" % (path, r.stderr.strip()))
    found = []
    for line in r.stdout.splitlines():
        p = line.split()
        if len(p) >= 4 and p[1] == "__text" and p[0].isdigit():
            found.append((int(p[3], 16), int(p[2], 16)))
    if len(found) != 1:
        raise HarnessError("%s: expected one __text section, found %r" % (path, found))
    return found[0]


def text_vmaddr(path, arch=None):
    """vmaddr of the __TEXT segment (the image base) per llvm-objdump."""
    r = _run([llvm_tool("llvm-objdump"), "--macho", "--private-headers"]
             + _arch_flag(path, arch) + [str(path)])
    if r.returncode != 0:
        raise HarnessError("llvm-objdump failed on %s: %s" % (path, r.stderr.strip()))
    lines = r.stdout.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "segname __TEXT":
            m = re.match(r"\s*vmaddr (0x[0-9a-f]+)", lines[i + 1])
            if m:
                return int(m.group(1), 16)
    raise HarnessError("%s: no __TEXT segment" % path)


def text_addresses(sl):
    """Every byte address of the slice's __text."""
    return text_range(sl.path, sl.arch)


def text_range(path, arch=None):
    start, size = text_section(path, arch)
    return list(range(start, start + size))


def nm_symbols(path, arch=None):
    """[(address, raw name)] of the symbols llvm-nm places in __TEXT,__text,
    sorted by address (stabs and undefined symbols excluded)."""
    argv = [llvm_tool("llvm-nm"), "-n", "--defined-only", "-s", "__TEXT", "__text"]
    if arch:
        argv.append("--arch=" + arch)
    r = _run(argv + [str(path)])
    if r.returncode != 0:
        raise HarnessError("llvm-nm failed on %s: %s" % (path, r.stderr.strip()))
    out = []
    for line in r.stdout.splitlines():
        m = re.match(r"([0-9a-f]{8,16}) [a-zA-Z] (.+)$", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2)))
    return out


def demangle(names):
    """llvm-cxxfilt's demangling of each name (unchanged when not mangled)."""
    if not names:
        return []
    r = _run([llvm_tool("llvm-cxxfilt")], stdin="".join(n + "\n" for n in names))
    out = r.stdout.split("\n")[: len(names)]
    if r.returncode != 0 or len(out) != len(names):
        raise HarnessError("llvm-cxxfilt failed: %s" % r.stderr.strip())
    return out


def uuid_of(path, arch=None):
    """{arch: UUID} per llvm-dwarfdump --uuid."""
    argv = [llvm_tool("llvm-dwarfdump"), "--uuid"]
    if arch:
        argv.append("--arch=" + arch)
    r = _run(argv + [str(path)])
    out = {}
    for m in re.finditer(r"UUID: ([0-9A-F-]{36}) \(([^)]+)\)", r.stdout):
        out[m.group(2)] = m.group(1)
    if not out:
        raise HarnessError("no UUID in %s: %s" % (path, r.stderr.strip()))
    return out


# ---- the two symbolizers -----------------------------------------------


def llvm_symbolize(path, addrs, arch=None):
    """llvm-symbolizer's JSON objects for ADDRS (one process, stdin)."""
    argv = [llvm_tool("llvm-symbolizer"), "--output-style=JSON", "--inlining",
            "--obj=" + str(path)]
    if arch:
        argv.append("--default-arch=" + arch)
    r = _run(argv, stdin="".join("0x%x\n" % a for a in addrs))
    lines = r.stdout.splitlines()
    if r.returncode != 0 or len(lines) != len(addrs):
        raise HarnessError("llvm-symbolizer on %s: status %d, %d lines for %d addresses: %s"
                           % (path, r.returncode, len(lines), len(addrs), r.stderr.strip()[:500]))
    objs = [json.loads(line) for line in lines]
    for o in objs:
        if "Error" in o:
            raise HarnessError("llvm-symbolizer on %s: %s" % (path, o["Error"]))
    return objs


def run_cli(args, stdin=None, timeout=TIMEOUT):
    """Runs `stallscope ARGS...`; returns the CompletedProcess (text mode)."""
    return _run([require_bin()] + [str(a) for a in args], stdin=stdin, timeout=timeout)


def symbolicate_args(path, arch=None, extra=()):
    args = ["symbolicate", "--debug-file", str(path)]
    if arch:
        args += ["--arch", arch]
    return args + list(extra)


def parse_jsonl(text, what="stallscope"):
    out = []
    for i, line in enumerate(text.splitlines()):
        try:
            out.append(json.loads(line))
        except ValueError as e:
            pytest.fail("%s printed a line that is not JSON (line %d: %r): %s"
                        % (what, i + 1, line[:200], e), pytrace=False)
    return out


def symbolicate(path, addrs, arch=None, extra=(), inputs=None):
    """Our CLI's JSON objects for ADDRS, all on stdin in one process.
    INPUTS overrides the text of each stdin line (e.g. decimal)."""
    if inputs is None:
        inputs = ["0x%x" % a for a in addrs]
    r = run_cli(symbolicate_args(path, arch, extra), stdin="".join(s + "\n" for s in inputs))
    if r.returncode != 0:
        pytest.fail("stallscope %s: exit status %d, stderr: %s"
                    % (" ".join(symbolicate_args(path, arch, extra)), r.returncode,
                       r.stderr.strip()[:500]), pytrace=False)
    objs = parse_jsonl(r.stdout)
    if len(objs) != len(inputs):
        pytest.fail("stallscope printed %d lines for %d addresses" % (len(objs), len(inputs)),
                    pytrace=False)
    return objs


# ---- comparison ---------------------------------------------------------


def llvm_frames(obj):
    """llvm's answer as [(function, file, line, column)], [] for no answer."""
    syms = obj["Symbol"]
    if (len(syms) == 1 and not syms[0]["FunctionName"] and not syms[0]["FileName"]
            and syms[0]["Line"] == 0):
        return []
    return [(s["FunctionName"], s["FileName"], s["Line"], s["Column"]) for s in syms]


def our_frames(obj):
    frames = obj.get("frames")
    if not isinstance(frames, list):
        return None
    out = []
    for f in frames:
        if not isinstance(f, dict):
            return None
        out.append((f.get("function", ""), f.get("file", ""), f.get("line", 0),
                    f.get("column", 0)))
    return out


def same_answer(ours, theirs):
    """(equal ignoring columns, number of frames whose column differs)."""
    if ours is None or len(ours) != len(theirs):
        return False, 0
    cols = 0
    for a, b in zip(ours, theirs):
        if a[:3] != b[:3]:
            return False, 0
        cols += a[3] != b[3]
    return True, cols


def fmt_frames(frames):
    if frames is None:
        return "<malformed>"
    if not frames:
        return "[]"
    return " < ".join("%s (%s:%s:%s)" % (f[0], f[1] or "?", f[2], f[3]) for f in frames)


class Comparison:
    """Our answers against llvm's for one list of addresses."""

    def __init__(self, name, addrs, ours, theirs, echo=True):
        self.name = name
        self.total = len(addrs)
        self.mismatches = []  # (address, ours, llvm)
        self.column_diffs = 0
        self.frames = 0
        for a, o, t in zip(addrs, ours, theirs):
            of, tf = our_frames(o), llvm_frames(t)
            ok, cols = same_answer(of, tf)
            if ok and echo and o.get("address") != "0x%x" % a:
                ok = False
                of = [("<address echoed as %r>" % o.get("address"), "", 0, 0)]
            if ok:
                self.column_diffs += cols
                self.frames += len(tf)
            else:
                self.mismatches.append((a, of, tf))

    @property
    def matched(self):
        return self.total - len(self.mismatches)

    @property
    def ratio(self):
        return self.matched / self.total if self.total else 1.0

    def table(self, limit=20):
        rows = ["%s: %d of %d addresses differ (columns differ on %d matched frames)"
                % (self.name, len(self.mismatches), self.total, self.column_diffs)]
        for a, of, tf in self.mismatches[:limit]:
            rows.append("  0x%x" % a)
            rows.append("    stallscope: " + fmt_frames(of))
            rows.append("    llvm:       " + fmt_frames(tf))
        if len(self.mismatches) > limit:
            rows.append("  … %d more" % (len(self.mismatches) - limit))
        return "\n".join(rows)
