# scripts/upload-lib.sh — what scripts/upload-dsyms.sh and
# scripts/upload-mapping.sh share, sourced by both (not run): their common
# settings and options, URL encoding, and the retried, streamed POST with
# the upload token. Keep the two scripts beside it when copying them into
# a build.
#
# The sourcing script sets prog (the name its messages start with) and,
# before upload_post, work (its temporary folder).

url=${STALLSCOPE_URL:-}
app=${STALLSCOPE_APP:-}
token=${STALLSCOPE_UPLOAD_TOKEN:-}
retries=5
delay=1

die() { echo "$prog: $*" >&2; exit 1; }

# upload_option ARG VALUE: takes the options both scripts have (server,
# app, token, retries); returns 1 when ARG is not one of them.
upload_option() {
	case "$1" in
	-u | --url) url=${2:?} ;;
	-a | --app) app=${2:?} ;;
	-t | --token) token=${2:?} ;;
	--retries) retries=${2:?} ;;
	--retry-delay) delay=${2:?} ;;
	*) return 1 ;;
	esac
}

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" >&2; exit 2; }

# upload_args "$@": the command line. The options of upload_option, -h;
# the script's own options go to its script_option ARG VALUE (returns 1
# when ARG is none of them), its operands to script_operand ARG.
upload_args() {
	while [ $# -gt 0 ]; do
		if upload_option "$@" || script_option "$@"; then
			shift 2
			continue
		fi
		case "$1" in
		-h | --help) usage ;;
		-*) echo "$prog: unknown option $1" >&2; usage ;;
		*) script_operand "$1"; shift ;;
		esac
	done
}

# upload_check: the settings every upload needs, or exit 1 saying which.
upload_check() {
	[ -n "$url" ] || die "no server: set STALLSCOPE_URL or pass -u"
	[ -n "$app" ] || die "no app: set STALLSCOPE_APP or pass -a"
	[ -n "$token" ] || die "no token: set STALLSCOPE_UPLOAD_TOKEN or pass -t"
	[[ $retries =~ ^[0-9]+$ ]] || die "--retries takes a number"
	command -v curl >/dev/null || die "curl is required"
	url=${url%/}
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

# The code and message of a {"error":{"code","message"}} reply in FILE,
# else its first bytes as they are.
upload_error() {
	local code message
	code=$(sed -n 's/.*"code":"\([^"]*\)".*/\1/p' "$1" 2>/dev/null | head -n 1)
	message=$(sed -n 's/.*"message":"\(\([^"\\]\|\\.\)*\)".*/\1/p' "$1" 2>/dev/null |
		head -n 1)
	if [ -n "$code" ]; then
		echo "$code: $message"
	else
		head -c 500 "$1" 2>/dev/null
	fi
}

# upload_post LABEL FILE TARGET [HEADER…]: POSTs FILE to TARGET with the
# upload token and HEADERs. Connection errors and 5xx answers are retried
# with exponential backoff (delay, 2×, 4×, … seconds; retries times); a
# 4xx answer is final. Returns 0 on 200 or 201 with the reply in
# $work/reply; else says why on stderr, LABEL first, and returns 1.
upload_post() {
	local label=$1 file=$2 target=$3 attempt=0 wait=$delay status h
	local headers=()
	shift 3
	for h in "$@"; do
		headers+=(-H "$h")
	done
	while :; do
		# -T streams the file (a 2 GB dSYM is never held in memory) and
		# sends Expect: 100-continue, so refusals come before the body.
		# printf is a builtin: the token is never in an argv.
		status=$(printf 'Authorization: Bearer %s\n' "$token" |
			curl -sS -o "$work/reply" -w '%{http_code}' -X POST -H @- \
			"${headers[@]}" -T "$file" "$target" 2>"$work/curl.err") || status=000
		case "$status" in
		200 | 201)
			return 0 ;;
		000 | 5??)
			attempt=$((attempt + 1))
			if [ "$attempt" -gt "$retries" ]; then
				echo "$label: giving up after $attempt attempts (last: HTTP $status $(cat "$work/curl.err" "$work/reply" 2>/dev/null | head -c 300))" >&2
				return 1
			fi
			echo "$label: HTTP $status, retrying in ${wait}s" >&2
			sleep "$wait"
			wait=$((wait * 2)) ;;
		*)
			echo "$label: HTTP $status $(upload_error "$work/reply")" >&2
			return 1 ;;
		esac
	done
}
