#!/usr/bin/env python3
"""Renders the settings table of docs/OPERATIONS.md from the binary's own
table (server/service/config.c, printed by `stallscope serve --settings`)
between the markers below, so a setting added to the code is documented by
running this once (`make docs`).

  scripts/settings-doc.py [--check] [BIN] [DOC]

BIN defaults to build/stallscope, DOC to docs/OPERATIONS.md. With --check
nothing is written: it exits 1, printing the difference, when DOC's table
is not what BIN prints (tests/integration/test_operations_doc.py).
"""
import difflib
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BEGIN = ("<!-- settings: generated from server/service/config.c by "
         "scripts/settings-doc.py (make docs); do not edit by hand -->")
END = "<!-- end of settings -->"


def render(doc_text, table):
    """DOC_TEXT with TABLE between the markers."""
    head, sep, rest = doc_text.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"settings-doc.py: the markers {BEGIN!r} and {END!r} "
                         "are not both in the document")
    return f"{head}{BEGIN}\n{table}{END}{tail}"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    binary = Path(args[0]) if args else REPO / "build/stallscope"
    doc = Path(args[1]) if len(args) > 1 else REPO / "docs/OPERATIONS.md"
    table = subprocess.run([str(binary), "serve", "--settings"], check=True,
                           capture_output=True, text=True).stdout
    old = doc.read_text()
    new = render(old, table)
    if not check:
        if new != old:
            doc.write_text(new)
        return 0
    if new == old:
        return 0
    sys.stdout.writelines(difflib.unified_diff(
        old.splitlines(True), new.splitlines(True), str(doc), "regenerated"))
    print(f"{doc}'s settings table is not the binary's: run `make docs`")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
