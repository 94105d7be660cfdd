"""fixture_dsyms.py — what the benchmarks' Python shares about the fixture
dSYMs (build/fixtures, `make fixtures`): which to upload, how to upload
one, and where its code lies."""
import json
import re
import subprocess
import urllib.request


def dwarf_files(limit):
    """(path, manifest entry) of the first LIMIT thin dSYMs of the fixtures."""
    manifest = json.load(open("build/fixtures/manifest.json"))
    files = [f for f in manifest["files"] if f["kind"] == "dwarf"][:limit]
    return [("build/fixtures/" + f["path"], f) for f in files]


def upload(port, app, token, path):
    """POSTs the file PATH to APP's dSYMs with the upload TOKEN."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/apps/{app}/dsyms",
                                 data=open(path, "rb").read(), method="POST",
                                 headers={"Authorization": f"Bearer {token}"})
    urllib.request.urlopen(req, timeout=300).read()


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
