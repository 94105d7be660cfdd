#!/usr/bin/env bash
# Installs the Debian 12 packages stallscope needs, only those missing.
#   scripts/install-deps.sh          build + run (server, PostgreSQL)
#   scripts/install-deps.sh --test   also the test toolchain (clang, lld,
#                                    llvm, cmocka, pytest, chromium, …)
set -euo pipefail

run_pkgs=(build-essential pkg-config libdwarf-dev libelf-dev zlib1g-dev
	libarchive-dev libxxhash-dev libjansson-dev libmicrohttpd-dev libpq-dev
	libc++abi-14-dev libsodium-dev libcurl4-openssl-dev postgresql postgresql-contrib
	postgresql-15-hll curl zip)
test_pkgs=(clang lld llvm llvm-19 libclang-rt-14-dev libcmocka-dev python3
	python3-pytest python3-yaml valgrind chromium nginx postgresql-15-auto-failover wrk)

want=("${run_pkgs[@]}")
if [ "${1:-}" = "--test" ]; then
	want+=("${test_pkgs[@]}")
	# The dashboard's browser test runs on Node; any Node of 18 or later
	# will do, Debian's or one installed otherwise.
	command -v npm >/dev/null || want+=(nodejs npm)
fi

missing=()
for p in "${want[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}"
	sudo=
	if [ "$(id -u)" -ne 0 ]; then
		sudo=sudo
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# playwright-core, pinned by tests/browser/package-lock.json, drives the
# Debian chromium above (it downloads no browser of its own).
if [ "${1:-}" = "--test" ]; then
	browser=$(dirname "$0")/../tests/browser
	stamp=$browser/node_modules/.installed-from-lock
	if ! cmp -s "$browser/package-lock.json" "$stamp"; then
		echo "installing: playwright-core (npm, tests/browser)"
		npm ci --prefix "$browser" --no-audit --no-fund --loglevel=error >/dev/null
		cp "$browser/package-lock.json" "$stamp"
	fi
fi
