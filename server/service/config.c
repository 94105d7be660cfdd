/* config.c — STALLSCOPE_* settings; see config.h. */
#include "server/service/config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum var_kind {
	V_TEXT,
	V_LISTEN,
	V_SIZE,
	V_UINT,
	V_LEVEL,
	V_NETMASKS,
} var_kind;

#define FIELD(f) offsetof(srv_config, f), sizeof(((srv_config *)0)->f)

/* Every setting: loading, `--help` and docs/OPERATIONS.md's table
 * (`serve --settings`, scripts/settings-doc.py) come from it; README.md's
 * list is checked against it. */
static const struct var {
	const char *name;
	var_kind kind;
	size_t offset, size;
	const char *def; /* NULL: required or computed (see help) */
	uint64_t min, max;
	const char *help;
} vars[] = {
	{"STALLSCOPE_DATABASE_URL", V_TEXT, FIELD(database_url), NULL, 0, 0,
	 "PostgreSQL connection URL or key=value string (required)"},
	{"STALLSCOPE_READ_DATABASE_URL", V_TEXT, FIELD(read_database_url), NULL, 0, 0,
	 "a streaming replica's URL: the dashboard's aggregate reads go there and "
	 "fall back to the primary while it is down (docs/SERVER.md; empty: none)"},
	{"STALLSCOPE_LISTEN", V_LISTEN, FIELD(listen_host), "127.0.0.1:8080", 0, 0,
	 "address:port to serve HTTP on ([::1]:8080 for IPv6)"},
	{"STALLSCOPE_DATA_DIR", V_TEXT, FIELD(data_dir), "var/", 0, 0,
	 "where debug files, symcaches and in-flight uploads live"},
	{"STALLSCOPE_DB_CONNECTIONS", V_UINT, FIELD(db_connections), NULL, 2, 256,
	 "PostgreSQL connections HTTP requests share (default: 4 per CPU, 8 to 64)"},
	{"STALLSCOPE_WORKERS", V_UINT, FIELD(workers), "2", 1, 64,
	 "threads building symcaches of uploads"},
	{"STALLSCOPE_MAX_BODY", V_SIZE, FIELD(max_body), "16M", 1024, UINT64_C(1) << 32,
	 "largest request body kept in memory (JSON)"},
	{"STALLSCOPE_MAX_UPLOAD", V_SIZE, FIELD(max_upload), "4G", 1024, UINT64_C(1) << 44,
	 "largest dSYM upload (streamed to disk)"},
	{"STALLSCOPE_MAX_UNZIPPED", V_SIZE, FIELD(max_unzipped), "8G", 1024, UINT64_C(1) << 44,
	 "most bytes extracted from one uploaded zip"},
	{"STALLSCOPE_MAX_ZIP_ENTRIES", V_UINT, FIELD(max_zip_entries), "10000", 1, 1000000,
	 "most entries in one uploaded zip"},
	{"STALLSCOPE_MAX_URL", V_UINT, FIELD(max_url), "2048", 64, 16384,
	 "longest request target (path and query) in bytes"},
	{"STALLSCOPE_IDLE_TIMEOUT", V_UINT, FIELD(idle_timeout), "60", 1, 86400,
	 "seconds a connection may stay silent before it is closed"},
	{"STALLSCOPE_MAX_CONNECTIONS", V_UINT, FIELD(max_connections), "1000", 4, 100000,
	 "concurrent connections"},
	{"STALLSCOPE_SHUTDOWN_TIMEOUT", V_UINT, FIELD(shutdown_timeout), "30", 0, 3600,
	 "seconds in-flight requests get to finish on SIGTERM"},
	{"STALLSCOPE_MAX_DECOMPRESSED", V_SIZE, FIELD(max_decompressed), "64M", 1024,
	 UINT64_C(1) << 36, "largest gzip/deflate report body once decompressed"},
	{"STALLSCOPE_SYMCACHE_OPEN", V_UINT, FIELD(symcache_open), "256", 1, 100000,
	 "symcaches kept mapped at once (least recently used closed)"},
	{"STALLSCOPE_REPROCESS_INTERVAL", V_UINT, FIELD(reprocess_interval), "5", 1, 3600,
	 "seconds between looks for reports whose symbols arrived (an "
	 "upload to this server wakes it at once)"},
	{"STALLSCOPE_FOLD_INTERVAL", V_UINT, FIELD(fold_interval), "1", 1, 3600,
	 "seconds between two counts of ingest's deltas into the groups' counters "
	 "and the day rows (a read of them on the primary counts its app's first)"},
	{"STALLSCOPE_METRICS_ALLOW", V_NETMASKS, FIELD(metrics_allow), "127.0.0.1/32,::1/128", 0, 0,
	 "comma-separated CIDR ranges whose clients may read /metrics "
	 "(0.0.0.0/0,::/0 for everyone)"},
	{"STALLSCOPE_TRUSTED_PROXIES", V_NETMASKS, FIELD(trusted_proxies), NULL, 0, 0,
	 "comma-separated CIDR ranges of reverse proxies whose X-Forwarded-For "
	 "names the client (default: none; the peer is the client)"},
	{"STALLSCOPE_PUBLIC_URL", V_TEXT, FIELD(public_url), NULL, 0, 0,
	 "the dashboard's address as its users reach it, for the links in alerts "
	 "(default: http:// and STALLSCOPE_LISTEN)"},
	{"STALLSCOPE_WEBHOOK_RETRY", V_UINT, FIELD(webhook_retry), "10", 1, 3600,
	 "seconds before a failed webhook delivery is tried again, doubling after "
	 "each failure, for 24 hours"},
	{"STALLSCOPE_WEBHOOK_ALLOW_PRIVATE", V_UINT, FIELD(webhook_allow_private), "0", 0, 1,
	 "1 lets webhooks reach loopback, link-local and private addresses "
	 "(request forgery: docs/SECURITY.md)"},
	{"STALLSCOPE_LOG_LEVEL", V_LEVEL, FIELD(log_level), "info", 0, 0,
	 "debug, info, warn or error"},
	{"STALLSCOPE_ACCESS_LOG", V_UINT, FIELD(access_log), "1", 0, 1,
	 "1 logs a line per request (the access log); 0 leaves it out "
	 "(make run's default)"},
};

