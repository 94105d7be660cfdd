"""The `stallscope symbolicate` / `stallscope symcache` contract (SPEC §3.3,
§3.5) on the fixtures. Every expected answer is computed here from
llvm-symbolizer, llvm-nm, llvm-objdump or llvm-dwarfdump on the same file,
never written down.
"""

import random
import re
import subprocess

import pytest

from conftest import (FIXTURES, Comparison, HarnessError, _run, demangle, llvm_frames,
                      llvm_symbolize, llvm_tool, load_manifest, nm_symbols, parametrize_slices,
                      require_bin,
                      run_cli, symbolicatable_slices, symbolicate, symbolicate_args,
                      text_addresses, text_range, text_section, text_vmaddr, unwrap, uuid_of)

KNOWN_ARCHS = ["x86_64", "arm64", "armv7", "i386", "arm64e"]


# ---- choosing fixtures by what they are, from the manifest ---------------


def pick(kind, arch, role="lib", opt="O2", dwarf_version=4, stripped=False):
    """The one slice of the manifest with these properties."""
    found = []
    for sl in symbolicatable_slices(load_manifest(), kinds=(kind,)):
        e = sl.entry
        if (sl.slice_arch == arch and e.get("role") == role and e.get("opt") == opt
                and bool(e.get("stripped")) == stripped
                and sl.slice.get("dwarf_version") == dwarf_version):
            found.append(sl)
    if len(found) != 1:
        raise HarnessError("manifest: %d slices of kind=%s arch=%s role=%s opt=%s"
                           % (len(found), kind, arch, role, opt))
    return found[0]


def sample(addrs, step=37):
    return addrs[::step] + [addrs[-1]]


def one_line_error(r):
    """Exit status 1, nothing on stdout, exactly one non-empty stderr line."""
    lines = r.stderr.splitlines()
    assert r.returncode == 1, "exit status %d (stderr %r)" % (r.returncode, r.stderr[:300])
    assert len(lines) == 1 and lines[0].strip(), "stderr is not one line: %r" % r.stderr[:500]
    assert r.stdout == "", "stdout not empty on failure: %r" % r.stdout[:300]


def compare_or_fail(name, addrs, ours, theirs):
    cmp = Comparison(name, addrs, ours, theirs)
    if cmp.mismatches:
        pytest.fail(cmp.table(), pytrace=False)
    return cmp


# ---- input forms ----------------------------------------------------------


def test_argv_equals_stdin():
    sl = pick("dwarf", "arm64")
    addrs = sample(text_addresses(sl))
    hexes = ["0x%x" % a for a in addrs]
    via_argv = run_cli(symbolicate_args(sl.path) + hexes)
    via_stdin = run_cli(symbolicate_args(sl.path), stdin="".join(h + "\n" for h in hexes))
    assert via_argv.returncode == 0, via_argv.stderr
    assert via_stdin.returncode == 0, via_stdin.stderr
    assert via_argv.stdout == via_stdin.stdout
    compare_or_fail(sl.id, addrs, symbolicate(sl.path, addrs), llvm_symbolize(sl.path, addrs))


def test_decimal_equals_hex():
    sl = pick("dwarf", "x86_64")
    addrs = sample(text_addresses(sl))
    as_hex = run_cli(symbolicate_args(sl.path), stdin="".join("0x%x\n" % a for a in addrs))
    as_dec = run_cli(symbolicate_args(sl.path), stdin="".join("%d\n" % a for a in addrs))
    assert as_hex.returncode == 0 and as_dec.returncode == 0, as_hex.stderr + as_dec.stderr
    assert as_dec.stdout == as_hex.stdout
    argv_dec = run_cli(symbolicate_args(sl.path) + ["%d" % a for a in addrs[:50]])
    assert argv_dec.returncode == 0, argv_dec.stderr
    assert argv_dec.stdout.splitlines() == as_hex.stdout.splitlines()[:50]


def jansson_string(token):
    """TOKEN (bytes) quoted and escaped as jansson writes a JSON string."""
    short = {0x22: b'\\"', 0x5c: b"\\\\", 0x08: b"\\b", 0x0c: b"\\f", 0x0a: b"\\n",
             0x0d: b"\\r", 0x09: b"\\t"}
    out = b'"'
    for c in token:
        out += short.get(c) or (b"\\u%04X" % c if c < 0x20 else bytes([c]))
    return out + b'"'


