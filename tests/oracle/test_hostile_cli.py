"""Hostile debug files at the CLI (SPEC §9: truncated or lying Mach-O/DWARF).

Mutants of the small fixture (its DWARF file and its dylib) and of the fat
files: truncated at every length that can matter (see truncations(); every
length up to 4096 with STALLSCOPE_HOSTILE_FULL=1), 300 seeded random byte
flips, and load-command / fat-header /
DWARF-header fields set to huge or inconsistent values. For each,
`stallscope symbolicate --debug-file MUTANT 0x4000` and
`stallscope symcache MUTANT -o OUT` must:
  - exit 0 or 1 (no signal, no other status: the arguments are valid),
  - within 10 s,
  - on 1: print exactly one non-empty line on stderr and leave no OUT (and
    no temporary file) behind — symcaches are written atomically;
  - on 0: symbolicate prints one JSON line for 0x4000; symcache leaves an
    OUT that symbolicate then reads with the same rules.
Failing mutants are kept under the test's tmp directory for reproduction.
Runs 2 x CPUs mutants at a time (HOSTILE_WORKERS overrides). Most of the time
is the binary's start-up (~20 ms per run: 45 shared libraries).
"""

import concurrent.futures
import json
import os
import random
import shutil
import struct
import subprocess
import threading

import pytest

from conftest import FIXTURES, load_manifest, require_bin

TIMEOUT = 10
ADDR = "0x4000"


# ---- Mach-O field locations (little-endian 64-bit slices, big-endian fat) ----

LC_SEGMENT_64, LC_SYMTAB, LC_UUID = 0x19, 0x2, 0x1B


def thin_fields(data, base=0):
    """[(name, offset, size)] of the fields worth lying about in the thin
    64-bit Mach-O at BASE."""
    out = [("ncmds", base + 16, 4), ("sizeofcmds", base + 20, 4)]
    ncmds, sizeofcmds = struct.unpack_from("<II", data, base + 16)
    off = base + 32
    end = off + sizeofcmds
    for i in range(ncmds):
        if off + 8 > end:
            break
        cmd, cmdsize = struct.unpack_from("<II", data, off)
        if i < 4 or cmd in (LC_SYMTAB, LC_UUID):
            out.append(("lc%d.cmdsize" % i, off + 4, 4))
        if cmd == LC_SYMTAB:
            for j, f in enumerate(("symoff", "nsyms", "stroff", "strsize")):
                out.append(("symtab." + f, off + 8 + 4 * j, 4))
            symoff, nsyms = struct.unpack_from("<II", data, off + 8)
            if nsyms:
                out.append(("nlist0.n_strx", base + symoff, 4))
                out.append(("nlist0.n_sect", base + symoff + 5, 1))
                out.append(("nlist_last.n_value", base + symoff + 16 * (nsyms - 1) + 8, 8))
        elif cmd == LC_SEGMENT_64:
            seg = data[off + 8: off + 24].rstrip(b"\0").decode("latin-1")
            out += [(seg + ".vmaddr", off + 24, 8), (seg + ".fileoff", off + 40, 8),
                    (seg + ".filesize", off + 48, 8), (seg + ".nsects", off + 64, 4)]
            nsects = struct.unpack_from("<I", data, off + 64)[0]
            for k in range(nsects):
                s = off + 72 + 80 * k
                if s + 80 > end:
                    break
                name = seg + "," + data[s: s + 16].rstrip(b"\0").decode("latin-1")
                out += [(name + ".size", s + 40, 8), (name + ".offset", s + 48, 4)]
                if name == "__TEXT,__text":
                    out.append((name + ".addr", s + 32, 8))
                if name in ("__DWARF,__debug_info", "__DWARF,__debug_line",
                            "__DWARF,__debug_abbrev"):
                    sect_off = struct.unpack_from("<I", data, s + 48)[0]
                    if sect_off:
                        out.append((name + "[0:4]", base + sect_off, 4))
                        out.append((name + "[4:8]", base + sect_off + 4, 4))
                        out.append((name + "[8:12]", base + sect_off + 8, 4))
        off += cmdsize if cmdsize >= 8 else 8
    return out


def fat_fields(data):
    out = [("fat.nfat_arch", 4, 4)]
    n = struct.unpack_from(">I", data, 4)[0]
    for i in range(n):
        a = 8 + 20 * i
        out += [("fat%d.cputype" % i, a, 4), ("fat%d.offset" % i, a + 8, 4),
                ("fat%d.size" % i, a + 12, 4), ("fat%d.align" % i, a + 16, 4)]
        slice_off = struct.unpack_from(">I", data, a + 8)[0]
        if i == 0:
            out += [("slice0." + n_, o, s) for n_, o, s in thin_fields(data, slice_off)[:6]]
    return out


