#!/usr/bin/env python3
"""check-layers.py — the libraries' one-way order, checked from the includes.

Usage: check-layers.py [--root DIR] MODULE...   (lowest module first, as
the Makefile's MODULES lists them)

Fails (exit 1, one line per fault naming the file) when
  - a file of a module includes a header of a module listed after it
    (a library reaching up into one that depends on it), or
  - files include each other's headers in a cycle: x.c and x.h count as one
    unit x, and a cycle of units through their includes is reported once.
A module is its folder and every folder below it (server/api/groups/x.c
belongs to server/api), unless that folder is a module of its own; an
included header belongs to the module of the longest MODULE prefix of its
path. Only quoted includes of the repository's own headers count; system
headers and generated files (build/) are outside the order.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def strip_comments(text):
    return re.sub(r'/\*.*?\*/', '', text, flags=re.S)


def main(argv):
    root = '.'
    if len(argv) >= 2 and argv[0] == '--root':
        root, argv = argv[1], argv[2:]
    modules = argv
    if not modules:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    rank = {m: i for i, m in enumerate(modules)}
    faults = []
    edges = {}  # unit -> set of units
    for m in modules:
        for path in module_files(root, m, rank):
            unit = os.path.splitext(path)[0]
            with open(os.path.join(root, path), encoding='utf-8') as f:
                text = strip_comments(f.read())
            for inc in INCLUDE.findall(text):
                target = module_of(inc, modules)
                if target is None:
                    continue
                if rank[target] > rank[m]:
                    faults.append(f'{path}: includes "{inc}": {target}/ is above {m}/ '
                                  f'(order: {" -> ".join(modules)})')
                tunit = os.path.splitext(inc)[0]
                if tunit != unit:
                    edges.setdefault(unit, set()).add(tunit)
    faults += [f'{c[0]}: include cycle: {" -> ".join(c + [c[0]])}' for c in cycles(edges)]
    for f in faults:
        print(f'check-layers: {f}', file=sys.stderr)
    return 1 if faults else 0


def module_files(root, module, rank):
    """The .c and .h files of MODULE, its folder's and its subfolders' (a
    subfolder that is a module of its own excepted), as paths from ROOT
    with '/', sorted."""
    out = []
    top = os.path.join(root, module)
    for folder, dirs, names in os.walk(top):
        rel = os.path.relpath(folder, top).replace(os.sep, '/')
        prefix = module if rel == '.' else f'{module}/{rel}'
        dirs[:] = sorted(d for d in dirs if f'{prefix}/{d}' not in rank)
        out += [f'{prefix}/{n}' for n in names if n.endswith(('.c', '.h'))]
    return sorted(out)


def module_of(inc, modules):
    """The module a header path belongs to: the longest MODULES entry its
    folder is or lies under; None for a header of no module."""
    folder = os.path.dirname(inc)
    best = None
    for m in modules:
        if (folder == m or folder.startswith(m + '/')) and (best is None or len(m) > len(best)):
            best = m
    return best


def cycles(edges):
    """One cycle per strongly connected component of more than one unit
    (Tarjan), as the path found inside it, smallest unit first."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(path_in(edges, min(comp), comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out

def path_in(edges, start, comp):
    """A cycle through START inside COMP, by breadth-first search back to it."""
    prev, queue = {}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, ())):
            if w not in comp:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return path[::-1]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return sorted(comp)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