def test_stdin_tokens_exactly():
    """Addresses on stdin are cut at spaces, tabs, CR and LF, several to a
    line, and a NUL hides the rest of its line (the rules of getline and
    strtok_r); a token that is no address is echoed, escaped, with an error.
    The whole output is compared byte for byte, with a token longer than
    the reader's block among them."""
    sl = pick("dwarf", "arm64")
    good = [b"0x%x" % a for a in sample(text_addresses(sl), step=97)]
    bad = [b'say"hi"', b"back\\slash", b"ctl\x01\x1f\x7f", b"caf\xc3\xa9", b"0x0xg",
           b"%d" % (1 << 64), b"z" * 200000]
    rng = random.Random(20261129)
    tokens = good + bad
    rng.shuffle(tokens)
    stdin, kept = b"", []
    for i in range(0, len(tokens), 3):
        line = tokens[i:i + 3]
        kept += line
        stdin += b"".join(rng.choice([b" ", b"\t", b"\r", b" \t "]) + t for t in line)
        if i % 2:
            stdin += b" \0 " + rng.choice(good) + b"\0" + rng.choice(good)
        stdin += rng.choice([b"\n", b"\r\n", b"\n\n"])
    r = subprocess.run([require_bin()] + symbolicate_args(sl.path), input=stdin,
                       capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr
    argv = run_cli(symbolicate_args(sl.path) + [t.decode() for t in good])
    assert argv.returncode == 0, argv.stderr
    answer = dict(zip(good, argv.stdout.encode().splitlines(keepends=True)))
    expected = b"".join(answer[t] if t in answer else b'{"address":' + jansson_string(t)
                        + b',"frames":[],"error":"not an address"}\n' for t in kept)
    assert r.stdout == expected


def test_output_order_is_input_order():
    """Shuffled input with repeats: one line per input, in input order, each
    echoing its address as 0x-lowercase hex."""
    sl = pick("dwarf", "arm64", opt="O0")
    addrs = sample(text_addresses(sl), step=23)
    rng = random.Random(20240607)
    shuffled = addrs + rng.sample(addrs, 40)
    rng.shuffle(shuffled)
    compare_or_fail(sl.id, shuffled, symbolicate(sl.path, shuffled),
                    llvm_symbolize(sl.path, shuffled))


def test_hex_case_and_padding_are_normalized():
    sl = pick("dwarf", "arm64")
    addrs = sample(text_addresses(sl), step=53)
    inputs = [("0x%X" if i % 2 else "0x%016x") % a for i, a in enumerate(addrs)]
    ours = symbolicate(sl.path, addrs, inputs=inputs)
    compare_or_fail(sl.id, addrs, ours, llvm_symbolize(sl.path, addrs))


def test_arch_of_a_thin_file_may_be_given():
    sl = pick("dwarf", "x86_64")
    addrs = sample(text_addresses(sl), step=101)
    plain = run_cli(symbolicate_args(sl.path), stdin="".join("0x%x\n" % a for a in addrs))
    with_arch = run_cli(symbolicate_args(sl.path, "x86_64"),
                        stdin="".join("0x%x\n" % a for a in addrs))
    assert plain.returncode == 0 and with_arch.returncode == 0, plain.stderr + with_arch.stderr
    assert plain.stdout == with_arch.stdout


# ---- address arithmetic ----------------------------------------------------


@pytest.mark.parametrize("which", ["app-arm64", "app-x86_64", "lib-arm64", "fat-x86_64"])
def test_load_address(which):
    """--load-address X: runtime = file_addr - __TEXT.vmaddr + X."""
    role, arch = which.split("-", 1)
    sl = (pick("fat-dwarf", arch) if role == "fat" else pick("dwarf", arch, role=role))
    vmaddr = text_vmaddr(sl.path, sl.arch)
    if role == "app":
        assert vmaddr == 0x100000000, "the app fixture's __TEXT is at 0x%x" % vmaddr
    addrs = sample(text_addresses(sl), step=41)
    load = 0x104a28000 + (0x1000 if arch == "x86_64" else 0)
    runtime = [a - vmaddr + load for a in addrs]
    ours = symbolicate(sl.path, runtime, sl.arch, extra=["--load-address", "0x%x" % load])
    compare_or_fail(sl.id + " --load-address", runtime, ours, llvm_symbolize(sl.path, addrs, sl.arch))


def call_return_addresses(sl):
    """Addresses right after each call instruction of the slice's __text, per
    llvm-objdump's disassembly of the binary the dSYM was made from: real
    return addresses."""
    argv = [llvm_tool("llvm-objdump"), "-d", "--no-show-raw-insn",
            str(FIXTURES / sl.entry["binary"])]
    r = _run(argv)
    if r.returncode != 0:
        raise HarnessError("llvm-objdump -d failed: %s" % r.stderr.strip())
    insns = []
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)", line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2)))
    start, size = text_section(sl.path)
    out = []
    for (addr, mnem), (nxt, _) in zip(insns, insns[1:]):
        if mnem in ("bl", "blr", "call", "callq") and start <= nxt < start + size:
            out.append(nxt)
    return out


