#!/usr/bin/env python3
"""dashboard_profile.py — uploads up to 10 fixture dSYMs to the bench app and
writes the profile bench/dashboard_load.c reads (its header describes it).

For each dSYM, every function symbol gets one candidate address: the middle
of the function (the symbol table gives its start; the next symbol or the
end of __text its end). `stallscope symbolicate` checks it: kept only when
the address and the address minus 1 (how the server looks up a return
address, SPEC §3.3) both give exactly one frame, not inlined, of the same
function, and the function is new for this image. Grouping identities are
`image!function` (SPEC §6) with the report's image name, so every function
kept is a distinct identity and a pair of them a distinct level-1 key.

usage: dashboard_profile.py BIN PORT APP UPLOAD_TOKEN PROFILE LLVM_BIN
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from fixture_dsyms import dwarf_files, text_layout, upload  # noqa: E402

MAX_IMAGES = 10


def candidates(llvm, path, text_addr, text_size):
    """One address in the middle of every function symbol of __text."""
    out = subprocess.run([f"{llvm}/llvm-nm", "--defined-only", "-n", path],
                         capture_output=True, text=True, check=True).stdout
    starts = sorted({int(line.split()[0], 16) for line in out.splitlines()
                     if len(line.split()) >= 3 and line.split()[1] in "tT"})
    starts = [s for s in starts if text_addr <= s < text_addr + text_size]
    ends = starts[1:] + [text_addr + text_size]
    return [s + max(1, (e - s) // 2) for s, e in zip(starts, ends) if e - s >= 2]


def symbolize(binary, path, addrs):
    out = subprocess.run([binary, "symbolicate", "--debug-file", path],
                         input="".join(f"0x{a:x}\n" for a in addrs),
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line)["frames"] for line in out.splitlines()]


def single(frames):
    return frames[0]["function"] if len(frames) == 1 and not frames[0]["inlined"] else None


def functions(binary, llvm, path, text_addr, text_size):
    """Addresses (file vmaddr) that symbolize to one distinct function each."""
    cands = candidates(llvm, path, text_addr, text_size)
    at = symbolize(binary, path, cands)
    before = symbolize(binary, path, [a - 1 for a in cands])
    seen, kept = set(), []
    for a, f0, f1 in zip(cands, at, before):
        name = single(f0)
        if name and name == single(f1) and name not in seen:
            seen.add(name)
            kept.append(a)
    return kept


def main():
    binary, port, app, token, profile, llvm = sys.argv[1:]
    images, funcs = [], []
    for path, f in dwarf_files(MAX_IMAGES):
        upload(port, app, token, path)
        base, text_addr, text_size = text_layout(llvm, path)
        i = len(images)
        load = 0x100000000 + i * 0x10000000
        images.append(f"image {f['slices'][0]['uuid']} BenchImage{i} {load:x} "
                      f"{text_addr - base + text_size:x}")
        funcs += [f"func {i} {a - base:x}"
                  for a in functions(binary, llvm, path, text_addr, text_size)]
    open(profile, "w").write("\n".join(images + funcs) + "\n")
    print(f"{len(images)} images, {len(funcs)} functions")


main()
