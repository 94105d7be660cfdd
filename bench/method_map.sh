#!/usr/bin/env bash
# Android method tables on one core (SPEC §13, issue 44: a 1,000,000-line
# methodMapping.txt converts in under 2 s, and a table answers at least
# 1,000,000 lookups a second, each rendered as a Java-readable name):
#   (a) convert the plain text, (b) convert it gzip'ed (what a build
#   uploads), then open the table and look up LOOKUPS ids drawn uniformly
#   from all of them (the worst case for caches: a stack's ids repeat);
# the median of RUNS (default 5) of each, by bench/method_map_speed.c,
# wall time and CPU time (the machine may be shared).
# Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
LINES=${LINES:-1000000}
LOOKUPS=${LOOKUPS:-5000000}

make -s all
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -std=c11 -D_GNU_SOURCE -O2 -I. -o "$work/speed" bench/method_map_speed.c \
	build/libsymbolizer.a build/libcommon.a -lz

"$work/speed" gen "$LINES" "$work/methodMapping.txt"
gzip -6 -c "$work/methodMapping.txt" >"$work/methodMapping.txt.gz"
printf 'mapping: %d lines, %d bytes (%d gzip'"'"'ed)\n' "$((LINES + 1))" \
	"$(stat -c %s "$work/methodMapping.txt")" "$(stat -c %s "$work/methodMapping.txt.gz")"

# median NAME INPUT: RUNS runs of the driver on INPUT, the medians printed.
median() {
	for ((i = 0; i < RUNS; i++)); do
		"$work/speed" run "$2" "$work/table" "$LOOKUPS"
	done >"$work/$1.jsonl"
	python3 - "$work/$1.jsonl" "$1" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda k: statistics.median(r[k] for r in rows)
r = rows[0]
print(f"{sys.argv[2]:6} convert {med('convert_s'):.3f} s (CPU {med('convert_cpu_s'):.3f} s; "
      f"{r['methods']} methods, table {r['table_bytes']} bytes), open {med('open_s') * 1000:.1f} ms, "
      f"{int(med('lookups_per_s')):,} lookups+names/s (per CPU second {int(med('lookups_per_cpu_s')):,})")
PY
}
median plain "$work/methodMapping.txt"
median gzip "$work/methodMapping.txt.gz"
echo "targets: convert < 2 s; >= 1,000,000 lookups/s with the readable name"
