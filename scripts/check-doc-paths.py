#!/usr/bin/env python3
"""Every repository path and `make` target a doc names exists.

    check-doc-paths.py [--root DIR] [DOC.md ...]

Without DOCs: README.md and docs/**/*.md of the repository, less
docs/journal/ (the journals keep what was measured and said at the time,
naming files that have since moved or gone; they are history, not
directions). Exits 1 and prints `doc:line: what` for each one missing.

What counts as a path: a run of non-space characters holding a `/` whose
first part is one of the repository's top-level entries (`server/...`,
`schema/...`, `bench/...`), with a trailing `:LINE` or punctuation cut off.
Left out: globs and placeholders (`*`, `?`, `<`, `{`, `…`, and the words
NNN, NAME, DIR, FILE), files git ignores (`build/...`, `docker/.env`:
made by make or by hand, not kept) and anything outside the tree. A
pytest node id (`tests/x.py::test_y`) names its file.
`schema/NNN` alone names the migration numbered NNN. Relative Markdown
links (`[x](OPERATIONS.md)`) are checked from the doc's own folder.

What counts as a make target: the words after `make` in inline code or a
fenced block (`make test`, `make BUILD=x asan`), each a target the
Makefile defines.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

PLACEHOLDER = re.compile(r"[*?<>{}\[\]…$|]|(?<![A-Za-z])(NNN|NAME|DIR|FILE)(?![A-Za-z])")
TOKEN = re.compile(r"[^\s`'\"()]+")
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
MAKE = re.compile(r"(?:^|[\s;&|(])make((?:\s+[^\s;&|)`]+)+)")
MIGRATION = re.compile(r"schema/(\d{3})$")
TRAILING = ".,;:!'\""


def top_level(root):
    return {p.name for p in root.iterdir() if not p.name.startswith(".")} - {"build"}


def makefile_targets(root):
    targets = set()
    text = (root / "Makefile").read_text()
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-/ $()]+?)\s*::?(?!=)", line)
        if m and not line.startswith("\t"):
            targets.update(m.group(1).split())
        if line.startswith(".PHONY:"):
            targets.update(line.split(":", 1)[1].replace("\\", " ").split())
    # .PHONY continued on the next line(s).
    m = re.search(r"^\.PHONY:((?:.*\\\n)*.*)$", text, re.M)
    if m:
        targets.update(m.group(1).replace("\\", " ").split())
    return {t for t in targets if "$" not in t and not t.startswith(".")}


def path_exists(root, path):
    m = MIGRATION.match(path.rstrip("/"))
    if m:
        return any((root / "schema").glob(f"{m.group(1)}_*.sql"))
    if (root / path).exists():
        return True
    ignored = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", "--no-index", path],
                             capture_output=True)
    return ignored.returncode == 0


def candidate_paths(line, tops):
    for tok in TOKEN.findall(line):
        if "://" in tok or PLACEHOLDER.search(tok):
            continue
        tok = re.sub(r"::.*$|:\d+(?:-\d+)?$", "", tok.rstrip(TRAILING))
        tok = tok.rstrip(TRAILING)
        if "/" not in tok or tok.startswith(("/", "../", "./")):
            continue
        if tok.split("/", 1)[0] in tops:
            yield tok


def code_texts(lines):
    """(line number, text) of inline code and fenced blocks."""
    fenced = False
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            yield n, line
        else:
            for span in CODE_SPAN.findall(line):
                yield n, span


def make_targets(text):
    for m in MAKE.finditer(text):
        for word in m.group(1).split():
            if "=" in word:
                continue
            if word.startswith("-") or not re.fullmatch(r"[a-z][a-z0-9_-]*", word):
                break
            yield word


def check_doc(root, doc, tops, targets, seen):
    """Appends what DOC names to SEEN (kind, name); returns what is missing."""
    problems = []
    lines = doc.read_text().splitlines()
    for n, line in enumerate(lines, 1):
        for path in candidate_paths(line, tops):
            seen.append(("path", path))
            if not path_exists(root, path):
                problems.append(f"{doc}:{n}: no such path: {path}")
        for link in LINK.findall(line):
            target = link.split("#", 1)[0]
            if not target or ":" in target or target.startswith("/"):
                continue
            if PLACEHOLDER.search(target):
                continue
            seen.append(("link", target))
            if not (doc.parent / target).exists():
                problems.append(f"{doc}:{n}: broken link: {link}")
    for n, text in code_texts(lines):
        for target in make_targets(text):
            seen.append(("make", target))
            if target not in targets:
                problems.append(f"{doc}:{n}: no such make target: make {target}")
    return problems


def default_docs(root):
    docs = [root / "README.md"]
    docs += sorted(p for p in (root / "docs").rglob("*.md")
                   if "journal" not in p.relative_to(root / "docs").parts)
    return docs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("docs", nargs="*", type=Path)
    args = ap.parse_args()
    root = args.root.resolve()
    docs = args.docs or default_docs(root)
    tops, targets = top_level(root), makefile_targets(root)
    problems, seen = [], []
    for doc in docs:
        problems += check_doc(root, doc, tops, targets, seen)
    for p in problems:
        print(p)
    kinds = {k: sum(1 for s in seen if s[0] == k) for k in ("path", "link", "make")}
    print(f"{len(docs)} docs: {kinds['path']} paths, {kinds['link']} links, "
          f"{kinds['make']} make targets named; {len(problems)} missing")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
