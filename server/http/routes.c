/*
 * routes.c — the matcher; see routes.h. The server's own table is
 * server/api/route_table.c.
 */
#include "server/http/routes.h"

#include <string.h>

#include "common/hex.h"

static int split(char *path, char **segs)
{
	if (path[0] != '/')
		return -1;
	if (path[1] == '\0')
		return 0;
	int n = 0;
	char *p = path + 1;
	for (;;) {
		if (n == SRV_MAX_SEGMENTS)
			return -1;
		segs[n++] = p;
		char *slash = strchr(p, '/');
		if (!slash)
			return n;
		*slash = '\0';
		p = slash + 1;
	}
}

/* Matches the split path against PATTERN, filling params on success. */
static bool match_pattern(const char *pattern, char *const *segs, int nsegs, srv_route_match *m)
{
	const char *p = pattern[0] == '/' ? pattern + 1 : pattern;
	m->nparams = 0;
	m->app_param = -1;
	int i = 0;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (i == nsegs)
			return false;
		if (len >= 2 && p[0] == '{' && p[len - 1] == '}') {
			if (segs[i][0] == '\0' || m->nparams == SRV_MAX_PARAMS)
				return false;
			if (len == 5 && !memcmp(p, "{app}", 5))
				m->app_param = (int)m->nparams;
			m->params[m->nparams++] = segs[i];
		} else if (strlen(segs[i]) != len || memcmp(segs[i], p, len)) {
			return false;
		}
		i++;
		p = end ? end + 1 : p + len;
	}
	return i == nsegs;
}

static void add_allowed(srv_route_match *out, const char *method)
{
	size_t used = strlen(out->allow);
	if (strstr(out->allow, method))
		return;
	if (used + strlen(method) + 3 > sizeof out->allow)
		return;
	if (used)
		strcat(out->allow, ", ");
	strcat(out->allow, method);
}

cm_err srv_route_find(const srv_route *table, size_t n, const char *method, char *path,
		      srv_route_match *out)
{
	char *segs[SRV_MAX_SEGMENTS];
	memset(out, 0, sizeof *out);
	out->app_param = -1;
	int nsegs = split(path, segs);
	if (nsegs < 0)
		return ERR_NO_ROUTE;
	srv_route_match m;
	bool other_method = false;
	for (size_t i = 0; i < n; i++) {
		if (!match_pattern(table[i].pattern, segs, nsegs, &m))
			continue;
		if (strcmp(table[i].method, method) != 0) {
			other_method = true;
			add_allowed(out, table[i].method);
			continue;
		}
		m.route = &table[i];
		memcpy(m.allow, out->allow, sizeof m.allow);
		*out = m;
		return ERR_NONE;
	}
	return other_method ? ERR_METHOD_NOT_ALLOWED : ERR_NO_ROUTE;
}

bool srv_route_decode_params(srv_route_match *m)
{
	for (size_t i = 0; i < m->nparams; i++) {
		char *out = m->params[i];
		const char *in = out;
		while (*in) {
			int hi = in[0] == '%' ? cm_hex_digit((unsigned char)in[1]) : -1;
			int lo = hi >= 0 ? cm_hex_digit((unsigned char)in[2]) : -1;
			if (lo < 0) {
				*out++ = *in++;
				continue;
			}
			if (hi == 0 && lo == 0)
				return false;
			*out++ = (char)(hi << 4 | lo);
			in += 3;
		}
		*out = '\0';
	}
	return true;
}
