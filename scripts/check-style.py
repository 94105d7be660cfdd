#!/usr/bin/env python3
"""check-style.py — `make style`: the C lines a branch changes follow
.clang-format (docs/STYLE.md).

Only lines changed since a base commit are checked, because much of the
older code predates the .clang-format rules and reformatting it wholesale
would bury its history. The base is $STYLE_BASE, else where HEAD left main
(`git merge-base HEAD origin/main`, or `main`); uncommitted changes count
too. On main itself the base is HEAD: only uncommitted changes are checked.
Renames are followed, so a moved file is checked on its edited lines only.

Exit 0 when every changed line is formatted, 1 otherwise (clang-format's
warnings name file and line), 2 when no base can be found.
"""
import os
import re
import subprocess
import sys

CLANG_FORMAT = os.environ.get('CLANG_FORMAT', 'clang-format')


def git(*args):
    return subprocess.run(['git'] + list(args), capture_output=True, text=True)


def find_base():
    base = os.environ.get('STYLE_BASE')
    if base:
        return base
    for ref in ('origin/main', 'main'):
        if git('rev-parse', '-q', '--verify', ref + '^{commit}').returncode == 0:
            p = git('merge-base', 'HEAD', ref)
            if p.returncode == 0:
                return p.stdout.strip()
    return None


def changed_lines(base):
    """{path: [(first, last), …]} of the added or changed lines."""
    p = git('diff', '-M', '-U0', '--no-color', '--diff-filter=AMR', base, '--',
            '*.c', '*.h')
    if p.returncode != 0:
        sys.exit(f'style: git diff {base}: {p.stderr.strip()}')
    out, path = {}, None
    for line in p.stdout.splitlines():
        if line.startswith('+++ '):
            path = line[6:] if line.startswith('+++ b/') else None
        m = re.match(r'@@ -\S+ \+(\d+)(?:,(\d+))? @@', line)
        if m and path:
            first, count = int(m.group(1)), int(m.group(2) or '1')
            if count:
                out.setdefault(path, []).append((first, first + count - 1))
    return out


def main():
    base = find_base()
    if not base:
        print('style: no base commit (no main branch); set STYLE_BASE', file=sys.stderr)
        return 2
    lines = changed_lines(base)
    bad = 0
    for path in sorted(lines):
        args = [CLANG_FORMAT, '--dry-run', '--Werror']
        args += [f'--lines={a}:{b}' for a, b in lines[path]]
        if subprocess.run(args + [path]).returncode != 0:
            bad += 1
    print(f'style: {len(lines)} C file(s) changed since {base[:12]}, '
          f'{bad} with lines not formatted')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
