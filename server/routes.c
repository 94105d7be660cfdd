/*
 * routes.c — every endpoint of the server in one table, and the matcher.
 * See routes.h.
 */
#include "server/routes.h"

#include <string.h>

#include "common/hex.h"
#include "server/auth.h"
#include "server/handlers.h"

static const srv_route routes[] = {
	{"GET", "/healthz", srv_h_healthz_get, 0, SRV_BODY_NONE},
	{"GET", "/metrics", srv_h_metrics_get, 0, SRV_BODY_NONE},
	{"GET", "/", srv_h_web_get, 0, SRV_BODY_NONE},
	{"GET", "/web/{file}", srv_h_web_get, 0, SRV_BODY_NONE},
	{"POST", "/api/v1/apps/{app}/dsyms", srv_h_dsyms_post, SRV_AUTH_UPLOAD, SRV_BODY_FILE},
	{"GET", "/api/v1/apps/{app}/dsyms", srv_h_dsyms_get, SRV_AUTH_UPLOAD | SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
	{"DELETE", "/api/v1/apps/{app}/dsyms/{uuid}", srv_h_dsyms_delete,
	 SRV_AUTH_UPLOAD | SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/dsyms/missing", srv_h_dsyms_missing_get,
	 SRV_AUTH_UPLOAD | SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"POST", "/api/v1/ingest", srv_h_ingest_post, SRV_AUTH_INGEST, SRV_BODY_MEMORY},
	{"POST", "/api/v1/ingest/metrickit", srv_h_ingest_metrickit_post, SRV_AUTH_INGEST,
	 SRV_BODY_MEMORY},
	{"POST", "/api/v1/ingest/kscrash", srv_h_ingest_kscrash_post, SRV_AUTH_INGEST,
	 SRV_BODY_MEMORY},
	{"POST", "/api/v1/ingest/ips", srv_h_ingest_ips_post, SRV_AUTH_INGEST, SRV_BODY_MEMORY},
	{"POST", "/api/v1/apps/{app}/backfill", srv_h_backfill_post, SRV_AUTH_ADMIN,
	 SRV_BODY_MEMORY},
	{"GET", "/api/v1/sampling", srv_h_sampling_get, SRV_AUTH_INGEST, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/config", srv_h_config_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"PUT", "/api/v1/apps/{app}/config", srv_h_config_put, SRV_AUTH_ADMIN, SRV_BODY_JSON},
	{"GET", "/api/v1/apps/{app}/whitelist", srv_h_whitelist_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"PUT", "/api/v1/apps/{app}/whitelist/{user_id}", srv_h_whitelist_put, SRV_AUTH_ADMIN,
	 SRV_BODY_MEMORY},
	{"DELETE", "/api/v1/apps/{app}/whitelist/{user_id}", srv_h_whitelist_delete, SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
	{"GET", "/api/v1/reports/{id}", srv_h_report_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/reports/{id}/trace", srv_h_report_trace_get, SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/groups", srv_h_groups_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/groups/{key1}", srv_h_group_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/groups/{key1}/{key2}/reports", srv_h_group_reports_get,
	 SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/dimensions", srv_h_dimensions_get, SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
};

const srv_route *srv_routes(size_t *out_count)
{
	*out_count = sizeof routes / sizeof routes[0];
	return routes;
}

/* Splits PATH in place into at most SRV_MAX_SEGMENTS segments; -1 beyond. */
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

cm_err srv_route_find(const srv_route *table, size_t n, const char *method,
		      char *path, srv_route_match *out)
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