@pytest.mark.parametrize("arch", ["arm64", "x86_64"])
def test_caller_adjust(arch):
    """--caller-adjust: the first address is the PC, looked up as is; every
    later one is a return address, looked up at addr - 1; all are echoed as
    given."""
    sl = pick("dwarf", arch)
    rets = call_return_addresses(sl)
    assert len(rets) > 30, "only %d call sites found" % len(rets)
    rng = random.Random(arch)
    stack = [rng.choice(text_addresses(sl))] + rng.sample(rets, 30) + rets[-5:]
    lookups = [stack[0]] + [a - 1 for a in stack[1:]]
    theirs = llvm_symbolize(sl.path, lookups)
    unadjusted = llvm_symbolize(sl.path, stack)
    # The test can only fail for a CLI that ignores the flag when some
    # return addresses answer differently from their call instruction.
    assert any(llvm_frames(a) != llvm_frames(b) for a, b in zip(theirs[1:], unadjusted[1:]))
    ours = symbolicate(sl.path, stack, extra=["--caller-adjust"])
    compare_or_fail(sl.id + " --caller-adjust", stack, ours, theirs)


def test_caller_adjust_with_load_address():
    sl = pick("dwarf", "arm64", role="app")
    vmaddr = text_vmaddr(sl.path)
    rets = call_return_addresses(sl)
    stack_file = [text_addresses(sl)[100]] + rets[:20]
    load = 0x10298c000
    stack = [a - vmaddr + load for a in stack_file]
    theirs = llvm_symbolize(sl.path, [stack_file[0]] + [a - 1 for a in stack_file[1:]])
    ours = symbolicate(sl.path, stack, extra=["--caller-adjust", "--load-address", "0x%x" % load])
    compare_or_fail(sl.id + " --caller-adjust --load-address", stack, ours, theirs)


# ---- slice selection ---------------------------------------------------------


def fat_files():
    return [e for e in load_manifest()["files"] if e["kind"] in ("fat-dwarf", "fat-symtab")]


def test_fat_file_without_arch_is_ambiguous():
    files = fat_files()
    assert len(files) >= 2
    for e in files:
        assert len(e["slices"]) > 1
        path = FIXTURES / e["path"]
        start, _ = text_section(path, e["slices"][0]["arch"])
        one_line_error(run_cli(symbolicate_args(path) + ["0x%x" % start]))
        one_line_error(run_cli(symbolicate_args(path), stdin="0x%x\n" % start))


def test_arch_not_in_file():
    cases = []
    for e in load_manifest()["files"]:
        if e["kind"] in ("dwarf", "symtab", "fat-dwarf", "fat-symtab") and e.get("role") == "lib":
            present = {s["arch"] for s in e["slices"]}
            absent = [a for a in KNOWN_ARCHS if a not in present]
            cases.append((FIXTURES / e["path"], absent[0], e["slices"][0]["arch"]))
    assert cases
    for path, absent, present in cases:
        start, _ = text_section(path, present if "fat" in str(path) else None)
        r = run_cli(symbolicate_args(path, absent) + ["0x%x" % start])
        one_line_error(r)


def test_each_fat_slice_matches_its_thin_file():
    """--arch X on the fat file answers like the thin file it was made of."""
    for e in fat_files():
        for s in e["slices"]:
            thin = FIXTURES / s["thin"]
            addrs = sample(text_range(thin), step=19)
            fat = run_cli(symbolicate_args(FIXTURES / e["path"], s["arch"]),
                          stdin="".join("0x%x\n" % a for a in addrs))
            ref = run_cli(symbolicate_args(thin), stdin="".join("0x%x\n" % a for a in addrs))
            assert fat.returncode == 0 and ref.returncode == 0, fat.stderr + ref.stderr
            assert fat.stdout == ref.stdout, "%s --arch %s" % (e["path"], s["arch"])


