#!/usr/bin/env bash
# scripts/demo/build-dsym.sh [OUT] — rebuilds the demo's debug file,
# scripts/demo/StallDemo.dwarf by default: the DWARF Mach-O of a dSYM
# (StallDemo.dSYM/Contents/Resources/DWARF/StallDemo) for an arm64 iOS app
# executable linked from the repository's fixture sources
# (tests/fixtures/src: C with inline helpers, C++ templates, Objective-C,
# and C functions with Swift linkage names standing for the app's Swift).
# `stallscope demo` uploads it and builds its stacks from its functions.
#
# Deterministic, so tests/integration/test_demo.py can check the committed
# file is what this script makes: objects get a fixed mtime, their paths in
# the debug map are relative (-oso_prefix), the sources' paths are mapped
# to a fixed prefix, and ld64.lld's LC_UUID is a hash of the output's
# content. Needs Debian 12's LLVM 14 (scripts/install-deps.sh --test); other
# versions make other (valid) bytes.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../../tests/fixtures/src" && pwd)
out=${1:-$here/StallDemo.dwarf}
llvm=/usr/lib/llvm-14/bin
export PATH=$llvm:$PATH
export LC_ALL=C
for t in clang ld64.lld dsymutil; do
	if [ ! -x "$llvm/$t" ]; then
		echo "build-dsym.sh: $llvm/$t missing (scripts/install-deps.sh --test)" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/obj"
common=(-target arm64-apple-ios14.0 -O2 -gdwarf-4 -g -Wall -Wextra -Werror
	-fdebug-prefix-map="$src"=/stallscope/demo/src)
for f in main.c stall_core.c stall_aux.c shapes.cpp Widget.m swift_frames.c; do
	flags=("${common[@]}")
	case $f in
	*.c) flags+=(-std=c11 -ffreestanding) ;;
	*.cpp) flags+=(-std=c++14 -nostdinc++ -fno-exceptions -fno-rtti) ;;
	*.m) flags+=(-ffreestanding -fobjc-runtime=ios-14.0 -fblocks) ;;
	esac
	(cd "$src" && clang "${flags[@]}" -c "$f" -o "$tmp/obj/${f%.*}.o")
	touch -d @1600000000 "$tmp/obj/${f%.*}.o"
done
# See tests/fixtures/build.sh on the one ld64.lld warning dropped here.
(cd "$tmp" && ld64.lld -arch arm64 -platform_version ios 14.0 14.0 \
	-undefined dynamic_lookup -oso_prefix "$tmp/" -execute -o StallDemo \
	obj/main.o obj/stall_core.o obj/stall_aux.o obj/shapes.o obj/Widget.o obj/swift_frames.o) \
	2> >(grep -v 'invalid content in .debug_str_offsets' >&2)
(cd "$tmp" && dsymutil StallDemo -o StallDemo.dSYM)
cp "$tmp/StallDemo.dSYM/Contents/Resources/DWARF/StallDemo" "$out.tmp"
mv "$out.tmp" "$out"
