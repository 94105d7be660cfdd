/*
 * cmd_symbolicate.c — `stallscope symbolicate`: offline symbolication like
 * atos / llvm-symbolizer, JSON Lines out (SPEC §3.5).
 *
 * A Mach-O/DWARF debug file is converted to an in-memory symcache first, so
 * this command exercises exactly the lookup the server uses; a symcache file
 * is mapped as it is.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/cli/util.h"
#include "server/cli/commands.h"
#include "symbolizer/symbolizer.h"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: stallscope symbolicate --debug-file PATH [--arch ARCH]\n"
		"                              [--load-address ADDR] [--caller-adjust] [ADDR...]\n"
		"\n"
		"Symbolizes addresses (hex with 0x, or decimal) given as arguments, or one\n"
		"per line on stdin, and prints one JSON object per address, in order:\n"
		"  {\"address\":\"0x…\",\"frames\":[{\"function\",\"symbol\",\"symbol_address\",\n"
		"    \"file\",\"line\",\"column\",\"inlined\"}…]}   (innermost frame first)\n"
		"\n"
		"  --debug-file PATH    Mach-O/DWARF file (thin or fat, dSYM or binary) or symcache\n"
		"  --arch ARCH          slice of a fat file (arm64, arm64e, x86_64, armv7, i386, …)\n"
		"  --load-address ADDR  addresses are runtime addresses of an image loaded at ADDR\n"
		"  --caller-adjust      the addresses are one stack, innermost first: every one\n"
		"                       after the first is a return address, looked up at addr-1\n");
}

/*
 * The output: lines accumulate in one buffer written to stdout in large
 * pieces. Each frame reserves room once for the most its text can take (a
 * string byte escapes to at most six), then its pieces are stored without
 * further checks: through cm_jw, a call, a bounds check and a strlen per
 * key made writing a third of a warm run (issue 46). The text is byte for
 * byte what sym_frame_json writes through cm_jw (tests/unit/
 * test_cmd_symbolicate.c and tests/oracle/test_cli.py hold it there).
 */
typedef struct out {
	char *data;
	size_t len, cap;
} out;

#define OUT_FLUSH_AT (1u << 20)
/* A frame's text beyond its three strings: keys, quotes, nulls, the hex
 * address, two decimals and the comma before it, rounded up. */
#define FRAME_FIXED 160
/* "<literal>" as the pointer and length put() takes. */
#define LIT(s) s, sizeof(s) - 1

static _Noreturn void out_of_memory(void)
{
	fprintf(stderr, "stallscope symbolicate: out of memory\n");
	exit(1);
}

/* Where N more bytes of O may be written; exits when memory ran out, as
 * nothing sensible can be printed then. */
static char *out_room(out *o, size_t n)
{
	if (o->cap - o->len >= n)
		return o->data + o->len;
	size_t cap = o->cap ? o->cap : 2 * OUT_FLUSH_AT;
	while (cap - o->len < n) {
		if (cap > SIZE_MAX / 2)
			out_of_memory();
		cap *= 2;
	}
	char *d = realloc(o->data, cap);
	if (!d)
		out_of_memory();
	o->data = d;
	o->cap = cap;
	return d + o->len;
}

/* Room for a string of N bytes escaped, plus FIXED; N comes from input. */
static char *out_room_text(out *o, size_t n, size_t fixed)
{
	if (n > (SIZE_MAX - fixed) / 6)
		out_of_memory();
	return out_room(o, 6 * n + fixed);
}

