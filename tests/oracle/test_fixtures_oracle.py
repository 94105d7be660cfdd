"""Every byte address of every fixture slice's __text, symbolized by
`stallscope symbolicate` and by llvm-symbolizer: the answers must be 100%
identical (function, file and line of every inline frame; see conftest.py for
the equivalence and why columns are only counted).

Slices: each thin DWARF file and each symbol-table-only binary as they are,
and each slice of the fat DWARF file and the fat binary with --arch (ours) /
--default-arch (llvm's). Each tool runs once per slice with all addresses on
stdin.
"""

import os
import zipfile

import pytest

from conftest import (FIXTURES, Comparison, llvm_symbolize, load_manifest, parametrize_slices,
                      symbolicatable_slices, symbolicate, text_addresses, unwrap, uuid_of)


def pytest_generate_tests(metafunc):
    parametrize_slices(metafunc, "fixture_slice", symbolicatable_slices)


def test_manifest_is_complete():
    """build.sh leaves a fixture out (and says why) only when a tool is
    missing; that must fail the suite, not shrink it."""
    m = load_manifest()
    assert not m.get("missing"), "fixtures left out: %s" % m["missing"]
    kinds = {f["kind"] for f in m["files"]}
    assert {"dwarf", "symtab", "fat-dwarf", "fat-symtab", "zip"} <= kinds
    versions = {s.get("dwarf_version") for f in m["files"] if f["kind"] == "dwarf"
                for s in f["slices"]}
    assert {2, 4, 5} <= versions, versions


def test_manifest_matches_the_files():
    """The builder's manifest against the files: UUIDs per llvm-dwarfdump,
    no .dSYM beside a symbol-table-only binary (llvm-symbolizer would read
    it and answer from DWARF), zip members identical to the thin files."""
    m = load_manifest()
    for e in m["files"]:
        path = FIXTURES / e["path"]
        if e["kind"] == "zip":
            with zipfile.ZipFile(path) as z:
                for s in e["slices"]:
                    assert z.read(s["member"]) == (FIXTURES / s["thin"]).read_bytes()
            continue
        assert uuid_of(path) == {s["arch"]: s["uuid"] for s in e["slices"]}, e["path"]
        if e["kind"] in ("symtab", "fat-symtab"):
            beside = [n for n in os.listdir(path.parent) if n.endswith(".dSYM")]
            assert not beside, "%s has %s beside it" % (e["path"], beside)


def test_every_text_address_matches_llvm(fixture_slice):
    sl = unwrap(fixture_slice)
    addrs = text_addresses(sl)
    assert len(addrs) > 1000, "%s: suspiciously small __text (%d bytes)" % (sl, len(addrs))
    theirs = llvm_symbolize(sl.path, addrs, sl.arch)
    # The oracle must say something for this slice, or the test proves
    # nothing: most __text addresses lie in a function.
    answered = sum(1 for t in theirs if t["Symbol"][0]["FunctionName"])
    assert answered > 0.5 * len(addrs), "llvm-symbolizer answered only %d of %d" % (
        answered, len(addrs))
    ours = symbolicate(sl.path, addrs, sl.arch)
    cmp = Comparison(sl.id, addrs, ours, theirs)
    print("\n%s: %d addresses, %d frames identical, columns differ on %d"
          % (sl.id, cmp.total, cmp.frames, cmp.column_diffs))
    if cmp.mismatches:
        pytest.fail(cmp.table(), pytrace=False)
