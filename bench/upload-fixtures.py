#!/usr/bin/env python3
"""Uploads up to ten fixture dSYMs to a running server and writes the load
generator's image profile (UUID, load address, __text offset and size per
line). Used by bench/ingest.sh and bench/ingest-work.sh.

usage: upload-fixtures.py PORT UPLOAD_TOKEN PROFILE LLVM_BIN"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from fixture_dsyms import dwarf_files, text_layout, upload  # noqa: E402

port, token, profile, llvm = sys.argv[1:]
lines = []
for path, f in dwarf_files(10):
    upload(port, "com.bench.app", token, path)
    base, addr, size = text_layout(llvm, path)
    load = 0x100000000 + len(lines) * 0x10000000
    lines.append(f"{f['slices'][0]['uuid']} {load:x} {addr - base:x} {size:x}")
open(profile, "w").write("\n".join(lines) + "\n")
