"""`stallscope demangle` (issue 40): one line out per name, from the
arguments or standard input; Swift in the short form or, with --full, as
`swift demangle` prints it (Swift's own test list is the oracle, read from
../shared/swift/manglings.txt, never written down here); C++ as
llvm-cxxfilt prints it (the oracle, on the fixtures' own symbols); anything
else unchanged."""

import re

from conftest import (FIXTURES, SHARED, demangle, load_manifest, nm_symbols, run_cli)

PREFIXES = ("$s", "_$s", "$S", "_$S", "_T0")
# A -classify marker at the start of an expected output (NOTICE.md).
CLASSIFY = re.compile(r"^(\{T:[^}]*\}|\{C\}) ")


def oracle_lines():
    """(mangled, expected full form) of every eligible line of Swift's
    test list whose expected output differs from its input."""
    out = []
    for line in (SHARED / "swift" / "manglings.txt").read_text().splitlines():
        if " ---> " not in line:
            continue
        mangled, expected = line.split(" ---> ", 1)
        mangled = mangled.replace(" ", "")
        expected = CLASSIFY.sub("", expected.lstrip())
        if mangled.startswith(PREFIXES) and expected != mangled:
            out.append((mangled, expected))
    return out


def cli(*args, stdin=None):
    r = run_cli(["demangle", *args], stdin=stdin)
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\n")[:-1]


def test_full_form_from_stdin_matches_most_of_swifts_own_list():
    """The unit test holds the demangler to every line but the documented
    exceptions; here the CLI's stdin path must agree with the oracle on
    nearly all of them, in order, one line per name."""
    lines = oracle_lines()
    assert len(lines) > 240
    got = cli("--full", stdin="".join(m + "\n" for m, _ in lines))
    assert len(got) == len(lines)
    same = sum(g == e for g, (_, e) in zip(got, lines))
    assert same >= len(lines) - 10, [(m, g, e) for g, (m, e) in zip(got, lines) if g != e][:5]


def test_short_form_of_the_spec_examples():
    names = ["$s8mangling3ZimC4zangyyx_qd__tlF",
             "$s8mangling24InstanceAndClassPropertyV8propertySivgZ", "$s8mangling6curry1yyF"]
    assert cli(*names) == ["Zim.zang<A>(A, A1)",
                           "static InstanceAndClassProperty.property.getter", "curry1()"]


def test_arguments_equal_stdin():
    names = [m for m, _ in oracle_lines()[:40]] + ["main", "_ZN3foo3barEv"]
    assert cli(*names) == cli(stdin="\n".join(names) + "\n")
    assert cli("--full", *names) == cli("--full", stdin="\n".join(names) + "\n")


def test_cxx_names_as_llvm_cxxfilt_prints_them():
    """Every C++ symbol of the C++ fixture, in the Mach-O spelling (__Z…)
    and without the extra underscore."""
    entry = next(e for e in load_manifest()["files"]
                 if e["kind"] == "symtab" and e.get("variant") == "arm64-O2")
    names = sorted({n for _, n in nm_symbols(FIXTURES / entry["path"]) if n.startswith("__Z")})
    assert len(names) > 10
    plain = [n[1:] for n in names]
    expected = demangle(plain)
    assert cli(*plain) == expected
    assert cli(*names) == expected
    assert cli("--full", *plain) == expected


def test_other_names_come_back_unchanged():
    kept = ["main", "-[SSWidget draw]", "_TFC4main3Foo3barfT_T_", "$s99main",
            "$s", "_T0", "$sSS" * 3000, "stall_hash", "", "  spaced  "]
    assert cli(stdin="".join(k + "\n" for k in kept)) == kept
    assert cli("--full", stdin="".join(k + "\n" for k in kept)) == kept


def test_usage():
    assert run_cli(["demangle", "--help"]).returncode == 0
    r = run_cli(["demangle", "--bogus"])
    assert r.returncode == 2 and "usage" in r.stderr
