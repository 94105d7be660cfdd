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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cli_util.h"
#include "server/commands.h"
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

typedef struct outbuf {
	char *p;
	size_t n, cap;
} outbuf;

static void out_reserve(outbuf *o, size_t more)
{
	if (o->n + more <= o->cap)
		return;
	size_t cap = o->cap ? o->cap : 1 << 16;
	while (cap < o->n + more)
		cap *= 2;
	char *p = realloc(o->p, cap);
	if (!p) {
		fprintf(stderr, "stallscope symbolicate: out of memory\n");
		exit(1);
	}
	o->p = p;
	o->cap = cap;
}

static void out_str(outbuf *o, const char *s)
{
	size_t k = strlen(s);
	out_reserve(o, k);
	memcpy(o->p + o->n, s, k);
	o->n += k;
}

/* Numbers by hand: printf's machinery is most of the cost of a line. */
static void out_hex(outbuf *o, uint64_t v)
{
	char tmp[16];
	size_t n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	out_reserve(o, n + 2);
	o->p[o->n++] = '0';
	o->p[o->n++] = 'x';
	while (n)
		o->p[o->n++] = tmp[--n];
}

static void out_dec(outbuf *o, uint64_t v)
{
	char tmp[20];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_reserve(o, n);
	while (n)
		o->p[o->n++] = tmp[--n];
}

/* A JSON string literal: quotes, escapes, control characters as \u00XX. */
static void out_json_string(outbuf *o, const char *s)
{
	size_t k = strlen(s);
	out_reserve(o, k * 6 + 2);
	char *d = o->p + o->n;
	*d++ = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			*d++ = '\\';
			*d++ = (char)*p;
		} else if (*p < 0x20) {
			memcpy(d, "\\u00", 4);
			d[4] = "0123456789abcdef"[*p >> 4];
			d[5] = "0123456789abcdef"[*p & 15];
			d += 6;
		} else {
			*d++ = (char)*p;
		}
	}
	*d++ = '"';
	o->n = (size_t)(d - o->p);
}

static void emit(outbuf *o, uint64_t shown, const sym_frame *frames, size_t n)
{
	out_str(o, "{\"address\":\"");
	out_hex(o, shown);
	out_str(o, "\",\"frames\":[");
	for (size_t i = 0; i < n; i++) {
		const sym_frame *f = &frames[i];
		out_str(o, i ? ",{\"function\":" : "{\"function\":");
		out_json_string(o, f->function);
		out_str(o, ",\"symbol\":");
		out_json_string(o, f->symbol);
		out_str(o, ",\"symbol_address\":\"");
		out_hex(o, f->symbol_address);
		out_str(o, "\"");
		if (f->file) {
			out_str(o, ",\"file\":");
			out_json_string(o, f->file);
		}
		if (f->line) {
			out_str(o, ",\"line\":");
			out_dec(o, f->line);
		}
		if (f->column) {
			out_str(o, ",\"column\":");
			out_dec(o, f->column);
		}
		out_str(o, f->inlined ? ",\"inlined\":true}" : ",\"inlined\":false}");
	}
	out_str(o, "]}\n");
}

typedef struct session {
	sym_cache *cache;
	sym_cache_info info;
	bool has_load;
	uint64_t load_address;
	bool caller_adjust;
	size_t index; /* position in the stack, for --caller-adjust */
	outbuf out;
} session;

static void symbolicate_one(session *s, const char *token)
{
	uint64_t addr;
	if (!cli_parse_u64(token, &addr)) {
		out_str(&s->out, "{\"address\":");
		out_json_string(&s->out, token);
		out_str(&s->out, ",\"frames\":[],\"error\":\"not an address\"}\n");
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
	emit(&s->out, addr, frames, n);
	s->index++;
	if (s->out.n > (1 << 20)) {
		fwrite(s->out.p, 1, s->out.n, stdout);
		s->out.n = 0;
	}
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
			if (!cli_parse_u64(optarg, &s.load_address)) {
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
	if (cli_open_cache(path, arch, &s.cache, &owned, &err) != SYM_OK) {
		fprintf(stderr, "stallscope symbolicate: %s\n", err.msg);
		return 1;
	}
	sym_cache_get_info(s.cache, &s.info);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);

	if (optind < argc) {
		for (int i = optind; i < argc; i++)
			symbolicate_one(&s, argv[i]);
	} else {
		char *line = NULL;
		size_t cap = 0;
		ssize_t len;
		while ((len = getline(&line, &cap, stdin)) > 0) {
			char *save = NULL;
			for (char *tok = strtok_r(line, " \t\r\n", &save); tok;
			     tok = strtok_r(NULL, " \t\r\n", &save))
				symbolicate_one(&s, tok);
		}
		free(line);
	}
	fwrite(s.out.p, 1, s.out.n, stdout);
	free(s.out.p);
	sym_cache_close(s.cache);
	free(owned);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "stallscope symbolicate: writing output: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
