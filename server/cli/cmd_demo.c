/*
 * cmd_demo.c — `stallscope demo`: fills an app of a running server with a
 * week of demo data through the server's own HTTP endpoints, as a release
 * pipeline and devices would: uploads the demo dSYM
 * (scripts/demo/StallDemo.dwarf), sets the app's sample rate and
 * whitelist, then posts the reports of server/cli/demo_data.c — today's
 * through the devices' routes with the ingest key, the six days before
 * through the admin-only backfill route
 * (POST /api/v1/apps/{app}/backfill?received_at=…), since a report's day
 * is the day it was received. Given a second app's keys (--android-keys)
 * it does the same for an Android app (server/cli/demo_android.c): a
 * methodMapping.txt per build, then Matrix envelopes.
 */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/http/auth.h"
#include "server/cli/util.h"
#include "server/cli/commands.h"
#include "server/cli/demo.h"

#define DEFAULT_APP "com.example.demo"
#define DEFAULT_KEYS "var/demo-app.json"
#define DEFAULT_ANDROID_KEYS "var/demo-android.json"
#define DSYM_PATH "scripts/demo/StallDemo.dwarf"
#define MAX_DSYM (16u << 20)
#define DAYS 7
#define DEFAULT_REPORTS 2100

static void usage(FILE *to)
{
	fprintf(to,
		"usage: stallscope demo [--url URL] [--app BUNDLE_ID] [--keys FILE]\n"
		"                       [--android-keys FILE] [--seed N] [--reports N]\n"
		"                       [--dsym FILE]\n\n"
		"Fills an app of a running server with a week of demo data through its\n"
		"HTTP API: uploads the demo dSYM, sets the app's sample_rate to 1, and\n"
		"posts stall reports (native, MetricKit, KSCrash) over the last 7 days\n"
		"(fewer when the app keeps fewer): today's with the ingest key, the\n"
		"earlier days' through the admin-only backfill route.\n\n"
		"  --url URL        the server (STALLSCOPE_URL; else http://STALLSCOPE_LISTEN;\n"
		"                   else http://127.0.0.1:8080)\n"
		"  --app BUNDLE_ID  the app (STALLSCOPE_APP; else the keys file's; else\n"
		"                   " DEFAULT_APP ")\n"
		"  --keys FILE      the app's credentials as `stallscope app create` prints\n"
		"                   them (default " DEFAULT_KEYS ", as `make run` writes it);\n"
		"                   STALLSCOPE_INGEST_KEY, STALLSCOPE_UPLOAD_TOKEN and\n"
		"                   STALLSCOPE_ADMIN_TOKEN override its fields\n"
		"  --android-keys FILE  a second app's credentials, filled as an Android app\n"
		"                   (Matrix TraceCanary: method mappings, slow methods, ANRs,\n"
		"                   lags, startups, frames); default " DEFAULT_ANDROID_KEYS "\n"
		"                   when that file exists, as `make run` writes it\n"
		"  --seed N         another data set (default 1); the same seed on the same\n"
		"                   UTC day sends the same report ids, so running it twice\n"
		"                   a day adds nothing\n"
		"  --reports N      native reports in all (default %d; MetricKit and KSCrash\n"
		"                   come on top)\n"
		"  --dsym FILE      the demo dSYM (default " DSYM_PATH "\n"
		"                   beside the binary's folder, else under the current one)\n",
		DEFAULT_REPORTS);
}

/* An app's bundle id and credentials. */
typedef struct app_keys {
	char app[ST_BUNDLE_ID_MAX + 1];
	char ingest[SRV_TOKEN_SIZE], upload[SRV_TOKEN_SIZE], admin[SRV_TOKEN_SIZE];
} app_keys;

typedef struct demo_cfg {
	char url[512];
	app_keys ios, android; /* android.app "": no Android app */
	char dsym[PATH_MAX];
	uint64_t seed;
	size_t reports;
} demo_cfg;

static void copy(char *dst, size_t cap, const char *src)
{
	if (src && src[0])
		snprintf(dst, cap, "%s", src);
}

