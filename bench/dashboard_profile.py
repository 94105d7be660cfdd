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
import re
import subprocess
import sys
import urllib.request

MAX_IMAGES = 10


def text_layout(llvm, path):
    """(__TEXT vmaddr, __text address, __text size) of a Mach-O file."""
    heads = subprocess.run([f"{llvm}/llvm-objdump", "--macho", "--private-headers", path],
                           capture_output=True, text=True, check=True).stdout
    base = int(re.search(r"segname __TEXT\s+vmaddr (0x[0-9a-f]+)", heads).group(1), 16)
    secs = subprocess.run([f"{llvm}/llvm-objdump", "--section-headers", path],
                          capture_output=True, text=True, check=True).stdout
    size, addr = next((int(p[2], 16), int(p[3], 16)) for p in map(str.split, secs.splitlines())
                      if len(p) >= 4 and p[1] == "__text")
    return base, addr, size


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


def upload(port, app, token, path):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/apps/{app}/dsyms",
                                 data=open(path, "rb").read(), method="POST",
                                 headers={"Authorization": f"Bearer {token}"})
    urllib.request.urlopen(req).read()


def main():
    binary, port, app, token, profile, llvm = sys.argv[1:]
    manifest = json.load(open("build/fixtures/manifest.json"))
    images, funcs = [], []
    for f in manifest["files"]:
        if f["kind"] != "dwarf" or len(images) == MAX_IMAGES:
            continue
        path = "build/fixtures/" + f["path"]
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