int srv_config_parse_size(const char *text, uint64_t *out)
{
	if (!text || text[0] < '0' || text[0] > '9')
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	else if (!shift && !strcmp(end, "B"))
		end++;
	if (*end != '\0' || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int srv_config_parse_listen(const char *text, char *host, size_t hostlen,
			    uint16_t *port)
{
	const char *colon;
	const char *h = text;
	size_t hn;
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close || close[1] != ':')
			return -1;
		h = text + 1;
		hn = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon || memchr(text, ':', (size_t)(colon - text)))
			return -1;
		hn = (size_t)(colon - text);
	}
	const char *p = colon + 1;
	if (*p == '\0' || strlen(p) > 5)
		return -1;
	unsigned long v = 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v > 65535)
		return -1;
	if (hn == 0) {
		h = "0.0.0.0";
		hn = strlen(h);
	}
	if (hn >= hostlen)
		return -1;
	memcpy(host, h, hn);
	host[hn] = '\0';
	*port = (uint16_t)v;
	return 0;
}

static int parse_level(const char *text, cm_log_level *out)
{
	static const struct {
		const char *name;
		cm_log_level level;
	} levels[] = {{"debug", CM_DEBUG},
		      {"info", CM_INFO},
		      {"warn", CM_WARN},
		      {"error", CM_ERROR}};
	for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
		if (!strcmp(text, levels[i].name)) {
			*out = levels[i].level;
			return 0;
		}
	}
	return -1;
}

static int parse_uint(const char *text, uint64_t *out)
{
	if (!text[0] || strlen(text) > 12)
		return -1;
	uint64_t v = 0;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return 0;
}

/* A request holds a connection only while it queries (an ingest request
 * waiting for its batch holds none), and connections beyond a few per CPU
 * only queue inside PostgreSQL. Capped below its default max_connections. */
static unsigned default_db_connections(void)
{
	long n = 4 * sysconf(_SC_NPROCESSORS_ONLN);
	return n < 8 ? 8 : n > 64 ? 64 : (unsigned)n;
}

