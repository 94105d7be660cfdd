"""Sampling check-ins of the dashboard load's users (bench/dashboard.sh,
issue 26): each of USERS users asks GET /api/v1/sampling once a day with
its app version, OS version and device, as the native client does, so
active and sampled users and every rate have their denominators (those of
the OS version and device filters too, issue 42). Today through the device route on CONCURRENCY
kept-alive connections; the days before through the admin backfill
(format=check_ins, 10,000 calls a request). A user's version is the same
every day, drawn with the load's weights (bench/dashboard_load.c); its
OS version and device too, from the load's lists.

usage: dashboard_checkins.py PORT APP INGEST_KEY ADMIN_TOKEN USERS DAYS CONCURRENCY
Prints one JSON line: {"check_ins", "seconds", "per_second", "errors"}."""

import datetime
import http.client
import json
import os
import sys
import threading
import time
import zlib
from urllib.parse import quote

VERSIONS = ["8.0.0", "8.1.0", "8.2.0", "8.3.0", "8.4.0"]
WEIGHTS = [5, 10, 15, 30, 40]
BATCH = 10000
OS_VERSIONS = ["16.7.2", "17.1", "17.2", "18.0"]
DEVICES = ["iPhone12,1", "iPhone13,2", "iPhone14,2", "iPhone15,3", "iPhone16,1", "iPad13,4"]
if os.environ.get("PLATFORM") == "android":  # dashboard.sh PLATFORM=android
    OS_VERSIONS = ["11", "12", "13", "14"]
    DEVICES = ["Pixel 6", "Pixel 7", "SM-S911B", "SM-A546B", "M2101K6G", "CPH2451"]


def version_of(user):
    r = zlib.crc32(user.encode()) % 100
    for v, w in zip(VERSIONS, WEIGHTS):
        if r < w:
            return v
        r -= w
    return VERSIONS[-1]


def os_and_device_of(user):
    r = zlib.crc32(b"device:" + user.encode())
    return OS_VERSIONS[r % len(OS_VERSIONS)], DEVICES[(r // 7) % len(DEVICES)]


def device_route(port, key, users, errors):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for u in users:
        os_version, device = os_and_device_of(u)
        conn.request("GET", f"/api/v1/sampling?user_id={u}&app_version={version_of(u)}"
                     f"&os_version={quote(os_version)}&device={quote(device)}",
                     headers={"X-Stallscope-Key": key})
        resp = conn.getresponse()
        resp.read()
        if resp.status != 200:
            errors.append(resp.status)
    conn.close()


def backfill(port, app, token, day, users, errors):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    for i in range(0, len(users), BATCH):
        body = json.dumps({"check_ins": [{"user_id": u, "app_version": version_of(u),
                                          "os_version": os_and_device_of(u)[0],
                                          "device": os_and_device_of(u)[1]}
                                         for u in users[i:i + BATCH]]})
        conn.request("POST", f"/api/v1/apps/{app}/backfill?received_at={day}T12:00:00Z"
                     "&format=check_ins", body=body,
                     headers={"Authorization": f"Bearer {token}",
                              "Content-Type": "application/json"})
        resp = conn.getresponse()
        resp.read()
        if resp.status != 200:
            errors.append(resp.status)
    conn.close()


def main():
    port, app, key, token = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    n, days, concurrency = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
    users = [f"user-{i}" for i in range(n)]
    errors = []
    started = time.perf_counter()
    today = datetime.datetime.now(datetime.timezone.utc).date()
    for ago in range(days - 1, 0, -1):
        backfill(port, app, token, (today - datetime.timedelta(days=ago)).isoformat(), users,
                 errors)
    threads = [threading.Thread(target=device_route,
                                args=(port, key, users[i::concurrency], errors))
               for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    print(json.dumps({"check_ins": n * days, "seconds": round(seconds, 1),
                      "per_second": round(n * days / seconds, 1), "errors": len(errors)}))


if __name__ == "__main__":
    main()
