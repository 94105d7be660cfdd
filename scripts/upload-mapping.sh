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
# stored mapping's description on success. (scripts/upload-lib.sh, beside
# it, holds what it shares with upload-dsyms.sh.)
set -euo pipefail

prog=upload-mapping
. "$(dirname "${BASH_SOURCE[0]}")/upload-lib.sh"
version=${STALLSCOPE_APP_VERSION:-}
build=${STALLSCOPE_BUILD:-}
file=

script_option() {
	case "$1" in
	--app-version) version=${2:?} ;;
	--build) build=${2:?} ;;
	*) return 1 ;;
	esac
}
script_operand() {
	[ -z "$file" ] || usage
	file=$1
}
upload_args "$@"
[ -n "$file" ] || usage
upload_check
[ -n "$version" ] || die "no app version: set STALLSCOPE_APP_VERSION or pass --app-version"
[ -n "$build" ] || die "no build: set STALLSCOPE_BUILD or pass --build"
[ -f "$file" ] || die "$file: no such file"
command -v gzip >/dev/null || die "gzip is required"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A file gzip'ed already (methodMapping.txt.gz) goes as it is.
if [ "$(head -c 2 "$file" | od -An -tx1 | tr -d ' \n')" = 1f8b ]; then
	body=$file
else
	gzip -c "$file" >"$work/mapping.gz" || die "could not gzip $file"
	body=$work/mapping.gz
fi

upload_post upload-mapping "$body" \
	"$url/api/v1/apps/$(urlencode "$app")/method-mappings?app_version=$(urlencode "$version")&build=$(urlencode "$build")" \
	"Content-Type: text/plain" "Content-Encoding: gzip" || exit 1
echo "uploaded $file as $app $version ($build): $(head -c 500 "$work/reply")"