/* http://LISTEN, with a wildcard host made the loopback. */
static void url_from_listen(const char *listen, char *out, size_t cap)
{
	if (listen[0] == ':')
		snprintf(out, cap, "http://127.0.0.1%s", listen);
	else if (!strncmp(listen, "0.0.0.0:", 8))
		snprintf(out, cap, "http://127.0.0.1:%s", listen + 8);
	else if (!strncmp(listen, "[::]:", 5))
		snprintf(out, cap, "http://[::1]:%s", listen + 5);
	else
		snprintf(out, cap, "http://%s", listen);
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The keys file's fields; a missing default file is no error. */
static int read_keys(const char *path, bool given, app_keys *c)
{
	if (!given && !is_file(path))
		return 0;
	json_error_t jerr;
	json_t *k = json_load_file(path, 0, &jerr);
	if (!json_is_object(k)) {
		fprintf(stderr, "stallscope demo: %s: %s\n", path,
			k ? "not a JSON object" : jerr.text);
		json_decref(k);
		return -1;
	}
	copy(c->app, sizeof c->app, json_string_value(json_object_get(k, "app")));
	copy(c->ingest, sizeof c->ingest, json_string_value(json_object_get(k, "ingest_key")));
	copy(c->upload, sizeof c->upload, json_string_value(json_object_get(k, "upload_token")));
	copy(c->admin, sizeof c->admin, json_string_value(json_object_get(k, "admin_token")));
	json_decref(k);
	return 0;
}

/* 0 when K can be used; 2 (usage) or 1 after saying why. */
static int check_keys(const app_keys *k, bool android)
{
	if (!srv_bundle_id_valid(k->app)) {
		fprintf(stderr, "stallscope demo: '%s' is not a bundle id\n", k->app);
		return 2;
	}
	if (android && (!k->ingest[0] || !k->upload[0] || !k->admin[0])) {
		fprintf(stderr,
			"stallscope demo: the Android app's keys file lacks its ingest key, "
			"upload token or admin token\n");
		return 1;
	}
	if (!k->ingest[0] || !k->upload[0] || !k->admin[0]) {
		fprintf(stderr,
			"stallscope demo: the app's ingest key, upload token and admin token are\n"
			"needed: --keys FILE (as `stallscope app create` prints them) or\n"
			"STALLSCOPE_INGEST_KEY, STALLSCOPE_UPLOAD_TOKEN, STALLSCOPE_ADMIN_TOKEN\n");
		return 1;
	}
	return 0;
}

/* 0; -1 after printing --help; 2 (usage) or 1 (failure, said on stderr). */
static int parse_args(int argc, char **argv, demo_cfg *c)
{
	const char *url = NULL, *app = NULL, *keys = NULL, *dsym = NULL, *android = NULL;
	c->seed = 1;
	c->reports = DEFAULT_REPORTS;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return -1;
		}
		if (!v)
			return 2;
		i++;
		if (!strcmp(a, "--url"))
			url = v;
		else if (!strcmp(a, "--app"))
			app = v;
		else if (!strcmp(a, "--keys"))
			keys = v;
		else if (!strcmp(a, "--android-keys"))
			android = v;
		else if (!strcmp(a, "--dsym"))
			dsym = v;
		else if (!strcmp(a, "--seed") && srv_cli_parse_u64(v, &n))
			c->seed = n;
		else if (!strcmp(a, "--reports") && srv_cli_parse_u64(v, &n) && n >= 1 &&
			 n <= 1000000)
			c->reports = (size_t)n;
		else
			return 2;
	}
	app_keys *k = &c->ios;
	if (read_keys(keys ? keys : DEFAULT_KEYS, keys != NULL, k) < 0 ||
	    read_keys(android ? android : DEFAULT_ANDROID_KEYS, android != NULL, &c->android) < 0)
		return 1;
	copy(k->app, sizeof k->app, getenv("STALLSCOPE_APP"));
	copy(k->app, sizeof k->app, app);
	if (!k->app[0])
		copy(k->app, sizeof k->app, DEFAULT_APP);
	copy(k->ingest, sizeof k->ingest, getenv("STALLSCOPE_INGEST_KEY"));
	copy(k->upload, sizeof k->upload, getenv("STALLSCOPE_UPLOAD_TOKEN"));
	copy(k->admin, sizeof k->admin, getenv("STALLSCOPE_ADMIN_TOKEN"));
	const char *listen = getenv("STALLSCOPE_LISTEN");
	url_from_listen(listen && listen[0] ? listen : "127.0.0.1:8080", c->url, sizeof c->url);
	copy(c->url, sizeof c->url, getenv("STALLSCOPE_URL"));
	copy(c->url, sizeof c->url, url);
	size_t ul = strlen(c->url);
	while (ul > 0 && c->url[ul - 1] == '/')
		c->url[--ul] = '\0';
	if (dsym)
		copy(c->dsym, sizeof c->dsym, dsym);
	else
		srv_cli_shipped_path(DSYM_PATH, c->dsym, sizeof c->dsym);
	int rc = check_keys(k, false);
	return rc == 0 && c->android.app[0] ? check_keys(&c->android, true) : rc;
}

