#!/usr/bin/env bash
# Symbolizer benchmark against LLVM's tools on one machine, in one run.
#
# Builds a 40,000-function dSYM once (cached under build/bench, keyed by the
# generator's hash; the compile takes minutes), then alternates the peers,
# RUNS times each (default 3), and prints medians and ratios:
#   (a) warm: `stallscope symbolicate` on a prebuilt symcache
#       vs `llvm-symbolizer --output-style=JSON --inlining` on the DWARF,
#       ADDRS random addresses (default 200,000);
#   (b) cold: `stallscope symbolicate` straight on the DWARF vs the same;
#   (c) `stallscope symcache` vs `llvm-gsymutil --convert`;
#   (d) symcache size vs GSYM size;
#   (e) peak RSS of each;
#   (f) the symcache build of the same 40,000 functions named in Swift
#       (bench/swift_names.py, given as __asm__ labels, so every name is
#       demangled at build) against the C-named one: the cost of Swift
#       names (target: at most 1.15x);
#   (g) random lookups a second in process on one core
#       (bench/symcache_lookup.c; bench/symcache_lookup.sh adds a
#       400,000-function dSYM);
#   (h) (c) again on the same functions compiled as FUNCS/100 source files,
#       so as many compile units (an app's shape): `stallscope symcache`
#       converts units on all online CPUs (STALLSCOPE_SYMCACHE_THREADS),
#       llvm-gsymutil too; then ours on one thread, whose bytes must be
#       the same.
# Not part of `make test`: timings belong here, never in tests.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
ADDRS=${ADDRS:-200000}
FUNCS=${FUNCS:-40000}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-14/bin}
BIN=${STALLSCOPE_BIN:-build/stallscope}
export PATH="$LLVM_BIN:$PATH"

[ -x "$BIN" ] || make -s all
command -v /usr/bin/time >/dev/null || { echo "bench needs /usr/bin/time (apt-get install time)"; exit 1; }

. bench/big_dsym.sh
dir=$(big_dsym_dir big "$FUNCS")
dwarf=$(big_dsym_dwarf "$dir")
[ -f "$dwarf" ] || build_dsym "$dir" generate "$FUNCS"
swift_dir=$(big_dsym_dir bigswift "$FUNCS" bench/swift_names.py)
swift_dwarf=$(big_dsym_dwarf "$swift_dir")
[ -f "$swift_dwarf" ] || build_dsym "$swift_dir" generate_swift "$FUNCS"
cu_dir=$(big_dsym_dir bigcu "$FUNCS")
cu_dwarf=$(big_dsym_dwarf "$cu_dir")
[ -f "$cu_dwarf" ] || build_dsym "$cu_dir" generate "$FUNCS" 100

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$dwarf" "$ADDRS" >"$work/addrs.txt" <<'EOF'
import random, subprocess, sys
out = subprocess.run(["llvm-objdump", "--section-headers", sys.argv[1]], capture_output=True,
                     text=True, check=True).stdout
for line in out.splitlines():
    parts = line.split()
    if len(parts) >= 4 and parts[1] == "__text":
        size, start = int(parts[2], 16), int(parts[3], 16)
random.seed(20261122)
print("\n".join(hex(random.randrange(start, start + size)) for _ in range(int(sys.argv[2]))))
EOF

# run NAME CMD… : appends "seconds peak_kb" to $work/NAME.
run() {
	local name=$1
	shift
	/usr/bin/time -f "%e %M" -o "$work/t" "$@"
	cat "$work/t" >>"$work/$name"
}

"$BIN" symcache "$dwarf" -o "$work/big.symcache" >/dev/null
for ((i = 1; i <= RUNS; i++)); do
	echo "round $i/$RUNS"
	run warm_ours "$BIN" symbolicate --debug-file "$work/big.symcache" <"$work/addrs.txt" >"$work/out_ours"
	run llvm_symbolizer llvm-symbolizer --output-style=JSON --inlining --obj="$dwarf" <"$work/addrs.txt" >"$work/out_llvm"
	run cold_ours "$BIN" symbolicate --debug-file "$dwarf" <"$work/addrs.txt" >"$work/out_cold"
	run convert_ours "$BIN" symcache "$dwarf" -o "$work/conv.symcache" >/dev/null
	run convert_gsym llvm-gsymutil --convert "$dwarf" -o "$work/big.gsym" >/dev/null
	run convert_swift "$BIN" symcache "$swift_dwarf" -o "$work/swift.symcache" >/dev/null
	run convert_cu_ours "$BIN" symcache "$cu_dwarf" -o "$work/cu.symcache" >/dev/null
	run convert_cu_gsym llvm-gsymutil --convert "$cu_dwarf" -o "$work/cu.gsym" >/dev/null
	run convert_cu_one "$BIN" symcache --threads 1 "$cu_dwarf" -o "$work/cu1.symcache" >/dev/null
