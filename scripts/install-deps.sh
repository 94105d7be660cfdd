#!/usr/bin/env bash
# Installs the Debian 12 packages stallscope needs, only those missing.
#   scripts/install-deps.sh          build + run (server, PostgreSQL)
#   scripts/install-deps.sh --test   also the test toolchain (clang, lld,
#                                    llvm, cmocka, pytest, chromium, …)
set -euo pipefail

run_pkgs=(build-essential pkg-config libdwarf-dev libelf-dev zlib1g-dev
	libarchive-dev libxxhash-dev libjansson-dev libmicrohttpd-dev libpq-dev
	libc++abi-14-dev libsodium-dev postgresql postgresql-contrib curl zip)
test_pkgs=(clang lld llvm llvm-19 libclang-rt-14-dev libcmocka-dev python3
	python3-pytest valgrind)

want=("${run_pkgs[@]}")
if [ "${1:-}" = "--test" ]; then
	want+=("${test_pkgs[@]}")
fi

missing=()
for p in "${want[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=
if [ "$(id -u)" -ne 0 ]; then
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