static uint8_t *read_file(const char *path, size_t *out_len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	uint8_t *buf = malloc(MAX_DSYM);
	size_t n = buf ? fread(buf, 1, MAX_DSYM, f) : 0;
	bool ok = buf && !ferror(f) && n > 0 && n < MAX_DSYM;
	fclose(f);
	if (!ok) {
		free(buf);
		return NULL;
	}
	*out_len = n;
	return buf;
}

typedef struct session {
	const demo_cfg *cfg;
	const app_keys *keys; /* the app being filled */
	srv_demo_http *http;
	char err[512];
} session;

/*
 * One request that must answer WANT (or WANT2, 0 = none): 0 with the
 * reply's JSON in *OUT (may be NULL: not kept), else -1 after saying why.
 */
static int call(session *s, const char *method, const char *path, const char *const *headers,
		const void *body, size_t len, long want, long want2, json_t **out)
{
	long status = 0;
	char *reply = NULL;
	if (srv_demo_http_do(s->http, method, path, headers, body, len, &status, &reply, s->err,
			     sizeof s->err) < 0) {
		fprintf(stderr, "stallscope demo: %s (is the server running at %s?)\n", s->err,
			s->cfg->url);
		return -1;
	}
	if (status != want && (!want2 || status != want2)) {
		fprintf(stderr, "stallscope demo: %s %s: %ld %.400s\n", method, path, status, reply);
		free(reply);
		return -1;
	}
	if (out)
		*out = json_loads(reply, 0, NULL);
	free(reply);
	return out && !*out ? -1 : 0;
}

static int upload_dsym(session *s, const uint8_t *dwarf, size_t len, const srv_demo_set *set)
{
	char path[512], auth[SRV_TOKEN_SIZE + 32];
	snprintf(path, sizeof path, "/api/v1/apps/%s/dsyms?name=%s", s->keys->app,
		 srv_demo_set_image_name(set));
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", s->keys->upload);
	const char *headers[] = {auth, "Content-Type: application/octet-stream", NULL};
	return call(s, "POST", path, headers, dwarf, len, 201, 200, NULL);
}

/* The default sample rate (5% a day) would leave a demo of a few hundred
 * users a handful of reports: an operator's choice for a demo app, made
 * through the admin API, with the demo's testers on the whitelist.
 * Returns the days the app keeps, or -1. */
static int prepare_config(session *s)
{
	char path[512], auth[SRV_TOKEN_SIZE + 32], body[64];
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", s->keys->admin);
	const char *headers[] = {auth, "Content-Type: application/json", NULL};
	for (int i = 0; i < SRV_DEMO_WHITELISTED; i++) {
		static const char note[] = "{\"note\":\"demo tester\"}";
		snprintf(path, sizeof path, "/api/v1/apps/%s/whitelist/%s", s->keys->app,
			 srv_demo_whitelist[i]);
		if (call(s, "PUT", path, headers, note, sizeof note - 1, 200, 201, NULL) < 0)
			return -1;
	}
	snprintf(path, sizeof path, "/api/v1/apps/%s/config", s->keys->app);
	int len = snprintf(body, sizeof body, "{\"sample_rate\":%g}", SRV_DEMO_SAMPLE_RATE);
	json_t *reply = NULL;
	if (call(s, "PUT", path, headers, body, (size_t)len, 200, 0, &reply) < 0)
		return -1;
	json_int_t days = json_integer_value(json_object_get(reply, "retention_days"));
	json_decref(reply);
	return days < 1 ? 1 : days > DAYS ? DAYS : (int)days;
}

typedef struct tally {
	size_t accepted, rejected;
} tally;