static int load_var(srv_config *cfg, const struct var *v, const char *text,
		    char *err, size_t errlen)
{
	char *field = (char *)cfg + v->offset;
	uint64_t n;
	switch (v->kind) {
	case V_TEXT:
		if (!text[0] || strlen(text) >= v->size) {
			snprintf(err, errlen, "%s must be 1 to %zu bytes",
				 v->name, v->size - 1);
			return -1;
		}
		memcpy(field, text, strlen(text) + 1);
		return 0;
	case V_LISTEN:
		if (srv_config_parse_listen(text, cfg->listen_host,
					    sizeof cfg->listen_host,
					    &cfg->listen_port) < 0) {
			snprintf(err, errlen, "%s=%s: expected HOST:PORT, "
				 "[IPV6]:PORT or :PORT", v->name, text);
			return -1;
		}
		return 0;
	case V_SIZE:
	case V_UINT:
		if ((v->kind == V_SIZE ? srv_config_parse_size(text, &n)
				       : parse_uint(text, &n)) < 0 ||
		    n < v->min || n > v->max) {
			snprintf(err, errlen, "%s=%s: expected %s from %" PRIu64
				 " to %" PRIu64, v->name, text,
				 v->kind == V_SIZE ? "a size (e.g. 16M)"
						   : "a number",
				 v->min, v->max);
			return -1;
		}
		if (v->size == sizeof(uint64_t))
			memcpy(field, &n, sizeof n);
		else {
			unsigned u = (unsigned)n;
			memcpy(field, &u, sizeof u);
		}
		return 0;
	case V_LEVEL:
		if (parse_level(text, &cfg->log_level) < 0) {
			snprintf(err, errlen, "%s=%s: expected debug, info, "
				 "warn or error", v->name, text);
			return -1;
		}
		return 0;
	case V_NETMASKS:
		if (srv_netmask_parse_list(text, (srv_netmask_list *)(void *)field) < 0) {
			snprintf(err, errlen, "%s=%s: expected up to %d CIDR "
				 "ranges such as 10.0.0.0/8,::1/128 (host bits "
				 "of a range zero)", v->name, text, SRV_NETMASK_MAX);
			return -1;
		}
		return 0;
	}
	return -1;
}

int srv_config_load(srv_config *cfg, srv_getenv_fn get, char *err,
		    size_t errlen)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->db_connections = default_db_connections();
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const struct var *v = &vars[i];
		const char *text = get(v->name);
		if (text && !text[0])
			text = NULL;
		if (!text)
			text = v->def;
		if (!text && v->offset == offsetof(srv_config, database_url)) {
			snprintf(err, errlen, "%s is not set (e.g. "
				 "postgresql://user@localhost/stallscope)",
				 v->name);
			return -1;
		}
		if (text && load_var(cfg, v, text, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int srv_config_database_url(srv_getenv_fn get, char *out, size_t cap,
			    char *err, size_t errlen)
{
	const char *url = get("STALLSCOPE_DATABASE_URL");
	if (!url || !url[0]) {
		snprintf(err, errlen, "STALLSCOPE_DATABASE_URL is not set (e.g. "
			 "postgresql://user@localhost/stallscope)");
		return -1;
	}
	if (strlen(url) >= cap) {
		snprintf(err, errlen, "STALLSCOPE_DATABASE_URL is too long");
		return -1;
	}
	memcpy(out, url, strlen(url) + 1);
	return 0;
}

void srv_config_print_help(FILE *out)
{
	fprintf(out, "environment:\n");
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const struct var *v = &vars[i];
		fprintf(out, "  %-28s %s", v->name, v->help);
		if (v->def)
			fprintf(out, " [%s]", v->def);
		fputc('\n', out);
	}
}

/* "16M" for a whole number of the largest unit that divides N. */
static void print_size(FILE *out, uint64_t n)
{
	static const char units[] = "KMGT";
	int u = -1;
	while (u < 3 && n && n % 1024 == 0) {
		n /= 1024;
		u++;
	}
	fprintf(out, "%" PRIu64, n);
	if (u >= 0)
		fputc(units[u], out);
}

/* What V accepts, as its parser (load_var) checks it. */
static void print_accepted(FILE *out, const struct var *v)
{
	switch (v->kind) {
	case V_TEXT: fprintf(out, "text, up to %zu bytes", v->size - 1); return;
	case V_LISTEN: fputs("`HOST:PORT`, `[IPV6]:PORT` or `:PORT`", out); return;
	case V_SIZE:
		fputs("a size, ", out);
		print_size(out, v->min);
		fputs(" to ", out);
		print_size(out, v->max);
		return;
	case V_UINT: fprintf(out, "%" PRIu64 " to %" PRIu64, v->min, v->max); return;
	case V_LEVEL: fputs("`debug`, `info`, `warn`, `error`", out); return;
	case V_NETMASKS:
		fprintf(out, "up to %d CIDR ranges, comma-separated", SRV_NETMASK_MAX);
		return;
	}
}

void srv_config_print_markdown(FILE *out)
{
	fputs("| variable | default | accepted | meaning |\n|---|---|---|---|\n", out);
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const struct var *v = &vars[i];
		fprintf(out, "| `%s` | ", v->name);
		if (v->def)
			fprintf(out, "`%s`", v->def);
		else
			fputs(v->offset == offsetof(srv_config, database_url) ? "(required)"
									      : "(see meaning)",
			      out);
		fputs(" | ", out);
		print_accepted(out, v);
		fputs(" | ", out);
		for (const char *p = v->help; *p; p++) {
			if (*p == '|')
				fputc('\\', out);
			fputc(*p, out);
		}
		fputs(" |\n", out);
	}
}
