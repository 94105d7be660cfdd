# bench/big_dsym.sh — sourced by bench/symbolicate.sh and
# bench/symcache_lookup.sh, from the repository's root: the generated
# arm64 dSYMs of FUNCS C functions (each with a static inline helper inlined
# twice), built once and cached under build/bench keyed by this file's
# generator and FUNCS. Needs clang, ld64.lld and dsymutil (LLVM_BIN on PATH).

# big_dsym_dir KIND FUNCS [EXTRA]: the cache directory of that dSYM.
big_dsym_dir() {
	local hash
	hash=$( (sed -n '/^# ---- generator/,$p' bench/big_dsym.sh; echo "$2"; [ -z "${3:-}" ] || cat "$3") |
		sha256sum | cut -c1-16)
	echo "build/bench/$1-$hash"
}

# big_dsym_dwarf DIR: the DWARF file inside DIR's dSYM.
big_dsym_dwarf() {
	echo "$1/libBig.dylib.dSYM/Contents/Resources/DWARF/libBig.dylib"
}

# ---- generator: C functions FROM..TO-1, each with a static inline helper
# inlined twice.
generate() {
	python3 - "$2" "$3" >"$1" <<'PY'
import sys
lo, hi = int(sys.argv[1]), int(sys.argv[2])
out = ["extern volatile int sink;\n"]
for i in range(lo, hi):
    out.append(f"static inline int helper_{i}(int x) {{ int y = x * {i % 97 + 3}; "
               f"if (y & 1) y += {i % 13}; return y ^ (x >> 2); }}\n")
    out.append(f"int func_{i}(int a, int b) {{ int s = 0; for (int k = 0; k < a; k++) "
               f"s += helper_{i}(k + b); if (s > {i}) sink = s; return s + helper_{i}(a); }}\n")
sys.stdout.write("".join(out))
PY
}

# The same functions with Swift linkage names: helper_i and func_i take
# names 2i and 2i+1 of the generator's list.
generate_swift() {
	python3 bench/swift_names.py $((2 * $3)) >"$1.names"
	generate "$1.c" "$2" "$3"
	python3 - "$1.c" "$1.names" "$2" >"$1" <<'PY'
import sys
names = open(sys.argv[2]).read().split()
src = open(sys.argv[1]).read()
decls = []
for i in range(int(sys.argv[3]), len(names) // 2):
    decls.append(f'static inline int helper_{i}(int x) __asm__("{names[2 * i]}");\n')
    decls.append(f'int func_{i}(int a, int b) __asm__("{names[2 * i + 1]}");\n')
sys.stdout.write(src.replace("extern volatile int sink;\n",
                             "extern volatile int sink;\n" + "".join(decls), 1))
PY
}

# build_dsym DIR GENERATOR FUNCS [UNIT]: the dylib and dSYM of GENERATOR's
# source in DIR, compiled in units (source files, so compile units) of at
# most UNIT functions, default 40,000, two at a time (one unit up to that:
# what the 40,000-function bench always measured; a larger one would need a
# compiler's worth of memory per unit). The many-CU bench passes 100: 400
# units, as an app's dSYM has one per source file.
build_dsym() {
	local out=$1 gen=$2 funcs=$3 unit=${4:-40000} from
	echo "building the $funcs-function dSYM once (cached in $out; takes minutes)…"
	mkdir -p build/bench
	tmp=$(mktemp -d build/bench/tmp.XXXXXX)
	for ((from = 0; from < funcs; from += unit)); do
		"$gen" "$tmp/big$from.c" "$from" $((from + unit < funcs ? from + unit : funcs))
	done
	ls "$tmp"/big*.c | xargs -P 2 -I{} clang -target arm64-apple-ios14.0 -g -O2 \
		-ffreestanding -c {} -o {}.o
	ld64.lld -arch arm64 -platform_version ios 14.0 14.0 -dylib -undefined dynamic_lookup \
		-install_name @rpath/libBig.dylib -o "$tmp/libBig.dylib" $(ls "$tmp"/big*.c.o | sort -V)
	dsymutil "$tmp/libBig.dylib" -o "$tmp/libBig.dylib.dSYM"
	rm -f "$tmp"/big*
	rm -rf "$out"
	mv "$tmp" "$out"
}
