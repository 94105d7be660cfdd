#!/usr/bin/env bash
# Demangler speed on one core, in one run (target: >= 1,000,000 Swift names
# a second, docs/PERFORMANCE.md):
#   (a) Swift, short form, on 40,000 app-shaped names (bench/swift_names.py);
#   (b) Swift, full form, on the same;
#   (c) Swift, short form, on the names of Swift's own test list (eligible
#       prefixes only: ../shared/swift/manglings.txt);
#   (d) the peer: C++ names of the same count through libc++abi's
#       __cxa_demangle (LLVM's Itanium demangler, what llvm-symbolizer and
#       llvm-cxxfilt use), from the real corpus's symbol tables;
# each the median of RUNS (default 5), with (a) against (d) as a ratio.
# Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
NAMES=${NAMES:-40000}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-14/bin}
SHARED=${STALLSCOPE_SHARED:-../shared}

make -s all
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -std=c11 -D_GNU_SOURCE -O2 -I. -o "$work/speed" bench/demangle_speed.c \
	build/libsymbolizer.a build/libcommon.a -ldwarf -lz -lc++abi -lm

python3 bench/swift_names.py "$NAMES" >"$work/swift.txt"
sed -ne '/--->/s/ *--->.*$//p' "$SHARED/swift/manglings.txt" | tr -d ' ' |
	grep -E '^(\$s|_\$s|\$S|_\$S|_T0)' >"$work/oracle.txt"
# Some corpus files hold no symbol table: llvm-nm's complaint is no error.
{ find "$SHARED/corpus" -path '*DWARF*' -type f -print0 |
	xargs -0 -n1 "$LLVM_BIN/llvm-nm" --just-symbol-name 2>/dev/null || true; } |
	sed -n 's/^__Z/_Z/p' | sort -u | sed -n "1,${NAMES}p" >"$work/cxx.txt"

# median NAME STYLE ROUNDS FILE: the median per_second of RUNS runs.
median() {
	for ((i = 0; i < RUNS; i++)); do
		"$work/speed" "$2" "$3" <"$4"
	done >"$work/$1.jsonl"
	python3 - "$work/$1.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(int(statistics.median(r["per_second"] for r in rows)), rows[0]["names"], rows[0]["demangled"])
PY
}
read -r a an ad < <(median swift_short short 10 "$work/swift.txt")
read -r b bn bd < <(median swift_full full 10 "$work/swift.txt")
read -r c cn cd < <(median oracle_short short 200 "$work/oracle.txt")
read -r d dn dd < <(median cxx short 10 "$work/cxx.txt")
printf '(a) Swift short, app names:    %10d names/s (%d names, %d demangled)\n' "$a" "$an" "$ad"
printf '(b) Swift full, app names:     %10d names/s\n' "$b"
printf '(c) Swift short, test list:    %10d names/s (%d names, %d demangled)\n' "$c" "$cn" "$cd"
printf '(d) C++ via __cxa_demangle:    %10d names/s (%d names, %d demangled)\n' "$d" "$dn" "$dd"
python3 -c "print(f'ratio (a)/(d): {$a/$d:.2f}x; target (a) >= 1,000,000 names/s')"
