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
set -euo pipefail

url=${STALLSCOPE_URL:-}
app=${STALLSCOPE_APP:-}
token=${STALLSCOPE_UPLOAD_TOKEN:-}
retries=5
delay=1
paths=()

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" >&2; exit 2; }
die() { echo "upload-dsyms: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	-u | --url) url=${2:?}; shift 2 ;;
	-a | --app) app=${2:?}; shift 2 ;;
	-t | --token) token=${2:?}; shift 2 ;;
	--retries) retries=${2:?}; shift 2 ;;
	--retry-delay) delay=${2:?}; shift 2 ;;
	-h | --help) usage ;;
	-*) echo "upload-dsyms: unknown option $1" >&2; usage ;;
	*) paths+=("$1"); shift ;;
	esac
done
[ ${#paths[@]} -gt 0 ] || usage
[ -n "$url" ] || die "no server: set STALLSCOPE_URL or pass -u"
[ -n "$app" ] || die "no app: set STALLSCOPE_APP or pass -a"
[ -n "$token" ] || die "no token: set STALLSCOPE_UPLOAD_TOKEN or pass -t"
[[ $retries =~ ^[0-9]+$ ]] || die "--retries takes a number"
command -v curl >/dev/null || die "curl is required"
url=${url%/}

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

urlencode() {
	local s=$1 out= c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case "$c" in
		[A-Za-z0-9._~-]) out+=$c ;;
		*) out+=$(printf '%%%02X' "'$c") ;;
		esac
	done
	echo "$out"
}

upload() {
	local file=$1 name attempt=0 wait=$delay status
	name=$(basename "$file")
	[ "$file" = "$work/dsyms.zip" ] && name=dsyms.zip
	while :; do
		# -T streams the file (a 2 GB dSYM is never held in memory) and
		# sends Expect: 100-continue, so refusals come before the body.
		# printf is a builtin: the token is never in an argv.
		status=$(printf 'Authorization: Bearer %s\n' "$token" |
			curl -sS -o "$work/reply" -w '%{http_code}' -X POST \
			-H @- \
			-H "Content-Type: application/octet-stream" \
			-T "$file" "$url/api/v1/apps/$(urlencode "$app")/dsyms?name=$(urlencode "$name")" \
			2>"$work/curl.err") || status=000
		case "$status" in
		200 | 201)
			echo "uploaded $name:"
			report "$work/reply"
			return 0 ;;
		000 | 5??)
			attempt=$((attempt + 1))
			if [ "$attempt" -gt "$retries" ]; then
				echo "upload-dsyms: $name: giving up after $attempt attempts (last: HTTP $status $(cat "$work/curl.err" "$work/reply" 2>/dev/null | head -c 300))" >&2
				return 1
			fi
			echo "upload-dsyms: $name: HTTP $status, retrying in ${wait}s" >&2
			sleep "$wait"
			wait=$((wait * 2)) ;;
		*)
			echo "upload-dsyms: $name: HTTP $status $(head -c 500 "$work/reply" 2>/dev/null)" >&2
			return 1 ;;
		esac
	done
}

failed=0
for f in "${files[@]}"; do
	upload "$f" || failed=1
done
exit $failed