static char *put(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

static char *put_hex(char *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = 1;
	for (uint64_t rest = v >> 4; rest; rest >>= 4)
		n++;
	for (size_t i = n; i-- > 0; v >>= 4)
		p[i] = digits[v & 15];
	return p + n;
}

static char *put_dec(char *p, uint32_t v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";
	size_t n = 1;
	for (uint32_t rest = v / 10; rest; rest /= 10)
		n++;
	size_t i = n;
	for (; v >= 100; v /= 100) {
		i -= 2;
		memcpy(p + i, pairs + 2 * (v % 100), 2);
	}
	if (v >= 10)
		memcpy(p, pairs + 2 * v, 2);
	else
		p[0] = (char)('0' + v);
	return p + n;
}

/* One byte that jansson escapes, as it does: short forms, else \u00XX. */
static char *put_escape(char *p, unsigned char c)
{
	static const char hex[] = "0123456789ABCDEF";
	switch (c) {
	case '"': return put(p, LIT("\\\""));
	case '\\': return put(p, LIT("\\\\"));
	case '\b': return put(p, LIT("\\b"));
	case '\f': return put(p, LIT("\\f"));
	case '\n': return put(p, LIT("\\n"));
	case '\r': return put(p, LIT("\\r"));
	case '\t': return put(p, LIT("\\t"));
	default: {
		char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
		return put(p, esc, sizeof esc);
	}
	}
}

static bool needs_escape(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\';
}

/* Index of the first byte of S[FROM, N) that JSON escapes, or N. Eight
 * bytes at a time (a byte below 0x20, '"' or '\\' sets its top bit in
 * HIT): names and paths are long runs with nothing to escape. */
static size_t next_escape(const char *s, size_t from, size_t n)
{
	const uint64_t ones = 0x0101010101010101u;
	size_t i = from;
	for (; i + 8 <= n; i += 8) {
		uint64_t x, q, b;
		memcpy(&x, s + i, 8);
		q = x ^ (ones * '"');
		b = x ^ (ones * '\\');
		uint64_t hit = ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b);
		if (!(hit & (ones * 0x80)))
			continue;
		for (size_t j = i; j < i + 8; j++)
			if (needs_escape((unsigned char)s[j]))
				return j;
	}
	for (; i < n; i++)
		if (needs_escape((unsigned char)s[i]))
			return i;
	return n;
}

/* S (N bytes) quoted and escaped as cm_json_put_string does; NULL is null. */
static char *put_string(char *p, const char *s, size_t n)
{
	if (!s)
		return put(p, LIT("null"));
	*p++ = '"';
	size_t run = 0;
	for (size_t i = next_escape(s, 0, n); i < n; i = next_escape(s, run, n)) {
		p = put_escape(put(p, s + run, i - run), (unsigned char)s[i]);
		run = i + 1;
	}
	p = put(p, s + run, n - run);
	*p++ = '"';
	return p;
}

/* F as sym_frame_json(w, F, true, F->symbol_address) writes it, preceded
 * by a comma unless FIRST. */
static void put_frame(out *o, const sym_frame *f, bool first)
{
	size_t nf = f->function ? strlen(f->function) : 0;
	size_t ns = f->symbol ? strlen(f->symbol) : 0;
	size_t nfile = f->file ? strlen(f->file) : 0;
	if (nf > SIZE_MAX / 3 || ns > SIZE_MAX / 3 || nfile > SIZE_MAX / 3)
		out_of_memory();
	char *p = out_room_text(o, nf + ns + nfile, FRAME_FIXED);
	if (!first)
		*p++ = ',';
	p = put_string(put(p, LIT("{\"function\":")), f->function, nf);
	p = put_string(put(p, LIT(",\"symbol\":")), f->symbol, ns);
	p = put_hex(put(p, LIT(",\"symbol_address\":\"0x")), f->symbol_address);
	*p++ = '"';
	if (f->file)
		p = put_string(put(p, LIT(",\"file\":")), f->file, nfile);
	if (f->line)
		p = put_dec(put(p, LIT(",\"line\":")), f->line);
	if (f->column)
		p = put_dec(put(p, LIT(",\"column\":")), f->column);
	if (f->inlined)
		p = put(p, LIT(",\"inlined\":true}"));
	else
		p = put(p, LIT(",\"inlined\":false}"));
	o->len = (size_t)(p - o->data);
}

/* One JSON line for the address SHOWN and its N frames. */
static void put_line(out *o, uint64_t shown, const sym_frame *frames, size_t n)
{
	char *p = out_room(o, 64);
	p = put(p, LIT("{\"address\":\"0x"));
	p = put_hex(p, shown);
	p = put(p, LIT("\",\"frames\":["));
	o->len = (size_t)(p - o->data);
	for (size_t i = 0; i < n; i++)
		put_frame(o, &frames[i], i == 0);
	p = put(out_room(o, 3), LIT("]}\n"));
	o->len = (size_t)(p - o->data);
}