def field_mutants(data, fields, big_endian=False):
    """Each field set to values a liar would pick."""
    size = len(data)
    out = []
    for name, off, width in fields:
        old = int.from_bytes(data[off: off + width], "big" if big_endian and not
                             name.startswith("slice") else "little")
        # 0 (a zero cmdsize is the classic endless loop), all ones
        # (overflowing sums), the file size (just past the end) and off by one.
        values = {(1 << (8 * width)) - 1, 0, size, old + 1}
        values.discard(old)
        for v in sorted(values):
            v %= 1 << (8 * width)
            b = bytearray(data)
            order = "big" if big_endian and not name.startswith("slice") else "little"
            b[off: off + width] = v.to_bytes(width, order)
            out.append(("%s=0x%x" % (name, v), bytes(b)))
    return out


# ---- mutants -----------------------------------------------------------------


def small_fixture_files():
    m = load_manifest()
    dwarf = [e for e in m["files"] if e["kind"] == "dwarf" and e.get("role") == "tiny"]
    assert len(dwarf) == 1, "the manifest has no small (tiny) DWARF fixture"
    binary = [e for e in m["files"] if e["kind"] == "symtab" and e["path"] == dwarf[0]["binary"]]
    assert len(binary) == 1
    return [FIXTURES / dwarf[0]["path"], FIXTURES / binary[0]["path"]]


def fat_fixture_files():
    return [FIXTURES / e["path"] for e in load_manifest()["files"]
            if e["kind"] in ("fat-dwarf", "fat-symtab")]


def named_offsets(data):
    """File offsets the load commands of a thin file point at (segments,
    sections, symbol and string tables): where a cut changes the outcome."""
    out = set()
    ncmds, sizeofcmds = struct.unpack_from("<II", data, 16)
    off, end = 32, 32 + sizeofcmds
    for _ in range(ncmds):
        if off + 8 > min(end, len(data)):
            break
        cmd, cmdsize = struct.unpack_from("<II", data, off)
        if cmd == LC_SYMTAB:
            symoff, nsyms, stroff, strsize = struct.unpack_from("<IIII", data, off + 8)
            out |= {symoff, symoff + 16 * nsyms, stroff, stroff + strsize}
        elif cmd == LC_SEGMENT_64:
            fileoff, filesize = struct.unpack_from("<QQ", data, off + 40)
            out |= {fileoff, fileoff + filesize}
            for k in range(struct.unpack_from("<I", data, off + 64)[0]):
                s = off + 72 + 80 * k
                size, = struct.unpack_from("<Q", data, s + 40)
                offset, = struct.unpack_from("<I", data, s + 48)
                if offset:
                    out |= {offset, offset + size}
        off += max(cmdsize, 8)
    return out


