#!/usr/bin/env python3
"""Bytes per stored report: posts N native reports to a running server
(bench/ingest.sh's app and image profile), stacks drawn with a Zipf
frequency, then prints what the reports take in PostgreSQL.

A report is bench/ingest_load.c's: 30 frames over the profile's images
(symbolized), plus one frame in a system image without symbols (as every
report of the data-at-scale issue has); its main thread is one of 10,000
stacks (Zipf, s = 1.1), and 0 to 2 more threads idle in one of 100 stacks
(Zipf). 200,000 users, 5 versions, 6 devices, 3 kinds; 50 reports per
request.

usage: report_bytes.py HOST PORT INGEST_KEY PROFILE N DATABASE_URL
"""
import bisect
import itertools
import json
import random
import subprocess
import sys
import urllib.request

FRAMES = 30
SYSTEM = {"name": "UIKitCore", "uuid": "5C1E1D3A-0000-4000-8000-0000000000FF",
          "load_address": "0x1a0000000", "size": 0x100000}


def zipf(n, s=1.1):
    acc, cum = 0.0, []
    for k in range(1, n + 1):
        acc += 1 / k ** s
        cum.append(acc)
    return lambda rng: bisect.bisect_left(cum, rng.random() * acc)


def stack(images, s):
    frames = []
    for f in range(FRAMES):
        im = images[(s + f) % len(images)]
        off = (s * 7919 + f * 104729) % im["text_size"]
        frames.append(hex(im["load"] + im["text_off"] + (off & ~3)))
    frames.append(hex(0x1a0000000 + 0x1000 + (s % 64) * 16))
    return frames


def main():
    host, port, key, profile, n, url = sys.argv[1:7]
    images = []
    for line in open(profile):
        uuid, load, text_off, text_size = line.split()
        images.append({"uuid": uuid, "load": int(load, 16), "text_off": int(text_off, 16),
                       "text_size": int(text_size, 16)})
    listed = [{"name": f"Image{i}", "uuid": im["uuid"], "load_address": hex(im["load"]),
               "size": im["text_off"] + im["text_size"]} for i, im in enumerate(images)]
    listed.append(SYSTEM)
    rng = random.Random(25)
    main_stack, idle_stack = zipf(10000), zipf(100)
    devices = ["iPhone14,2", "iPhone15,3", "iPhone13,1", "iPad13,1", "iPhone16,1", "iPhone12,8"]
    seq = itertools.count()
    sent = 0
    while sent < int(n):
        batch = []
        for _ in range(min(50, int(n) - sent)):
            threads = [{"name": "main", "main": True,
                        "frames": stack(images, main_stack(rng))}]
            for t in range(rng.randrange(3)):
                threads.append({"name": f"worker-{t}", "main": False,
                                "frames": stack(images, 10000 + idle_stack(rng))})
            batch.append({"report_id": f"bytes-{next(seq)}", "kind": rng.choice(
                ["stall", "hang", "cpu"]), "app_version": f"8.0.{rng.randrange(5)}",
                "os": "iOS", "os_version": "17.2", "device": rng.choice(devices),
                "user_id": f"user-{rng.randrange(200000)}",
                "duration_ms": 2000 + rng.randrange(5000), "images": listed,
                "threads": threads})
        req = urllib.request.Request(f"http://{host}:{port}/api/v1/ingest",
                                     data=json.dumps({"reports": batch}).encode(),
                                     headers={"X-Stallscope-Key": key,
                                              "Content-Type": "application/json"})
        body = json.load(urllib.request.urlopen(req))
        assert not body["rejected"], body["rejected"][:3]
        sent += len(batch)
    sql = """
        SELECT count(*) FROM reports;
        SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('reports');
        SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
         WHERE c.relname IN ('stacks', 'stack_refs');  -- stack_refs: before schema/041
        SELECT pg_database_size(current_database());"""
    out = subprocess.run(["psql", url, "-Atc", sql], capture_output=True, text=True,
                         check=True).stdout.split()
    reports, parts, stacks, db = map(int, out)
    print(f"{reports} reports: reports partitions {parts / reports:.0f} B/report,"
          f" stacks {stacks / reports:.0f} B/report,"
          f" together {(parts + stacks) / reports:.0f} B/report;"
          f" whole database {db / reports:.0f} B/report")


if __name__ == "__main__":
    main()
