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

#include "common/jsonw.h"
#include "server/cli/util.h"
#include "server/cli/commands.h"
#include "symbolizer/frame_json.h"
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

/* One JSON line for the address SHOWN and its N frames. */
static void emit(cm_jw *w, uint64_t shown, const sym_frame *frames, size_t n)
{
	cm_jw_object(w);
	cm_jw_key(w, "address");
	cm_jw_hex(w, shown);
	cm_jw_key(w, "frames");
	cm_jw_array(w);
	for (size_t i = 0; i < n; i++)
		sym_frame_json(w, &frames[i], true, frames[i].symbol_address);
	cm_jw_array_end(w);
	cm_jw_object_end(w);
	cm_jw_line_end(w);
}

typedef struct session {
	sym_cache *cache;
	sym_cache_info info;
	bool has_load;
	uint64_t load_address;
	bool caller_adjust;
	size_t index; /* position in the stack, for --caller-adjust */
	cm_jw out;    /* lines not yet written to stdout */
} session;

/* Writes W's complete lines to stdout and empties it; exits when an
 * allocation failed, as nothing sensible can be printed then. */
static void flush_lines(cm_jw *w)
{
	if (w->buf.failed) {
		fprintf(stderr, "stallscope symbolicate: out of memory\n");
		exit(1);
	}
	fwrite(w->buf.data, 1, w->buf.len, stdout);
	w->buf.len = 0;
}

static void symbolicate_one(session *s, const char *token)
{
	uint64_t addr;
	if (!srv_cli_parse_u64(token, &addr)) {
		cm_jw_object(&s->out);
		cm_jw_key(&s->out, "address");
		cm_jw_string(&s->out, token);
		cm_jw_key(&s->out, "frames");
		cm_jw_array(&s->out);
		cm_jw_array_end(&s->out);
		cm_jw_key(&s->out, "error");
		cm_jw_string(&s->out, "not an address");
		cm_jw_object_end(&s->out);
		cm_jw_line_end(&s->out);
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
	if (s->out.buf.len > (1 << 20))
		flush_lines(&s->out);
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
	flush_lines(&s.out);
	free(s.out.buf.data);
	sym_cache_close(s.cache);
	free(owned);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "stallscope symbolicate: writing output: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
