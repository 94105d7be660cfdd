/*
 * demo.h — `stallscope demo` (server/cli/cmd_demo.c): a demo data set sent to
 * a running server through its own HTTP endpoints.
 *
 *   demo_http.c   the HTTP client (libcurl), one connection kept alive;
 *   demo_data.c   the data set: tables of images, versions, devices and
 *                 stacks (what the demo shows; extend them as the product
 *                 grows), their addresses resolved in the demo dSYM, and
 *                 the reports made from them with a seeded PRNG;
 *   demo_android.c the Android app's (SPEC §13): a generated
 *                 methodMapping.txt per build and Matrix envelopes of
 *                 every TraceCanary report, with the same PRNG.
 *
 * Memory: every constructor has its free function here; JSON bodies are
 * malloc'ed strings the caller frees.
 */
#ifndef STALLSCOPE_SERVER_DEMO_H
#define STALLSCOPE_SERVER_DEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

/* ---- HTTP client (demo_http.c) ------------------------------------------ */

typedef struct srv_demo_http srv_demo_http;

/* A client of the server at BASE ("http://host:port", no trailing path).
 * NULL when libcurl cannot start. */
srv_demo_http *srv_demo_http_new(const char *base);
void srv_demo_http_free(srv_demo_http *h);

/*
 * METHOD BASE+PATH with HEADERS (NULL-terminated "Name: value" lines; may
 * be NULL) and BODY (LEN bytes; NULL for none). On a completed exchange
 * returns 0 with *OUT_STATUS and the reply body in *OUT_REPLY (malloc,
 * NUL-terminated; the caller frees); -1 when no HTTP answer came (the
 * reason in ERR).
 */
int srv_demo_http_do(srv_demo_http *h, const char *method, const char *path,
		     const char *const *headers, const void *body, size_t len,
		     long *out_status, char **out_reply, char *err, size_t errcap);

/* ---- The data set (demo_data.c) ------------------------------------------ */

typedef struct srv_demo_set srv_demo_set;

/*
 * Resolves the stack tables against the demo dSYM (DWARF, LEN bytes, borrowed
 * until srv_demo_set_free): every app frame gets an address inside its
 * function, with an inline chain where the function has one. NULL with ERR
 * filled when the file is unreadable or lacks a function the tables name.
 */
srv_demo_set *srv_demo_set_new(const uint8_t *dwarf, size_t len, char *err, size_t errcap);
void srv_demo_set_free(srv_demo_set *s);

/* The dSYM's UUID ("8-4-4-4-12") and the name it is uploaded under. */
const char *srv_demo_set_uuid(const srv_demo_set *s);
const char *srv_demo_set_image_name(const srv_demo_set *s);

/* Where a request goes: the device route (received now) or the backfill
 * (received at .received_at). */
typedef enum srv_demo_route {
	SRV_DEMO_NATIVE,
	SRV_DEMO_METRICKIT,
	SRV_DEMO_KSCRASH,
	/* {"check_ins":[{"user_id","app_version"}]}: today one GET
	 * /api/v1/sampling per call, before through the backfill */
	SRV_DEMO_CHECK_INS,
	SRV_DEMO_MATRIX, /* an Android envelope, POST /api/v1/ingest/matrix */
} srv_demo_route;

/* The share of users the demo app samples a day (set by `stallscope demo`
 * through the config API): the demo shows rates under sampling. */
#define SRV_DEMO_SAMPLE_RATE 0.5

/* Testers on the app's whitelist: they report every day and count in no
 * rate (SPEC §10.2). */
#define SRV_DEMO_WHITELISTED 2
extern const char *const srv_demo_whitelist[SRV_DEMO_WHITELISTED];

typedef struct srv_demo_request {
	srv_demo_route route;
	time_t received_at; /* 0: now, through the device route */
	char user[32];      /* X-Stallscope-User (MetricKit), or "" */
	char *body;         /* JSON, malloc */
	size_t reports;     /* reports the body holds */
} srv_demo_request;

typedef struct srv_demo_options {
	const char *app; /* bundle id: who is sampled depends on it */
	uint64_t seed;
	size_t reports; /* native reports over all days */
	int days;       /* today and DAYS - 1 days before */
	time_t now;
} srv_demo_options;

/*
 * Every request of the data set for OPT, in sending order, into *OUT (N in
 * *OUT_N; free with srv_demo_requests_free). The same seed and UTC day give
 * the same reports (report ids included: sending them again is a no-op);
 * only their times follow NOW. -1 when out of memory.
 */
int srv_demo_requests(const srv_demo_set *s, const srv_demo_options *opt,
		      srv_demo_request **out, size_t *out_n);
void srv_demo_requests_free(srv_demo_request *r, size_t n);

/* What both data sets draw with: splitmix64, seeded by .s. */
typedef struct srv_demo_rng {
	uint64_t s;
} srv_demo_rng;
uint64_t srv_demo_rand(srv_demo_rng *r);
uint64_t srv_demo_below(srv_demo_rng *r, uint64_t n); /* [0, N); 0 when N is 0 */
double srv_demo_unit(srv_demo_rng *r);		      /* [0, 1) */

/* Requests being made; V is malloc (srv_demo_requests_free). */
typedef struct srv_demo_list {
	srv_demo_request *v;
	size_t n, cap;
} srv_demo_list;

/* Appends a request with BODY (stolen; NULL is out of memory) holding
 * REPORTS reports; -1 when out of memory. */
int srv_demo_push(srv_demo_list *l, srv_demo_route route, time_t at, const char *user, json_t *body,
		  size_t reports);

/* Day D of OPT (0 the oldest): its START, AGO days before today, and the
 * SPAN seconds of it that reports spread over (today: what has passed,
 * a minute's margin before now). */
void srv_demo_day(const srv_demo_options *opt, int d, time_t *start, int *ago, time_t *span);

/* A user as a day's check-in names them; a tester (whitelisted) opens the
 * app every day and is never sampled out. */
typedef struct srv_demo_user {
	const char *id, *app_version, *os_version, *device;
	bool tester;
} srv_demo_user;

/*
 * The day starting at START (AGO days before today) of APP: who of the N
 * USERS opens the app (most, drawn with R) checks in, in a request of its
 * own before the day's reports (the device route today, the backfill
 * before), and ELIGIBLE receives the indexes of those the app samples
 * that day and of the testers (*NELIGIBLE of them; room for N). 0, or -1
 * when out of memory.
 */
int srv_demo_open_day(srv_demo_list *l, srv_demo_rng *r, const char *app, time_t start, int ago,
		      const srv_demo_user *users, size_t n, int *eligible, size_t *neligible);

/* ---- The Android data set (demo_android.c) -------------------------------- */

/* The Android app's versions, each one build with its own mapping. */
#define SRV_DEMO_ANDROID_BUILDS 2

/*
 * Build I's methodMapping.txt (malloc, *OUT_LEN bytes; the caller frees)
 * and the version and build it is uploaded for (static). The ids are
 * drawn anew per build, as Matrix's gradle plugin assigns them. NULL when
 * out of memory.
 */
char *srv_demo_android_mapping(size_t i, const char **version, const char **build, size_t *out_len);

/*
 * The Android app's requests for OPT, in sending order (check-ins and
 * SRV_DEMO_MATRIX envelopes: slow methods, ANRs, lags, slow startups,
 * thread policy changes, startups and frames), into *OUT as
 * srv_demo_requests does. -1 when out of memory.
 */
int srv_demo_android_requests(const srv_demo_options *opt, srv_demo_request **out, size_t *out_n);

#endif
