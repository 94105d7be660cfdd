#!/usr/bin/env bash
# Random symcache lookups a second, in process on one core (issue 46: at
# least 5,000,000 over the 40,000-function bench dSYM, and within 2x of that
# over a 400,000-function one): for each size in SIZES (default "40000
# 400000"), the generated dSYM of bench/big_dsym.sh (built once and cached;
# the 400,000-function one takes a long while), its symcache, then RUNS
# (default 3) runs of bench/symcache_lookup.c looking up LOOKUPS (default
# 5,000,000) addresses drawn uniformly from __TEXT; medians, wall time and
# CPU time (the machine may be shared).
# Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
SIZES=${SIZES:-40000 400000}
LOOKUPS=${LOOKUPS:-5000000}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-14/bin}
BIN=${STALLSCOPE_BIN:-build/stallscope}
export PATH="$LLVM_BIN:$PATH"

make -s all
. bench/big_dsym.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -std=c11 -D_GNU_SOURCE -O2 -I. -o "$work/lookup" bench/symcache_lookup.c build/libsymbolizer.a \
	build/libcommon.a -ldwarf -lz -lc++abi -lm

for funcs in $SIZES; do
	dir=$(big_dsym_dir big "$funcs")
	dwarf=$(big_dsym_dwarf "$dir")
	[ -f "$dwarf" ] || build_dsym "$dir" generate "$funcs"
	"$BIN" symcache "$dwarf" -o "$work/$funcs.symcache" >/dev/null
	for ((i = 0; i < RUNS; i++)); do
		"$work/lookup" "$work/$funcs.symcache" "$LOOKUPS"
	done >"$work/$funcs.jsonl"
done

python3 - "$work" $SIZES <<'PY'
import json, statistics, sys
work, sizes = sys.argv[1], sys.argv[2:]
first = None
for funcs in sizes:
    rows = [json.loads(l) for l in open(f"{work}/{funcs}.jsonl")]
    med = lambda k: statistics.median(r[k] for r in rows)
    cpu = med("lookups_per_cpu_s")
    first = first or cpu
    print(f"{int(funcs):>9,} functions: symcache {rows[0]['bytes'] / 1e6:7.2f} MB, "
          f"open {med('open_s') * 1000:6.1f} ms, {med('lookups_per_s'):>12,.0f} lookups/s "
          f"({cpu:,.0f} per CPU second; {first / cpu:.2f}x slower than the first)")
print("targets: >= 5,000,000 lookups/s at 40,000 functions; within 2x of that at 400,000")
PY
