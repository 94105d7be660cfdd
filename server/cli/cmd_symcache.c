/*
 * cmd_symcache.c — `stallscope symcache`: write the symcache of one slice,
 * or describe an existing symcache.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cli/util.h"
#include "server/cli/commands.h"
#include "symbolizer/symbolizer.h"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: stallscope symcache DEBUG_FILE -o OUT [--arch ARCH] [--threads N]\n"
		"       stallscope symcache --info FILE\n"
		"\n"
		"Converts one slice of a Mach-O/DWARF file (thin or fat) into a symcache, the\n"
		"mmap-able lookup file the server uses (docs/SYMCACHE.md), and prints what it\n"
		"wrote as one JSON object. --info prints a symcache's header the same way.\n"
		"--threads N converts the DWARF's units on N threads (1-64; default\n"
		"STALLSCOPE_SYMCACHE_THREADS, else the online CPUs): the bytes are the same.\n");
}

static void print_info(const sym_cache_info *info, const char *path)
{
	char uuid[37] = "";
	if (info->has_uuid)
		sym_uuid_format(info->uuid, uuid);
	printf("{\"path\":\"%s\",\"version\":%u,\"uuid\":\"%s\",\"arch\":\"%s\","
	       "\"base_address\":\"0x%" PRIx64 "\",\"text_size\":%" PRIu64 ","
	       "\"has_dwarf\":%s,\"functions\":%u,\"scopes\":%u,\"ranges\":%u,"
	       "\"lines\":%u,\"files\":%u,\"bytes\":%" PRIu64 "}\n",
	       path, info->version, uuid, sym_arch_name(info->arch), info->base_address,
	       info->text_size, info->has_dwarf ? "true" : "false", info->functions,
	       info->scopes, info->ranges, info->lines, info->files, info->bytes);
}

static int info_command(const char *path)
{
	sym_cache *cache = NULL;
	sym_error err;
	if (sym_cache_open(path, &cache, &err) != SYM_OK) {
		fprintf(stderr, "stallscope symcache: %s\n", err.msg);
		return 1;
	}
	sym_cache_info info;
	sym_cache_get_info(cache, &info);
	print_info(&info, path);
	sym_cache_close(cache);
	return 0;
}

/* --threads: 1 to 64, else 0. */
static unsigned parse_threads(const char *s)
{
	char *end = NULL;
	unsigned long n = strtoul(s, &end, 10);
	return *s >= '0' && *s <= '9' && !*end && n >= 1 && n <= 64 ? (unsigned)n : 0;
}

int srv_cmd_symcache(int argc, char **argv)
{
	/* clang-format off */
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"arch", required_argument, NULL, 'a'},
		{"info", required_argument, NULL, 'i'},
		{"threads", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	/* clang-format on */
	const char *out = NULL, *arch_name = NULL, *info = NULL;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:a:i:t:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 't':
			if (!parse_threads(optarg)) {
				fprintf(stderr, "stallscope symcache: --threads takes 1 to 64\n");
				return 2;
			}
			sym_cache_set_threads(parse_threads(optarg));
			break;
		case 'a': arch_name = optarg; break;
		case 'i': info = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (info)
		return optind == argc && !out ? info_command(info) : (usage(stderr), 2);
	if (optind != argc - 1 || !out) {
		usage(stderr);
		return 2;
	}
	const char *input = argv[optind];
	sym_arch arch = SYM_ARCH_UNKNOWN;
	if (arch_name && (arch = sym_arch_parse(arch_name)) == SYM_ARCH_UNKNOWN) {
		fprintf(stderr, "stallscope symcache: unknown arch '%s'\n", arch_name);
		return 2;
	}
	sym_error err;
	sym_object *obj = NULL;
	size_t slice = 0;
	if (sym_object_open(input, &obj, &err) != SYM_OK ||
	    sym_object_select(obj, arch, &slice, &err) != SYM_OK ||
	    sym_cache_write(obj, slice, out, 0644, NULL, &err) != SYM_OK) {
		fprintf(stderr, "stallscope symcache: %s\n", err.msg);
		sym_object_free(obj);
		return 1;
	}
	sym_object_free(obj);
	return info_command(out);
}