def truncations(path):
    """Cut lengths. Every length through the header and load commands and
    within 4 bytes of every offset they name below 4096, every 128th length
    of the rest up to 4096, and 100 lengths spread over the remainder.
    STALLSCOPE_HOSTILE_FULL=1: every length up to 4096 and 300 beyond (about
    3x slower: each run of the binary costs ~30 ms of start-up)."""
    data = path.read_bytes()
    n = len(data)
    head = min(n, 4096)
    if os.environ.get("STALLSCOPE_HOSTILE_FULL"):
        lengths, spread = set(range(head + 1)), 300
    else:
        cmds_end = 32 + struct.unpack_from("<I", data, 20)[0]
        lengths = set(range(min(cmds_end + 64, head) + 1)) | set(range(0, head + 1, 128))
        for o in named_offsets(data):
            lengths |= {k for k in range(o - 4, o + 5) if 0 <= k <= head}
        spread = 100
    if n > 4097:
        lengths |= {4097 + (n - 4098) * i // (spread - 1) for i in range(spread)}
    lengths.discard(n)
    return [("%s[:%d]" % (path.name, k), data[:k]) for k in sorted(lengths)]


def flips(paths, count=300, seed=20240607):
    rng = random.Random(seed)
    files = [p.read_bytes() for p in paths]
    out = []
    for i in range(count):
        k = i % len(files)
        data = bytearray(files[k])
        head = min(len(data), 32 + struct.unpack_from("<I", data, 20)[0] + 64)
        nflips = rng.choice((1, 1, 2, 4, 8, 16))
        where = []
        for _ in range(nflips):
            pos = rng.randrange(head) if rng.random() < 0.5 else rng.randrange(len(data))
            data[pos] ^= rng.randrange(1, 256)
            where.append(pos)
        out.append(("%s flip%d@%s" % (paths[k].name, i, ",".join(map(str, where[:4]))),
                    bytes(data)))
    return out


# ---- running ------------------------------------------------------------------


def run(argv):
    try:
        r = subprocess.run(argv, capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None
    return r


def check_exit(r, what):
    """None when R obeys the rules, else a description of the breach."""
    if r is None:
        return "%s: no answer within %d s" % (what, TIMEOUT)
    if r.returncode < 0:
        return "%s: killed by signal %d" % (what, -r.returncode)
    if r.returncode not in (0, 1):
        return "%s: exit status %d, stderr %r" % (what, r.returncode, r.stderr[:300])
    if r.returncode == 1:
        lines = r.stderr.decode("utf-8", "replace").splitlines()
        if len(lines) != 1 or not lines[0].strip():
            return "%s: exit 1 with %d stderr lines: %r" % (what, len(lines), r.stderr[:300])
    return None


def check_symbolicate(binary, path, what):
    r = run([binary, "symbolicate", "--debug-file", str(path), ADDR])
    problem = check_exit(r, what)
    if problem or r.returncode != 0:
        return problem
    lines = r.stdout.decode("utf-8", "replace").splitlines()
    try:
        obj = json.loads(lines[0]) if len(lines) == 1 else None
    except ValueError:
        obj = None
    if not (isinstance(obj, dict) and obj.get("address") == ADDR
            and isinstance(obj.get("frames"), list)):
        return "%s: exit 0 but stdout is %r" % (what, r.stdout[:300])
    return None


def try_mutant(binary, workdir, desc, data):
    """Runs both commands on one mutant; returns a list of breaches."""
    os.makedirs(workdir, exist_ok=True)
    mutant = os.path.join(workdir, "mutant")
    outdir = os.path.join(workdir, "out")
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    with open(mutant, "wb") as f:
        f.write(data)
    problems = []
    p = check_symbolicate(binary, mutant, "symbolicate")
    if p:
        problems.append(p)
    out = os.path.join(outdir, "cache")
    r = run([binary, "symcache", mutant, "-o", out])
    p = check_exit(r, "symcache")
    if p:
        problems.append(p)
    elif r.returncode == 1:
        left = os.listdir(outdir)
        if left:
            problems.append("symcache: exit 1 but left %s behind" % left)
    else:
        if not os.path.isfile(out):
            problems.append("symcache: exit 0 but wrote no %s" % out)
        else:
            p = check_symbolicate(binary, out, "symbolicate on its symcache")
            if p:
                problems.append(p)
    return [(desc, p) for p in problems]


def run_all(mutants, tmp_path):
    binary = require_bin()
    workers = int(os.environ.get("HOSTILE_WORKERS") or max(2, (os.cpu_count() or 2) * 2))
    failures = []
    free = [str(tmp_path / ("w%d" % i)) for i in range(workers)]
    lock = threading.Lock()

    def task(desc, data):
        with lock:
            slot = free.pop()
        try:
            res = try_mutant(binary, slot, desc, data)
            if res:
                keep = tmp_path / "failures"
                keep.mkdir(exist_ok=True)
                name = "".join(c if c.isalnum() or c in "._-" else "_" for c in desc)[:120]
                shutil.copyfile(os.path.join(slot, "mutant"), keep / name)
            shutil.rmtree(os.path.join(slot, "out"), ignore_errors=True)
            return res
        finally:
            with lock:
                free.append(slot)

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for res in pool.map(lambda m: task(*m), mutants):
            failures += res
    if failures:
        rows = ["%d breaches over %d mutants (mutants kept in %s):"
                % (len(failures), len(mutants), tmp_path / "failures")]
        rows += ["  %s — %s" % f for f in failures[:25]]
        pytest.fail("\n".join(rows), pytrace=False)


def test_truncated_files(tmp_path):
    mutants = []
    for p in small_fixture_files():
        mutants += truncations(p)
    assert len(mutants) > 2000
    run_all(mutants, tmp_path)


def test_flipped_bytes(tmp_path):
    run_all(flips(small_fixture_files()), tmp_path)


def test_lying_fields(tmp_path):
    mutants = []
    for p in small_fixture_files():
        data = p.read_bytes()
        fields = thin_fields(data)
        assert any(n.startswith("symtab.") for n, _, _ in fields)
        mutants += [(p.name + " " + d, m) for d, m in field_mutants(data, fields)]
    for p in fat_fixture_files():
        data = p.read_bytes()
        assert data[:4] == b"\xca\xfe\xba\xbe", "%s is not a fat file" % p
        mutants += [(p.name + "(fat) " + d, m)
                    for d, m in field_mutants(data, fat_fields(data), big_endian=True)]
    assert len(mutants) > 300
    run_all(mutants, tmp_path)
