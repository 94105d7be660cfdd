#!/usr/bin/env python3
"""Fail when a function of the product's C is longer than the limit.

A function is a top-level brace block whose opening brace follows a
parenthesised parameter list; its length counts the lines from the line of
its name to its closing brace. Comments, strings and character literals are
blanked first so their braces do not count. Usage:

    check-function-length.py [--max N] [FILE_OR_DIR ...]

With no paths it scans the product's folders (tests and fuzz excluded).
Exit status 1 lists every function over the limit as file:line: name (n).
"""
import os
import re
import sys

PRODUCT_DIRS = ["common", "symbolizer", "store", "ingest", "server"]
DEFAULT_MAX = 80


def blank(src):
    """Replace comments, strings and char literals by spaces (keep newlines)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", src[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(src):
    """Yield (name, first line, line count) of each top-level function."""
    text = blank(src)
    # Preprocessor lines never open a function body.
    text = re.sub(r"(?m)^[ \t]*#(?:.*\\\n)*.*$",
                  lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    depth = 0
    start = 0  # offset after the previous top-level statement
    i = 0
    while i < len(text):
        c = text[i]
        if c == "{":
            if depth == 0:
                head = text[start:i]
                m = re.search(r"([A-Za-z_]\w*)\s*\([^;{}]*\)\s*$", head)
                if m and not re.search(r"=\s*$", head[:m.start()]):
                    name = m.group(1)
                    line0 = text.count("\n", 0, start + m.start(1)) + 1
                    end = match_brace(text, i)
                    line1 = text.count("\n", 0, end) + 1
                    yield name, line0, line1 - line0 + 1
                    i = end + 1
                    start = i
                    continue
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
        i += 1


def match_brace(text, i):
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def c_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in sorted(os.walk(p)):
                for n in sorted(names):
                    if n.endswith(".c"):
                        yield os.path.join(root, n)
        else:
            yield p


def main(argv):
    limit = DEFAULT_MAX
    if len(argv) >= 2 and argv[0] == "--max":
        limit = int(argv[1])
        argv = argv[2:]
    paths = argv or [d for d in PRODUCT_DIRS if os.path.isdir(d)]
    bad = []
    for path in c_files(paths):
        with open(path, encoding="utf-8", errors="replace") as f:
            src = f.read()
        for name, line, n in functions(src):
            if n > limit:
                bad.append(f"{path}:{line}: {name} ({n} lines)")
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} function(s) over {limit} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