/* The line for TOKEN (LEN bytes), which is not an address. */
static void put_not_an_address(out *o, const char *token, size_t len)
{
	char *p = out_room_text(o, len, 64);
	p = put_string(put(p, LIT("{\"address\":")), token, len);
	p = put(p, LIT(",\"frames\":[],\"error\":\"not an address\"}\n"));
	o->len = (size_t)(p - o->data);
}

typedef struct session {
	sym_cache *cache;
	sym_cache_info info;
	bool has_load;
	uint64_t load_address;
	bool caller_adjust;
	size_t index; /* position in the stack, for --caller-adjust */
	out out;      /* lines not yet written to stdout */
} session;

/* Writes O's lines to stdout and empties it. */
static void flush_lines(out *o)
{
	fwrite(o->data, 1, o->len, stdout);
	o->len = 0;
}

static unsigned hex_digit(unsigned char c)
{
	if ((unsigned)c - '0' < 10u)
		return (unsigned)c - '0';
	c |= 0x20;
	if ((unsigned)c - 'a' < 6u)
		return (unsigned)c - 'a' + 10;
	return 16;
}

/* TOKEN (LEN bytes, NUL-terminated) read as srv_cli_parse_u64 reads it.
 * The forms stacks are written in (0x and up to 16 digits, or up to 19
 * decimal digits, which cannot overflow) are read here without strtoull;
 * anything else is left to srv_cli_parse_u64, so its rules stay the only
 * ones. */
static bool parse_address(const char *token, size_t len, uint64_t *out_addr)
{
	uint64_t v = 0;
	size_t i = 0;
	bool hex = len > 2 && len <= 18 && token[0] == '0' && (token[1] | 0x20) == 'x';
	if (hex) {
		for (i = 2; i < len; i++) {
			unsigned d = hex_digit((unsigned char)token[i]);
			if (d > 15)
				break;
			v = v << 4 | d;
		}
	} else if (len > 0 && len <= 19) {
		for (; i < len && (unsigned)token[i] - '0' < 10u; i++)
			v = v * 10 + ((unsigned)token[i] - '0');
	}
	if (i == len && len > 0) {
		*out_addr = v;
		return true;
	}
	return srv_cli_parse_u64(token, out_addr);
}

/* TOKEN: LEN bytes, NUL-terminated. */
static void symbolicate_one(session *s, const char *token, size_t len)
{
	uint64_t addr;
	if (!parse_address(token, len, &addr)) {
		put_not_an_address(&s->out, token, len);
		s->index++;
		return;
	}
	sym_frame frames[SYM_MAX_FRAMES];
	size_t n = 0;
	uint64_t file = sym_addr_strip_pac(addr, s->info.arch);
	bool ok = true;
	if (s->has_load)
		ok = sym_addr_runtime_to_file(file, s->load_address, 0, s->info.base_address,
					      &file);
	if (ok) {
		uint64_t at = s->caller_adjust ? sym_addr_caller_adjust(file, s->index) : file;
		n = sym_cache_lookup(s->cache, at, frames, SYM_MAX_FRAMES);
	}
	put_line(&s->out, addr, frames, n);
	s->index++;
	if (s->out.len > OUT_FLUSH_AT)
		flush_lines(&s->out);
}

/*
 * The input: stdin read in blocks into one buffer and cut into tokens in
 * place, by the rules of the line reader it replaces (getline, then
 * strtok_r on " \t\r\n"): tokens are separated by those four bytes, and a
 * NUL hides the rest of its line. The buffer grows only for a token longer
 * than a block, never per line.
 */
typedef struct in {
	char *data;
	size_t len, cap;
	size_t pos;	/* data[pos, len) is not looked at yet */
	bool skip_line; /* after a NUL: bytes up to the next '\n' are ignored */
	bool eof;	/* read returned end of input or an error */
} in;

#define IN_BLOCK (1u << 16)

