"""The real-world corpus (../shared/corpus: Xcode-built dSYMs and binaries,
armv7/i386/arm64/x86_64, DWARF 2-5, Swift, fat files): for every slice listed
in corpus/oracle/cases.tsv, `stallscope symbolicate` on LABEL.addrs must
agree with the stored llvm-symbolizer answers in LABEL.oracle.json (not
re-run here) on >= 99.5% of all addresses and >= 95% of each slice's.

The per-slice table is printed by test_corpus_overall (visible with -s) and
is part of its failure message.
"""

import csv

import pytest

from conftest import CORPUS, Comparison, HarnessError, parse_jsonl, run_cli, symbolicate_args

ORACLE = CORPUS / "oracle"
SLICE_MIN = 0.95
OVERALL_MIN = 0.995


def load_cases():
    path = ORACLE / "cases.tsv"
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f, delimiter="\t"))
    except OSError as e:
        raise HarnessError("cannot read %s: %s" % (path, e))
    if not rows or rows[0][:3] != ["label", "file", "arch"]:
        raise HarnessError("%s: unexpected header %r" % (path, rows[:1]))
    cases = [(r[0], r[1], r[2] if len(r) > 2 else "") for r in rows[1:] if r and r[0]]
    if not cases:
        raise HarnessError("%s lists no case" % path)
    return cases


def pytest_generate_tests(metafunc):
    if "case" not in metafunc.fixturenames:
        return
    try:
        cases = load_cases()
    except HarnessError as e:
        metafunc.parametrize("case", [e], ids=["cases-unavailable"])
        return
    metafunc.parametrize("case", cases, ids=[c[0] for c in cases])


def _run_case(label, file, arch):
    import json
    with open(ORACLE / (label + ".addrs")) as f:
        addr_lines = [line.strip() for line in f if line.strip()]
    addrs = [int(a, 0) for a in addr_lines]
    with open(ORACLE / (label + ".oracle.json")) as f:
        theirs = [json.loads(line) for line in f if line.strip()]
    if len(theirs) != len(addrs):
        raise HarnessError("%s: %d oracle lines for %d addresses" % (label, len(theirs), len(addrs)))
    for a, t in zip(addrs, theirs):
        if int(t["Address"], 16) != a or "Symbol" not in t:
            raise HarnessError("%s: oracle line for 0x%x is %r" % (label, a, t))
    r = run_cli(symbolicate_args(CORPUS / file, arch or None),
                stdin="".join("0x%x\n" % a for a in addrs))
    error = None
    ours = []
    if r.returncode != 0:
        error = "exit status %d: %s" % (r.returncode, r.stderr.strip()[:300])
    else:
        ours = parse_jsonl(r.stdout)
        if len(ours) != len(addrs):
            error = "%d output lines for %d addresses" % (len(ours), len(addrs))
    if error:
        # Every address counts as a mismatch.
        ours = [{"address": "0x%x" % a, "frames": None} for a in addrs]
    cmp = Comparison(label, addrs, ours, theirs)
    cmp.error = error
    cmp.arch = arch
    return cmp


_results = {}


def corpus_result(label, file, arch):
    if label not in _results:
        _results[label] = _run_case(label, file, arch)
    return _results[label]


def _all_results():
    return [corpus_result(*c) for c in load_cases()]


def _table(results):
    rows = ["%-6s %7s %7s %8s %6s  %s" % ("arch", "same", "total", "percent", "cols", "slice")]
    for c in results:
        rows.append("%-6s %7d %7d %7.2f%% %6d  %s%s" % (
            c.arch or "-", c.matched, c.total, 100.0 * c.ratio, c.column_diffs,
            c.name[-90:], "  [%s]" % c.error if c.error else ""))
    matched = sum(c.matched for c in results)
    total = sum(c.total for c in results)
    rows.append("%-6s %7d %7d %7.2f%%" % ("all", matched, total, 100.0 * matched / total))
    return "\n".join(rows)


def test_corpus_slice(case):
    if isinstance(case, Exception):
        pytest.fail(str(case), pytrace=False)
    cmp = corpus_result(*case)
    assert cmp.ratio >= SLICE_MIN, "%.2f%% identical (< %.0f%%)%s\n%s" % (
        100.0 * cmp.ratio, 100 * SLICE_MIN, " — " + cmp.error if cmp.error else "",
        cmp.table(limit=10))


def test_corpus_overall():
    results = _all_results()
    table = _table(results)
    print("\n" + table)
    matched = sum(c.matched for c in results)
    total = sum(c.total for c in results)
    assert total > 1000, "the corpus oracle holds only %d addresses" % total
    worst = sorted((c for c in results if c.mismatches), key=lambda c: c.ratio)[:3]
    assert matched >= OVERALL_MIN * total, "%.3f%% identical (< %.1f%%)\n%s\n\n%s" % (
        100.0 * matched / total, 100 * OVERALL_MIN, table,
        "\n\n".join(c.table(limit=8) for c in worst))
