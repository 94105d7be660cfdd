#!/usr/bin/env python3
"""check-layers-test.py — the layering check's own test: it passes on the
tree, and fails, naming the file, on a copy of the tree with one upward
include or one include cycle injected; when a module has subfolders
(server/api/<resource>/), also on an upward include from a file in one and
on an include of a header in one from a module below.

Usage: check-layers-test.py MODULE...   (the Makefile's MODULES)
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, 'check-layers.py')


def run(root, modules):
    p = subprocess.run([sys.executable, CHECK, '--root', root] + modules,
                       capture_output=True, text=True)
    return p.returncode, p.stderr


def copy_tree(modules, dest):
    for m in modules:
        shutil.copytree(m, os.path.join(dest, m))


def inject(root, path, line):
    full = os.path.join(root, path)
    with open(full, encoding='utf-8') as f:
        text = f.read()
    with open(full, 'w', encoding='utf-8') as f:
        f.write(f'#include "{line}"\n' + text)


def nested_files(candidates, modules):
    """The .c and .h files in a subfolder (not itself a module) of the
    CANDIDATES modules, sorted."""
    out = []
    for m in candidates:
        for folder, dirs, names in os.walk(m):
            dirs[:] = [d for d in dirs if f'{folder}/{d}' not in modules]
            if folder != m:
                out += [f'{folder}/{n}' for n in names if n.endswith(('.c', '.h'))]
    return sorted(out)


def main(modules):
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    rc, err = run('.', modules)
    expect(rc == 0, f'the tree should pass, got {rc}: {err}')

    low, high = modules[0], modules[-1]
    low_file = sorted(f for f in os.listdir(low) if f.endswith('.c'))[0]
    high_header = sorted(f for f in os.listdir(high) if f.endswith('.h'))[0]
    with tempfile.TemporaryDirectory() as tmp:
        copy_tree(modules, tmp)
        inject(tmp, f'{low}/{low_file}', f'{high}/{high_header}')
        rc, err = run(tmp, modules)
        expect(rc == 1, f'an upward include should fail, got {rc}')
        expect(f'{low}/{low_file}: includes "{high}/{high_header}"' in err,
               f'the failure should name {low}/{low_file}: {err}')

    # Two units of one module including each other: no order is broken,
    # the cycle alone must fail.
    a, b = sorted({os.path.splitext(f)[0] for f in os.listdir(low)
                   if f.endswith('.h')})[:2]
    with tempfile.TemporaryDirectory() as tmp:
        copy_tree(modules, tmp)
        inject(tmp, f'{low}/{a}.c', f'{low}/{b}.h')
        inject(tmp, f'{low}/{b}.c', f'{low}/{a}.h')
        rc, err = run(tmp, modules)
        expect(rc == 1, f'an include cycle should fail, got {rc}')
        expect(f'include cycle: {low}/{a} -> {low}/{b} -> {low}/{a}' in err,
               f'the failure should name the cycle {low}/{a} <-> {low}/{b}: {err}')

    # A module's subfolders are the module: a file in one reaching up
    # fails, and so does a lower module including a header in one.
    nested = nested_files(modules[:-1], modules)
    nested_c = [f for f in nested if f.endswith('.c')]
    if nested_c:
        with tempfile.TemporaryDirectory() as tmp:
            copy_tree(modules, tmp)
            inject(tmp, nested_c[0], f'{high}/{high_header}')
            rc, err = run(tmp, modules)
            expect(rc == 1, f'an upward include from a subfolder should fail, got {rc}')
            expect(f'{nested_c[0]}: includes "{high}/{high_header}"' in err,
                   f'the failure should name {nested_c[0]}: {err}')
    nested_h = [f for f in nested if f.endswith('.h')]
    if nested_h:
        with tempfile.TemporaryDirectory() as tmp:
            copy_tree(modules, tmp)
            inject(tmp, f'{low}/{low_file}', nested_h[0])
            rc, err = run(tmp, modules)
            expect(rc == 1, f'including {nested_h[0]} from {low} should fail, got {rc}')
            expect(f'{low}/{low_file}: includes "{nested_h[0]}"' in err,
                   f'the failure should name {low}/{low_file}: {err}')

    for f in failures:
        print(f'check-layers-test: {f}', file=sys.stderr)
    if not failures:
        what = ', also from and into a subfolder,' if nested else ''
        print(f'check-layers-test: ok (tree passes; upward include{what} and cycle fail)')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