# ---- symcache ------------------------------------------------------------------

_symcaches = {}


@pytest.fixture(scope="module")
def symcache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("symcache")


def build_symcache(sl, directory):
    if sl.id not in _symcaches:
        out = directory / ("%d.symcache" % len(_symcaches))
        args = ["symcache", str(sl.path), "-o", str(out)]
        if sl.arch:
            args += ["--arch", sl.arch]
        r = run_cli(args)
        assert r.returncode == 0, "stallscope %s: %d %s" % (" ".join(args), r.returncode, r.stderr)
        assert out.is_file() and out.stat().st_size > 0
        _symcaches[sl.id] = out
    return _symcaches[sl.id]


def pytest_generate_tests(metafunc):
    parametrize_slices(metafunc, "any_slice", symbolicatable_slices)


def test_symcache_answers_like_the_debug_file(any_slice, symcache_dir):
    sl = unwrap(any_slice)
    cache = build_symcache(sl, symcache_dir)
    addrs = text_addresses(sl)
    stdin = "".join("0x%x\n" % a for a in addrs)
    direct = run_cli(symbolicate_args(sl.path, sl.arch), stdin=stdin)
    cached = run_cli(symbolicate_args(cache), stdin=stdin)
    assert direct.returncode == 0, direct.stderr
    assert cached.returncode == 0, cached.stderr
    if cached.stdout != direct.stdout:
        diffs = [(a, x, y) for a, x, y in zip(addrs, direct.stdout.splitlines(),
                                              cached.stdout.splitlines()) if x != y]
        pytest.fail("symcache output differs on %d of %d addresses; first:\n%s" % (
            len(diffs), len(addrs), "\n".join("  debug file: %s\n  symcache:   %s" % (x, y)
                                              for _, x, y in diffs[:5])), pytrace=False)


def test_symcache_info(any_slice, symcache_dir):
    sl = unwrap(any_slice)
    cache = build_symcache(sl, symcache_dir)
    r = run_cli(["symcache", "--info", str(cache)])
    assert r.returncode == 0, r.stderr
    uuids = uuid_of(sl.path, sl.arch)
    assert uuids == {sl.slice_arch: sl.uuid}, "manifest and llvm-dwarfdump disagree"
    text = r.stdout.upper()
    assert sl.uuid.upper() in text, "UUID %s not in:\n%s" % (sl.uuid, r.stdout)
    assert re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(sl.slice_arch), r.stdout), \
        "arch %s not in:\n%s" % (sl.slice_arch, r.stdout)
    for other in sl.entry["slices"]:
        if other["uuid"] != sl.uuid:
            assert other["uuid"].upper() not in text


def test_symcache_threads(tmp_path):
    """--threads N converts the units (five in the app fixture) on N threads
    and writes the same bytes whatever N; outside 1-64 it is a usage error."""
    sl = pick("dwarf", "arm64", role="app")
    outs = []
    for n in ("1", "4"):
        out = tmp_path / ("%s.symcache" % n)
        r = run_cli(["symcache", "--threads", n, str(sl.path), "-o", str(out)])
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    for bad in ("0", "65", "x"):
        r = run_cli(["symcache", "--threads", bad, str(sl.path), "-o", str(tmp_path / "bad")])
        assert r.returncode == 2 and "--threads" in r.stderr, r.stderr
        assert not (tmp_path / "bad").exists()


# ---- what frames look like -------------------------------------------------------


@pytest.mark.parametrize("which", ["dwarf", "symtab"])
def test_outside_any_function(which):
    """Addresses llvm-symbolizer finds nothing for give "frames":[]."""
    answers = {}
    for role in ("lib", "app"):
        for arch in ("arm64", "x86_64") if role == "app" else ("arm64",):
            sl = pick(which, arch, role=role)
            vm = text_vmaddr(sl.path)
            start, size = text_section(sl.path)
            cands = [vm, vm + 0x20, start - 1, start - 0x40, start + size + 0x10000,
                     vm + 0x40000000, 0xfffffffffff0, 0x7ffffffffff00000]
            theirs = llvm_symbolize(sl.path, cands)
            empty = [a for a, t in zip(cands, theirs) if llvm_frames(t) == []]
            answers[sl.id] = (sl, empty)
    for sl, empty in answers.values():
        assert len(empty) >= 3, "%s: llvm answers for almost every candidate" % sl
        for o, a in zip(symbolicate(sl.path, empty), empty):
            assert o == {"address": "0x%x" % a, "frames": []}, "%s: %r" % (sl, o)


