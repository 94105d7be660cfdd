#!/usr/bin/env bash
# scripts/upload-dsyms.sh — upload debug symbols to stallscope from a release
# pipeline or an Xcode build phase (like Crashlytics' upload-symbols).
#
#   upload-dsyms.sh [-u URL] [-a APP] [-t TOKEN] [--retries N]
#                   [--retry-delay SECONDS] PATH...
#
# PATH is a folder (searched for *.dSYM bundles, e.g. an .xcarchive or
# DerivedData), a .dSYM bundle, a zip of bundles, or a Mach-O file (a
# binary or a system framework's symbol file). Bundles are zipped together
# and sent in one request; zips and Mach-O files are sent as they are.
#
# Settings come from flags or the environment:
#   STALLSCOPE_URL           server, e.g. https://stallscope.example.com
#   STALLSCOPE_APP           the app's bundle id
#   STALLSCOPE_UPLOAD_TOKEN  its upload token (ssu_…)
#
# The token reaches curl on its standard input (-H @-), never on a command
# line, which every user of a shared CI host can read in ps. Prefer the
# environment variable to -t, which puts it on this script's own.
#
# Connection errors and 5xx answers are retried with exponential backoff
# (RETRY_DELAY, 2×, 4×, … seconds; --retries times, default 5); a 4xx answer
# is final. Prints each slice the server stored; exits non-zero when any
# upload failed.
#
# Xcode build phase: STALLSCOPE_URL=… STALLSCOPE_APP=… \
#   STALLSCOPE_UPLOAD_TOKEN=… scripts/upload-dsyms.sh "$DWARF_DSYM_FOLDER_PATH"
# (scripts/upload-lib.sh, beside it, holds what it shares with
# upload-mapping.sh.)
set -euo pipefail

prog=upload-dsyms
. "$(dirname "${BASH_SOURCE[0]}")/upload-lib.sh"
paths=()

script_option() { return 1; }
script_operand() { paths+=("$1"); }
upload_args "$@"
[ ${#paths[@]} -gt 0 ] || usage
upload_check

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bundles=()
files=()
for p in "${paths[@]}"; do
	if [ -d "$p" ] && [[ $p == *.dSYM || $p == *.dSYM/ ]]; then
		bundles+=("${p%/}")
	elif [ -d "$p" ]; then
		while IFS= read -r -d '' b; do
			bundles+=("$b")
		done < <(find "$p" -type d -name '*.dSYM' -prune -print0)
	elif [ -f "$p" ]; then
		files+=("$p")
	else
		die "$p: no such file or folder"
	fi
done
[ ${#bundles[@]} -gt 0 ] || [ ${#files[@]} -gt 0 ] ||
	die "no .dSYM bundle found under ${paths[*]}"

if [ ${#bundles[@]} -gt 0 ]; then
	command -v zip >/dev/null || die "zip is required to send .dSYM bundles"
	# Each bundle under its own numbered folder: two bundles may share a
	# name (one app, several builds), and the server takes any depth.
	i=0
	for b in "${bundles[@]}"; do
		i=$((i + 1))
		mkdir -p "$work/stage/$i"
		ln -s "$(cd "$(dirname "$b")" && pwd)/$(basename "$b")" \
			"$work/stage/$i/$(basename "$b")"
		echo "found $b"
	done
	(cd "$work/stage" && zip -q -r "$work/dsyms.zip" .) ||
		die "could not zip the bundles"
	files=("$work/dsyms.zip" "${files[@]}")
fi

# Prints the slices of a {"files":[…]} reply, one per line.
report() {
	grep -o '{[^{}]*}' "$1" | while IFS= read -r obj; do
		field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p" <<<"$obj"; }
		printf '  %s %-8s %-30s dwarf=%s functions=%s %s\n' \
			"$(field uuid)" "$(field arch)" "$(field name)" \
			"$(field has_dwarf)" "$(field functions)" "$(field status)"
	done
}

upload() {
	local file=$1 name
	name=$(basename "$file")
	[ "$file" = "$work/dsyms.zip" ] && name=dsyms.zip
	upload_post "upload-dsyms: $name" "$file" \
		"$url/api/v1/apps/$(urlencode "$app")/dsyms?name=$(urlencode "$name")" \
		"Content-Type: application/octet-stream" || return 1
	echo "uploaded $name:"
	report "$work/reply"
}

failed=0
for f in "${files[@]}"; do
	upload "$f" || failed=1
done
exit $failed