done
cmp "$work/cu1.symcache" "$work/cu.symcache" || { echo "(h): one thread wrote other bytes"; exit 1; }
cc -std=c11 -D_GNU_SOURCE -O2 -I. -o "$work/lookup" bench/symcache_lookup.c build/libsymbolizer.a \
	build/libcommon.a -ldwarf -lz -lc++abi -lm
for ((i = 1; i <= RUNS; i++)); do
	"$work/lookup" "$work/big.symcache" 5000000 >>"$work/lookup.jsonl"
done
# Every Swift name must have been demangled, or (f) times nothing.
"$BIN" symbolicate --debug-file "$work/swift.symcache" <"$work/addrs.txt" >"$work/out_swift"

python3 - "$work" "$ADDRS" "$FUNCS" <<'EOF'
import json, os, statistics, sys
work, naddr, nfunc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def load(name):
    rows = [l.split() for l in open(os.path.join(work, name)) if l.strip()]
    return statistics.median(float(r[0]) for r in rows), max(int(r[1]) for r in rows)
w, l, c = load("warm_ours"), load("llvm_symbolizer"), load("cold_ours")
co, cg = load("convert_ours"), load("convert_gsym")
size_ours = os.path.getsize(os.path.join(work, "conv.symcache"))
size_gsym = os.path.getsize(os.path.join(work, "big.gsym"))
# The answers must agree, or the speed means nothing.
ours = [json.loads(x) for x in open(os.path.join(work, "out_ours"))]
llvm = [json.loads(x) for x in open(os.path.join(work, "out_llvm"))]
def norm_llvm(o):
    s = o["Symbol"]
    if len(s) == 1 and not s[0]["FunctionName"] and not s[0]["FileName"] and s[0]["Line"] == 0:
        return []
    return [(f["FunctionName"], f["FileName"], f["Line"]) for f in s]
same = sum(norm_llvm(b) == [(f["function"], f.get("file", ""), f.get("line", 0)) for f in a["frames"]]
           for a, b in zip(ours, llvm))
print()
print(f"{nfunc} functions, {naddr} random addresses, median of runs; RSS = peak")
print(f"answers identical to llvm-symbolizer: {same}/{len(llvm)}")
def row(label, ours_t, peer_t, peer):
    print(f"{label:<34} ours {ours_t[0]:7.2f} s {ours_t[1]/1024:7.1f} MB | {peer:<15} "
          f"{peer_t[0]:7.2f} s {peer_t[1]/1024:7.1f} MB | speed ratio {peer_t[0]/ours_t[0]:6.2f}x")
row("(a) warm: symcache lookups", w, l, "llvm-symbolizer")
row("(b) cold: straight from DWARF", c, l, "llvm-symbolizer")
row("(c) conversion", co, cg, "llvm-gsymutil")
print(f"(d) size: symcache {size_ours/1e6:.2f} MB vs GSYM {size_gsym/1e6:.2f} MB: "
      f"ratio {size_ours/size_gsym:.2f}")
cs = load("convert_swift")
swift = [json.loads(x) for x in open(os.path.join(work, "out_swift"))]
raw = sum(1 for o in swift for f in o["frames"] if f["function"].startswith(("$s", "_$s")))
named = sum(1 for o in swift for f in o["frames"])
print(f"(f) Swift names: build {cs[0]:.2f} s {cs[1]/1024:.1f} MB vs C names {co[0]:.2f} s: "
      f"cost ratio {cs[0]/co[0]:.2f}; {raw} of {named} frames left mangled")
lookups = [json.loads(x) for x in open(os.path.join(work, "lookup.jsonl"))]
print(f"(g) in process: {statistics.median(r['lookups_per_s'] for r in lookups):,.0f} lookups/s "
      f"({statistics.median(r['lookups_per_cpu_s'] for r in lookups):,.0f} per CPU second), "
      f"open {statistics.median(r['open_s'] for r in lookups) * 1000:.1f} ms")
ho, hg = load("convert_cu_ours"), load("convert_cu_gsym")
row(f"(h) conversion, {nfunc // 100} units", ho, hg, "llvm-gsymutil")
h1 = load("convert_cu_one")
row("    the same on one thread", h1, hg, "llvm-gsymutil")
print(f"    on {os.cpu_count()} CPUs; size: symcache "
      f"{os.path.getsize(os.path.join(work, 'cu.symcache'))/1e6:.2f} MB vs GSYM "
      f"{os.path.getsize(os.path.join(work, 'cu.gsym'))/1e6:.2f} MB; target (h) >= 1.5x")
print("targets: (a) >= 10x, (b) >= 0.67x, (c) >= 0.67x, (d) <= 2.0, (f) <= 1.15, (g) >= 5,000,000/s")
EOF