/* The day's check-ins R: a device's GET each today, one backfill before. */
static int send_check_ins(session *s, const srv_demo_request *r)
{
	char path[512], cred[SRV_TOKEN_SIZE + 32];
	if (r->received_at) {
		char at[32];
		struct tm tm;
		gmtime_r(&r->received_at, &tm);
		strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(path, sizeof path,
			 "/api/v1/apps/%s/backfill?received_at=%s&format=check_ins", s->keys->app,
			 at);
		snprintf(cred, sizeof cred, "Authorization: Bearer %s", s->keys->admin);
		const char *headers[] = {cred, "Content-Type: application/json", NULL};
		return call(s, "POST", path, headers, r->body, strlen(r->body), 200, 0, NULL);
	}
	json_t *body = json_loads(r->body, 0, NULL);
	const json_t *calls = json_object_get(body, "check_ins");
	snprintf(cred, sizeof cred, "X-Stallscope-Key: %s", s->keys->ingest);
	const char *headers[] = {cred, NULL};
	int rc = body ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < json_array_size(calls); i++) {
		const json_t *c = json_array_get(calls, i);
		/* Demo values need no escaping but the spaces of Android's
		 * device models ("Pixel 7"). */
		char device[96];
		size_t n = 0;
		for (const char *p = json_string_value(json_object_get(c, "device"));
		     p && *p && n + 4 < sizeof device; p++)
			n += (size_t)snprintf(device + n, sizeof device - n,
					      *p == ' ' ? "%%20" : "%c", *p);
		device[n] = '\0';
		snprintf(path, sizeof path,
			 "/api/v1/sampling?user_id=%s&app_version=%s&os_version=%s&device=%s",
			 json_string_value(json_object_get(c, "user_id")),
			 json_string_value(json_object_get(c, "app_version")),
			 json_string_value(json_object_get(c, "os_version")), device);
		rc = call(s, "GET", path, headers, NULL, 0, 200, 0, NULL);
	}
	json_decref(body);
	return rc;
}

static int send_request(session *s, const srv_demo_request *r, tally *t)
{
	if (r->route == SRV_DEMO_CHECK_INS)
		return send_check_ins(s, r);
	static const char *const device_paths[] = {
		[SRV_DEMO_NATIVE] = "/api/v1/ingest",
		[SRV_DEMO_METRICKIT] = "/api/v1/ingest/metrickit",
		[SRV_DEMO_KSCRASH] = "/api/v1/ingest/kscrash",
		[SRV_DEMO_MATRIX] = "/api/v1/ingest/matrix",
	};
	static const char *const formats[] = {
		[SRV_DEMO_NATIVE] = "native",
		[SRV_DEMO_METRICKIT] = "metrickit",
		[SRV_DEMO_KSCRASH] = "kscrash",
		[SRV_DEMO_MATRIX] = "matrix",
	};
	char path[512], cred[SRV_TOKEN_SIZE + 32], user[64];
	if (r->received_at == 0) {
		snprintf(path, sizeof path, "%s", device_paths[r->route]);
		snprintf(cred, sizeof cred, "X-Stallscope-Key: %s", s->keys->ingest);
	} else {
		char at[32];
		struct tm tm;
		gmtime_r(&r->received_at, &tm);
		strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(path, sizeof path, "/api/v1/apps/%s/backfill?received_at=%s&format=%s",
			 s->keys->app, at, formats[r->route]);
		snprintf(cred, sizeof cred, "Authorization: Bearer %s", s->keys->admin);
	}
	snprintf(user, sizeof user, "X-Stallscope-User: %s", r->user);
	const char *headers[] = {cred, "Content-Type: application/json", r->user[0] ? user : NULL,
				 NULL};
	json_t *reply = NULL;
	/* 207: some refused, counted and shown below. */
	if (call(s, "POST", path, headers, r->body, strlen(r->body), 202, 207, &reply) < 0)
		return -1;
	json_t *rejected = json_object_get(reply, "rejected");
	t->accepted += json_array_size(json_object_get(reply, "accepted"));
	t->rejected += json_array_size(rejected);
	if (json_array_size(rejected) > 0) {
		char *text = json_dumps(json_array_get(rejected, 0), JSON_COMPACT);
		fprintf(stderr, "stallscope demo: %s refused a report: %s\n", path,
			text ? text : "?");
		free(text);
	}
	json_decref(reply);
	return 0;
}

/* Sends REQS in order, counting what the server accepted into T; the
 * reports they hold into *SENT. */
static int send_all(session *s, const srv_demo_request *reqs, size_t n, tally *t, size_t *sent)
{
	*sent = 0;
	for (size_t i = 0; i < n; i++) {
		if (send_request(s, &reqs[i], t) < 0)
			return -1;
		*sent += reqs[i].reports;
	}
	return 0;
}

