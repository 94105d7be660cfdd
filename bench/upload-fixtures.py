#!/usr/bin/env python3
"""Uploads up to ten fixture dSYMs to a running server and writes the load
generator's image profile (UUID, load address, __text offset and size per
line). Used by bench/ingest.sh and bench/ingest-work.sh.

usage: upload-fixtures.py PORT UPLOAD_TOKEN PROFILE LLVM_BIN"""
import json, re, subprocess, sys, urllib.request
port, token, profile, llvm = sys.argv[1:]
manifest = json.load(open("build/fixtures/manifest.json"))
lines = []
for f in manifest["files"]:
    if f["kind"] != "dwarf" or len(lines) == 10:
        continue
    path = "build/fixtures/" + f["path"]
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/apps/com.bench.app/dsyms",
                                 data=open(path, "rb").read(), method="POST",
                                 headers={"Authorization": f"Bearer {token}"})
    urllib.request.urlopen(req, timeout=300).read()
    heads = subprocess.run([f"{llvm}/llvm-objdump", "--macho", "--private-headers", path],
                           capture_output=True, text=True, check=True).stdout
    base = int(re.search(r"segname __TEXT\s+vmaddr (0x[0-9a-f]+)", heads).group(1), 16)
    secs = subprocess.run([f"{llvm}/llvm-objdump", "--section-headers", path],
                          capture_output=True, text=True, check=True).stdout
    size, addr = next((int(p[2], 16), int(p[3], 16)) for p in map(str.split, secs.splitlines())
                      if len(p) >= 4 and p[1] == "__text")
    load = 0x100000000 + len(lines) * 0x10000000
    lines.append(f"{f['slices'][0]['uuid']} {load:x} {addr - base:x} {size:x}")
open(profile, "w").write("\n".join(lines) + "\n")