SYMTAB_SLICES = [("symtab", "arm64", "lib", False), ("symtab", "x86_64", "app", False),
                 ("symtab", "arm64", "lib", True), ("fat-symtab", "x86_64", "lib", False)]


@pytest.mark.parametrize("kind,arch,role,stripped", SYMTAB_SLICES,
                         ids=["-".join(map(str, c)) for c in SYMTAB_SLICES])
def test_symbol_table_frames(kind, arch, role, stripped):
    """At each __text symbol of a binary without DWARF: one frame, no file,
    line or column; function = the demangled name without its leading "_",
    symbol = the raw name, symbol_address = the symbol's address."""
    sl = pick(kind, arch, role=role, stripped=stripped)
    syms = nm_symbols(sl.path, sl.arch)
    assert len(syms) >= (10 if stripped else 40), "%s: only %d symbols" % (sl, len(syms))
    plain = [n[1:] if n.startswith("_") else n for _, n in syms]
    expected = {}
    for (addr, raw), name in zip(syms, demangle(plain)):
        expected.setdefault(addr, []).append((name, raw))
    addrs = sorted(expected)
    ours = symbolicate(sl.path, addrs, sl.arch)
    bad = []
    for a, o in zip(addrs, ours):
        frames = o["frames"]
        ok = (len(frames) == 1 and not {"file", "line", "column"} & set(frames[0])
              and (frames[0].get("function"), frames[0].get("symbol")) in expected[a]
              and isinstance(frames[0].get("symbol_address"), str)
              and int(frames[0]["symbol_address"], 16) == a
              and frames[0].get("inlined") is False)
        if not ok:
            bad.append("0x%x: want one of %r, got %r" % (a, expected[a], frames))
    assert not bad, "%d of %d symbols wrong:\n%s" % (len(bad), len(addrs), "\n".join(bad[:15]))


@pytest.mark.parametrize("arch,opt", [("arm64", "O2"), ("x86_64", "O2"), ("arm64", "O0")])
def test_inlined_flags_and_frame_shape(arch, opt):
    """Every frame but the outermost is "inlined":true; the outermost is
    false. Keys and types per §3.5; file/line/column only when known."""
    sl = pick("dwarf", arch, opt=opt)
    addrs = text_addresses(sl)
    theirs = llvm_symbolize(sl.path, addrs)
    depth = max(len(llvm_frames(t)) for t in theirs)
    if opt == "O2":
        assert depth >= 3, "the fixture has no inline chain of depth 3"
    ours = symbolicate(sl.path, addrs)
    bad = []
    for a, o, t in zip(addrs, ours, theirs):
        frames = o.get("frames")
        if not isinstance(frames, list) or len(frames) != len(llvm_frames(t)):
            bad.append("0x%x: %d frames, llvm %d" % (a, len(frames or []), len(llvm_frames(t))))
            continue
        flags = [f.get("inlined") for f in frames]
        if flags != [True] * (len(frames) - 1) + [False] * bool(frames):
            bad.append("0x%x: inlined flags %r" % (a, flags))
        for f in frames:
            problems = []
            if not (isinstance(f.get("function"), str) and f["function"]):
                problems.append("function")
            if not isinstance(f.get("symbol"), str):
                problems.append("symbol")
            if not (isinstance(f.get("symbol_address"), str)
                    and re.fullmatch(r"0x[0-9a-f]+", f["symbol_address"])):
                problems.append("symbol_address")
            if "file" in f and not (isinstance(f["file"], str) and f["file"]):
                problems.append("file")
            for k in ("line", "column"):
                if k in f and not (type(f[k]) is int and f[k] > 0):
                    problems.append(k)
            extra = set(f) - {"function", "symbol", "symbol_address", "file", "line",
                              "column", "inlined"}
            if extra:
                problems.append("unknown keys %s" % sorted(extra))
            if problems:
                bad.append("0x%x: bad %s in %r" % (a, ", ".join(problems), f))
                break
    assert not bad, "%d problems:\n%s" % (len(bad), "\n".join(bad[:15]))
