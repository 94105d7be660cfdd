#!/usr/bin/env bash
# scripts/upload-mapping.sh — upload a Matrix TraceCanary methodMapping.txt
# to stallscope from a release pipeline or a Gradle task (docs/ANDROID.md).
#
#   upload-mapping.sh [-u URL] [-a APP] [-t TOKEN] [--app-version V]
#                     [--build B] [--retries N] [--retry-delay SECONDS]
#                     METHOD_MAPPING
#
# METHOD_MAPPING is the file Matrix's Gradle plugin writes to
# build/outputs/mapping/<variant>/methodMapping.txt (plain, or already
# gzip'ed). Matrix numbers methods anew in every build, so the mapping is
# stored under the exact app version and build the app's reports carry.
#
# Settings come from flags or the environment (the first three as for
# scripts/upload-dsyms.sh):
#   STALLSCOPE_URL           server, e.g. https://stallscope.example.com
#   STALLSCOPE_APP           the app's bundle id (its applicationId)
#   STALLSCOPE_UPLOAD_TOKEN  its upload token (ssu_…)
#   STALLSCOPE_APP_VERSION   the app version reports send (versionName)
#   STALLSCOPE_BUILD         the build reports send (versionCode)
#
# The file is gzip'ed on the fly into a temporary file (a retry sends the
# same bytes; nothing the size of the mapping is held in memory). The token
# reaches curl on its standard input (-H @-), never on a command line.
#
# Connection errors and 5xx answers are retried with exponential backoff
# (RETRY_DELAY, 2×, 4×, … seconds; --retries times, default 5); a 4xx answer
# is final: its error message is printed and the script exits 1. Prints the
# stored mapping's description on success.
set -euo pipefail

url=${STALLSCOPE_URL:-}
app=${STALLSCOPE_APP:-}
token=${STALLSCOPE_UPLOAD_TOKEN:-}
version=${STALLSCOPE_APP_VERSION:-}
build=${STALLSCOPE_BUILD:-}
retries=5
delay=1
file=

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" >&2; exit 2; }
die() { echo "upload-mapping: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	-u | --url) url=${2:?}; shift 2 ;;
	-a | --app) app=${2:?}; shift 2 ;;
	-t | --token) token=${2:?}; shift 2 ;;
	--app-version) version=${2:?}; shift 2 ;;
	--build) build=${2:?}; shift 2 ;;
	--retries) retries=${2:?}; shift 2 ;;
	--retry-delay) delay=${2:?}; shift 2 ;;
	-h | --help) usage ;;
	-*) echo "upload-mapping: unknown option $1" >&2; usage ;;
	*) [ -z "$file" ] || usage; file=$1; shift ;;
	esac
done
[ -n "$file" ] || usage
[ -n "$url" ] || die "no server: set STALLSCOPE_URL or pass -u"
[ -n "$app" ] || die "no app: set STALLSCOPE_APP or pass -a"
[ -n "$token" ] || die "no token: set STALLSCOPE_UPLOAD_TOKEN or pass -t"
[ -n "$version" ] || die "no app version: set STALLSCOPE_APP_VERSION or pass --app-version"
[ -n "$build" ] || die "no build: set STALLSCOPE_BUILD or pass --build"
[[ $retries =~ ^[0-9]+$ ]] || die "--retries takes a number"
[ -f "$file" ] || die "$file: no such file"
command -v curl >/dev/null || die "curl is required"
command -v gzip >/dev/null || die "gzip is required"
url=${url%/}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A file gzip'ed already (methodMapping.txt.gz) goes as it is.
if [ "$(head -c 2 "$file" | od -An -tx1 | tr -d ' \n')" = 1f8b ]; then
	body=$file
else
	gzip -c "$file" >"$work/mapping.gz" || die "could not gzip $file"
	body=$work/mapping.gz
fi

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

# The code and message of a {"error":{"code","message"}} reply, else its
# first bytes as they are.
server_error() {
	local code message
	code=$(sed -n 's/.*"code":"\([^"]*\)".*/\1/p' "$1" | head -n 1)
	message=$(sed -n 's/.*"message":"\(\([^"\\]\|\\.\)*\)".*/\1/p' "$1" | head -n 1)
	if [ -n "$code" ]; then
		echo "$code: $message"
	else
		head -c 500 "$1" 2>/dev/null
	fi
}

target="$url/api/v1/apps/$(urlencode "$app")/method-mappings?app_version=$(urlencode "$version")&build=$(urlencode "$build")"
attempt=0
wait=$delay
while :; do
	# -T streams the file and sends Expect: 100-continue, so refusals come
	# before the body. printf is a builtin: the token is never in an argv.
	status=$(printf 'Authorization: Bearer %s\n' "$token" |
		curl -sS -o "$work/reply" -w '%{http_code}' -X POST \
		-H @- \
		-H "Content-Type: text/plain" \
		-H "Content-Encoding: gzip" \
		-T "$body" "$target" 2>"$work/curl.err") || status=000
	case "$status" in
	200 | 201)
		echo "uploaded $file as $app $version ($build): $(head -c 500 "$work/reply")"
		exit 0 ;;
	000 | 5??)
		attempt=$((attempt + 1))
		if [ "$attempt" -gt "$retries" ]; then
			die "giving up after $attempt attempts (last: HTTP $status $(cat "$work/curl.err" "$work/reply" 2>/dev/null | head -c 300))"
		fi
		echo "upload-mapping: HTTP $status, retrying in ${wait}s" >&2
		sleep "$wait"
		wait=$((wait * 2)) ;;
	*)
		die "HTTP $status $(server_error "$work/reply")" ;;
	esac
done