/* The iOS app: its dSYM, its config, its week of reports. */
static int fill_ios(session *s, const uint8_t *dwarf, size_t len, tally *t)
{
	srv_demo_set *set = srv_demo_set_new(dwarf, len, s->err, sizeof s->err);
	srv_demo_request *reqs = NULL;
	size_t nreqs = 0, sent = 0;
	int rc = -1, days = -1;
	if (!set) {
		fprintf(stderr, "stallscope demo: %s\n", s->err);
		return -1;
	}
	if (upload_dsym(s, dwarf, len, set) < 0 || (days = prepare_config(s)) < 0)
		goto done;
	srv_demo_options opt = {.app = s->keys->app,
				.seed = s->cfg->seed,
				.reports = s->cfg->reports,
				.days = days,
				.now = time(NULL)};
	if (srv_demo_requests(set, &opt, &reqs, &nreqs) < 0) {
		fprintf(stderr, "stallscope demo: out of memory\n");
		goto done;
	}
	if (send_all(s, reqs, nreqs, t, &sent) < 0)
		goto done;
	printf("demo: uploaded %s (%s) and sent %zu reports over %d days in %zu requests "
	       "to %s: %zu accepted, %zu refused\n",
	       srv_demo_set_image_name(set), srv_demo_set_uuid(set), sent, days, nreqs,
	       s->keys->app, t->accepted, t->rejected);
	rc = 0;
done:
	srv_demo_requests_free(reqs, nreqs);
	srv_demo_set_free(set);
	return rc;
}

/* An Android build's methodMapping.txt, through the upload route. */
static int upload_mapping(session *s, size_t i)
{
	const char *version, *build;
	size_t len;
	char *text = srv_demo_android_mapping(i, &version, &build, &len);
	char path[512], auth[SRV_TOKEN_SIZE + 32];
	if (!text) {
		fprintf(stderr, "stallscope demo: out of memory\n");
		return -1;
	}
	snprintf(path, sizeof path, "/api/v1/apps/%s/method-mappings?app_version=%s&build=%s",
		 s->keys->app, version, build);
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", s->keys->upload);
	const char *headers[] = {auth, "Content-Type: text/plain", NULL};
	int rc = call(s, "POST", path, headers, text, len, 201, 200, NULL);
	free(text);
	return rc;
}

/* The Android app: a mapping per build, its config, its week of Matrix
 * envelopes. */
static int fill_android(session *s, tally *t)
{
	srv_demo_request *reqs = NULL;
	size_t nreqs = 0, sent = 0;
	int days = -1, rc = -1;
	for (size_t i = 0; i < SRV_DEMO_ANDROID_BUILDS; i++)
		if (upload_mapping(s, i) < 0)
			return -1;
	if ((days = prepare_config(s)) < 0)
		return -1;
	srv_demo_options opt = {
		.app = s->keys->app, .seed = s->cfg->seed, .days = days, .now = time(NULL)};
	if (srv_demo_android_requests(&opt, &reqs, &nreqs) < 0)
		fprintf(stderr, "stallscope demo: out of memory\n");
	else if (send_all(s, reqs, nreqs, t, &sent) == 0) {
		printf("demo: uploaded %d method mappings and sent %zu Matrix reports over %d days "
		       "in %zu requests to %s: %zu accepted, %zu refused\n",
		       SRV_DEMO_ANDROID_BUILDS, sent, days, nreqs, s->keys->app, t->accepted,
		       t->rejected);
		rc = 0;
	}
	srv_demo_requests_free(reqs, nreqs);
	return rc;
}

int srv_cmd_demo(int argc, char **argv)
{
	static demo_cfg cfg;
	int prc = parse_args(argc, argv, &cfg);
	if (prc < 0)
		return 0;
	if (prc == 2)
		usage(stderr);
	if (prc)
		return prc;
	size_t len = 0;
	uint8_t *dwarf = read_file(cfg.dsym, &len);
	if (!dwarf) {
		fprintf(stderr, "stallscope demo: cannot read the demo dSYM %s (--dsym)\n",
			cfg.dsym);
		return 1;
	}
	session s = {.cfg = &cfg, .keys = &cfg.ios, .http = srv_demo_http_new(cfg.url)};
	tally ios = {0}, android = {0};
	int rc = 1;
	if (!s.http) {
		fprintf(stderr, "stallscope demo: cannot start libcurl\n");
		goto done;
	}
	if (call(&s, "GET", "/healthz", NULL, NULL, 0, 200, 0, NULL) < 0 ||
	    fill_ios(&s, dwarf, len, &ios) < 0)
		goto done;
	s.keys = &cfg.android;
	if (cfg.android.app[0] && fill_android(&s, &android) < 0)
		goto done;
	printf("demo: open %s/ and sign in with %s%s%s and its admin token\n", cfg.url, cfg.ios.app,
	       cfg.android.app[0] ? " or " : "", cfg.android.app);
	rc = ios.rejected || android.rejected ? 1 : 0;
done:
	srv_demo_http_free(s.http);
	free(dwarf);
	return rc;
}