static bool is_separator(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Drops R's bytes before FROM (R->pos must be FROM) and reads a block more
 * behind the rest, keeping a byte free for the NUL that ends a token. */
static void in_fill(in *r, size_t from)
{
	if (from) /* never on the first call, when data is still NULL */
		memmove(r->data, r->data + from, r->len - from);
	r->len -= from;
	r->pos -= from;
	if (r->cap - r->len < IN_BLOCK + 1) {
		size_t cap = r->cap ? 2 * r->cap : 2 * IN_BLOCK;
		if (cap < r->cap)
			out_of_memory();
		char *d = realloc(r->data, cap);
		if (!d)
			out_of_memory();
		r->data = d;
		r->cap = cap;
	}
	ssize_t got;
	do
		got = read(STDIN_FILENO, r->data + r->len, r->cap - r->len - 1);
	while (got < 0 && errno == EINTR);
	if (got <= 0)
		r->eof = true;
	else
		r->len += (size_t)got;
}

/* Moves R past separators and hidden bytes; false at the end of input. */
static bool in_skip(in *r)
{
	for (;;) {
		for (; r->pos < r->len; r->pos++) {
			char c = r->data[r->pos];
			if (r->skip_line)
				r->skip_line = c != '\n';
			else if (c == '\0')
				r->skip_line = true;
			else if (!is_separator(c))
				return true;
		}
		if (r->eof)
			return false;
		in_fill(r, r->pos);
	}
}

/* The next token, NUL-terminated in place and valid until the next call,
 * its length in *OUT_LEN; NULL at the end of input. */
static char *in_token(in *r, size_t *out_len)
{
	if (!in_skip(r))
		return NULL;
	size_t end = r->pos;
	for (;;) {
		while (end < r->len && r->data[end] != '\0' && !is_separator(r->data[end]))
			end++;
		if (end < r->len || r->eof)
			break;
		size_t start = r->pos;
		in_fill(r, start);
		end -= start;
	}
	char *token = r->data + r->pos;
	*out_len = end - r->pos;
	r->pos = end;
	if (end < r->len) {
		r->skip_line = r->data[end] == '\0';
		r->pos++;
	}
	r->data[end] = '\0';
	return token;
}

int srv_cmd_symbolicate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"debug-file", required_argument, NULL, 'f'},
		{"arch", required_argument, NULL, 'a'},
		{"load-address", required_argument, NULL, 'l'},
		{"caller-adjust", no_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *path = NULL, *arch_name = NULL;
	session s;
	memset(&s, 0, sizeof s);
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "f:a:l:ch", opts, NULL)) != -1) {
		switch (opt) {
		case 'f': path = optarg; break;
		case 'a': arch_name = optarg; break;
		case 'l':
			if (!srv_cli_parse_u64(optarg, &s.load_address)) {
				fprintf(stderr, "stallscope symbolicate: bad --load-address '%s'\n",
					optarg);
				return 2;
			}
			s.has_load = true;
			break;
		case 'c': s.caller_adjust = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	sym_arch arch = SYM_ARCH_UNKNOWN;
	if (arch_name && (arch = sym_arch_parse(arch_name)) == SYM_ARCH_UNKNOWN) {
		fprintf(stderr, "stallscope symbolicate: unknown arch '%s'\n", arch_name);
		return 2;
	}
	sym_error err;
	uint8_t *owned = NULL;
	if (srv_cli_open_cache(path, arch, &s.cache, &owned, &err) != SYM_OK) {
		fprintf(stderr, "stallscope symbolicate: %s\n", err.msg);
		return 1;
	}
	sym_cache_get_info(s.cache, &s.info);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);

	in input = {0};
	if (optind < argc) {
		for (int i = optind; i < argc; i++)
			symbolicate_one(&s, argv[i], strlen(argv[i]));
	} else {
		size_t len;
		for (char *token; (token = in_token(&input, &len));)
			symbolicate_one(&s, token, len);
	}
	flush_lines(&s.out);
	free(input.data);
	free(s.out.data);
	sym_cache_close(s.cache);
	free(owned);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "stallscope symbolicate: writing output: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
