/* util.c — see util.h. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/cli/util.h"

bool srv_cli_parse_u64(const char *text, uint64_t *out)
{
	if (!text || !*text)
		return false;
	int base = 10;
	const char *p = text;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!isxdigit((unsigned char)*p) || (base == 10 && !isdigit((unsigned char)*p)))
		return false;
	errno = 0;
	char *end = NULL;
	unsigned long long v = strtoull(p, &end, base);
	if (errno == ERANGE || *end != '\0')
		return false;
	*out = v;
	return true;
}

bool srv_cli_is_symcache(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	char magic[8];
	bool yes = fread(magic, 1, 8, f) == 8 && !memcmp(magic, "SSYMCACH", 8);
	fclose(f);
	return yes;
}

/*
 * The dSYM llvm-symbolizer and atos would pair with the binary at PATH:
 * PATH.dSYM/Contents/Resources/DWARF/<basename> (or, for PATH ending in
 * .dSYM, PATH/Contents/…), used only when a slice there has the same arch
 * and UUID as slice SLICE of OBJ. NULL when there is none.
 */
static sym_object *find_dsym(const char *path, const sym_object *obj, size_t slice,
			     size_t *out_slice)
{
	sym_slice_info want;
	sym_object_slice_info(obj, slice, &want);
	if (!want.has_uuid)
		return NULL;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t plen = strlen(path);
	bool is_bundle = plen >= 5 && !strcmp(path + plen - 5, ".dSYM");
	char candidate[4096];
	int k = snprintf(candidate, sizeof candidate, "%s%s/Contents/Resources/DWARF/%s",
			 path, is_bundle ? "" : ".dSYM", base);
	if (k < 0 || (size_t)k >= sizeof candidate)
		return NULL;
	sym_object *dsym = NULL;
	sym_error ignored;
	if (sym_object_open(candidate, &dsym, &ignored) != SYM_OK)
		return NULL;
	for (size_t i = 0; i < sym_object_slice_count(dsym); i++) {
		sym_slice_info got;
		sym_object_slice_info(dsym, i, &got);
		if (got.arch == want.arch && got.has_uuid &&
		    !memcmp(got.uuid, want.uuid, 16)) {
			*out_slice = i;
			return dsym;
		}
	}
	sym_object_free(dsym);
	return NULL;
}

int srv_cli_open_cache(const char *path, sym_arch arch, sym_cache **out_cache, uint8_t **out_owned,
		       sym_error *err)
{
	*out_cache = NULL;
	*out_owned = NULL;
	if (srv_cli_is_symcache(path)) {
		int rc = sym_cache_open(path, out_cache, err);
		if (rc)
			return rc;
		sym_cache_info info;
		sym_cache_get_info(*out_cache, &info);
		if (arch != SYM_ARCH_UNKNOWN && info.arch != arch) {
			snprintf(err->msg, sizeof err->msg, "symcache is for %s, not %s",
				 sym_arch_name(info.arch), sym_arch_name(arch));
			sym_cache_close(*out_cache);
			*out_cache = NULL;
			return SYM_ERR_NOT_FOUND;
		}
		return SYM_OK;
	}
	sym_object *obj = NULL;
	int rc = sym_object_open(path, &obj, err);
	if (rc)
		return rc;
	size_t slice = 0;
	uint8_t *buf = NULL;
	size_t len = 0;
	rc = sym_object_select(obj, arch, &slice, err);
	if (rc == SYM_OK) {
		size_t dslice = 0;
		sym_object *dsym = find_dsym(path, obj, slice, &dslice);
		rc = sym_cache_build_split(obj, slice, dsym, dslice, &buf, &len, NULL, err);
		sym_object_free(dsym);
	}
	sym_object_free(obj);
	if (rc == SYM_OK)
		rc = sym_cache_from_memory(buf, len, out_cache, err);
	if (rc) {
		free(buf);
		return rc;
	}
	*out_owned = buf;
	return SYM_OK;
}

void srv_cli_shipped_path(const char *rel, char *out, size_t cap)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		for (int up = 0; up < 2; up++) {
			char *slash = strrchr(exe, '/');
			if (slash)
				*slash = '\0';
		}
		struct stat st;
		if (snprintf(out, cap, "%s/%s", exe, rel) < (int)cap && stat(out, &st) == 0)
			return;
	}
	snprintf(out, cap, "%s", rel);
}
