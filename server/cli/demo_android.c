/*
 * demo_android.c — the demo's Android app (SPEC §13); see demo.h.
 *
 * Data-driven as demo_data.c: the classes and methods of a plausible
 * com.example.android app, the stacks its users stall in (Matrix's
 * Trace_EvilMethod of every detail), its scenes and its two builds. A
 * build's methodMapping.txt lists every method with an id drawn anew per
 * build (Matrix's gradle plugin assigns them in a nondeterministic order,
 * FORMATS.md §6), so the same method has another id in each build and a
 * report resolves only through its own build's mapping.
 *
 * A device's envelope (POST /api/v1/ingest/matrix) carries one user's
 * elements: a startup (Trace_StartUp), frames of a scene or two
 * (Trace_FPS), and now and then a stall (Trace_EvilMethod) with its
 * `stack` of method ids ("depth,id,count,ms\n", a pre-order walk from the
 * main looper's dispatch) and/or its `threadStack` (Java stack text).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cli/demo.h"

#define DAY_SECONDS 86400
#define USERS	    300
/* Per mille of a day's eligible users who send an envelope. */
#define SENDING_PER_MILLE 550
#define PKG		  "com.example.android."
/* Matrix's id for android.os.Handler.dispatchMessage, the root of every
 * main-looper stack (FORMATS.md §6). */
#define METHOD_ID_DISPATCH 1048574
#define MAX_PATH	   8
#define MAX_METHODS	   512

/* ---- tables ----------------------------------------------------------------- */

typedef struct build_row {
	const char *version, *build;
	int released; /* days before today */
} build_row;

/* Oldest first: 3.2.0 brought the search index and slower cold starts. */
static const build_row builds[SRV_DEMO_ANDROID_BUILDS] = {
	{"3.1.0", "310", 40},
	{"3.2.0", "320", 3},
};

static const char *const classes[] = {
	"App",
	"ui.MainActivity",
	"ui.SettingsActivity",
	"ui.BaseFragment",
	"feed.FeedActivity",
	"feed.FeedAdapter",
	"feed.FeedRepository",
	"feed.FeedViewModel",
	"image.ImageLoader",
	"image.BitmapDecoder",
	"image.DiskCache",
	"net.ApiClient",
	"net.HttpConnection",
	"json.FeedParser",
	"db.ArticleDao",
	"db.AppDatabase",
	"prefs.SettingsStore",
	"sync.SyncManager",
	"analytics.Tracker",
	"player.VideoPlayer",
	"player.PlayerActivity",
	"search.SearchIndex",
	"search.SearchActivity",
	"util.TextUtils",
};
#define NCLASSES (sizeof classes / sizeof classes[0])

/* Every class has these (a method of a class in the mapping is one of
 * them, or a stack's own below). */
static const struct {
	const char *name, *desc;
	int access;
} common[] = {
	{"<init>", "()V", 1},
	{"init", "(Landroid.content.Context;)V", 1},
	{"load", "(I)V", 1},
	{"refresh", "()V", 1},
	{"update", "(Ljava.lang.Object;)Z", 1},
	{"toString", "()Ljava.lang.String;", 1},
	{"reset", "()V", 2},
	{"size", "()I", 1},
	{"get", "(I)Ljava.lang.Object;", 1},
	{"apply", "(Ljava.util.List;)V", 17},
	{"lambda$load$0", "(I)V", 4106},
	{"access$000", "(Ljava.lang.Object;)V", 4104},
};
#define NCOMMON (sizeof common / sizeof common[0])

/* The methods stacks name ("pkg-less.Class method desc"), then what a
 * mapping holds besides: a native method (no descriptor) and a Kotlin
 * name with spaces. */
static const char *const named[] = {
	("feed.FeedAdapter onBindViewHolder "
	 "(Landroidx.recyclerview.widget.RecyclerView$ViewHolder;I)V"),
	"image.ImageLoader loadInto (Ljava.lang.String;Landroid.widget.ImageView;)V",
	"image.BitmapDecoder decode ([BII)Landroid.graphics.Bitmap;",
	"feed.FeedRepository fetchLatest (Z)Ljava.util.List;",
	"net.ApiClient getFeed (Ljava.lang.String;I)Lcom.example.android.net.Response;",
	"json.FeedParser parse (Ljava.io.InputStream;)Ljava.util.List;",
	"json.FeedParser readArticle (Landroid.util.JsonReader;)Lcom.example.android.feed.Article;",
	"ui.MainActivity onResume ()V",
	"prefs.SettingsStore read ()Ljava.util.Map;",
	"prefs.SettingsStore parseXml (Ljava.io.File;)Ljava.util.Map;",
	"feed.FeedActivity onItemClick (Landroid.view.View;I)V",
	"db.ArticleDao queryAll (Ljava.lang.String;)Ljava.util.List;",
	"db.ArticleDao cursorToList (Landroid.database.Cursor;)Ljava.util.List;",
	"sync.SyncManager awaitSync (J)V",
	"sync.SyncManager lambda$awaitSync$0 (Ljava.util.concurrent.CountDownLatch;)V",
	"search.SearchActivity onQueryTextChange (Ljava.lang.String;)Z",
	"search.SearchIndex rebuild (Ljava.util.List;)V",
	"search.SearchIndex tokenize (Ljava.lang.String;)[Ljava.lang.String;",
	"App onCreate ()V",
	"analytics.Tracker start (Landroid.app.Application;)V",
	"analytics.Tracker loadConfig ()Lorg.json.JSONObject;",
	"analytics.Tracker log (Ljava.lang.String;[Ljava.lang.Object;)V",
	"util.TextUtils nativeHash ",
	"feed.FeedViewModel `load more articles` ()V",
};
#define NNAMED (sizeof named / sizeof named[0])

/* How a stall reads in Matrix's content (FORMATS.md §3). */
typedef struct stall_row {
	const char *what; /* for the reader of this table */
	const char *detail;
	int since;		  /* first build (index) it appears in */
	int path[MAX_PATH];	  /* named[] + 1, outermost first; 0 ends */
	bool looper;		  /* under Handler.dispatchMessage */
	bool stack, thread_stack; /* which of the two it carries */
	int64_t min_ms, max_ms;	  /* its cost; 0: none sent */
} stall_row;

/* Most frequent first: the k-th (from 1) is drawn with weight 1/k. */
static const stall_row stalls[] = {
	{"images decoded while binding feed rows",
	 "NORMAL",
	 0,
	 {1, 2, 3},
	 true,
	 true,
	 false,
	 700,
	 4000},
	{"feed JSON parsed on the main thread",
	 "NORMAL",
	 0,
	 {4, 5, 6, 7},
	 true,
	 true,
	 false,
	 700,
	 3000},
	{"database query on a tap", "ANR", 0, {11, 12, 13}, true, true, true, 5000, 5900},
	{"settings XML read on resume", "NORMAL", 0, {8, 9, 10}, true, true, false, 700, 2500},
	{"waiting for a sync", "LAG", 0, {14, 15}, false, false, true, 0, 0},
	{"search index rebuilt while typing",
	 "NORMAL",
	 1,
	 {16, 17, 18},
	 true,
	 true,
	 false,
	 700,
	 6000},
	{"analytics set up in Application.onCreate",
	 "STARTUP",
	 0,
	 {19, 20, 21},
	 false,
	 true,
	 false,
	 10100,
	 14000},
	{"sync wait seen by the SIGQUIT hook", "SIGNAL_ANR", 0, {14, 15}, false, false, true, 0, 0},
	{"feed row bound late after a touch", "LAG_TOUCH", 0, {1, 2}, false, false, true, 0, 0},
	{"feed paging in an idle handler", "LAG_IDLE_HANDLER", 0, {4, 5}, false, false, true, 0, 0},
	{"player thread priority raised",
	 "PRIORITY_MODIFIED",
	 0,
	 {19, 20},
	 false,
	 false,
	 true,
	 0,
	 0},
	{"timer slack changed by the tracker",
	 "TIMERSLACK_MODIFIED",
	 0,
	 {20, 21},
	 false,
	 false,
	 true,
	 0,
	 0},
};
#define NSTALLS (sizeof stalls / sizeof stalls[0])

static const char *const scenes[] = {
	PKG "feed.FeedActivity",     PKG "ui.MainActivity",	PKG "player.PlayerActivity",
	PKG "search.SearchActivity", PKG "ui.SettingsActivity",
};
#define NSCENES (sizeof scenes / sizeof scenes[0])
/* Per mille of a scene's frames that are frozen: the player janks most. */
static const int scene_frozen[NSCENES] = {8, 3, 25, 12, 1};

static const char *const devices[] = {"Pixel 7",  "Pixel 6a", "SM-S911B",
				      "SM-A536B", "M2101K6G", "CPH2447"};
#define NDEVICES (sizeof devices / sizeof devices[0])
static const char *const os_versions[] = {"12", "13", "14"};
#define NOSES (sizeof os_versions / sizeof os_versions[0])

/* ---- the methods and their ids --------------------------------------------- */

typedef struct method {
	char cls[96], name[48], desc[96];
	int access;
} method;

typedef struct method_table {
	method m[MAX_METHODS];
	size_t n;
} method_table;

/* named[] first (so a stack's index into it is its index here), then the
 * common methods of every class. */
static void methods_of(method_table *t)
{
	t->n = 0;
	for (size_t i = 0; i < NNAMED; i++) {
		method *m = &t->m[t->n++];
		const char *sp = strchr(named[i], ' '), *last = strrchr(named[i], ' ');
		snprintf(m->cls, sizeof m->cls, PKG "%.*s", (int)(sp - named[i]), named[i]);
		snprintf(m->name, sizeof m->name, "%.*s", (int)(last - sp - 1), sp + 1);
		snprintf(m->desc, sizeof m->desc, "%s", last + 1);
		m->access = m->desc[0] ? 1 : 265; /* public static native */
	}
	for (size_t c = 0; c < NCLASSES; c++)
		for (size_t k = 0; k < NCOMMON; k++) {
			method *m = &t->m[t->n++];
			snprintf(m->cls, sizeof m->cls, PKG "%s", classes[c]);
			snprintf(m->name, sizeof m->name, "%s", common[k].name);
			snprintf(m->desc, sizeof m->desc, "%s", common[k].desc);
			m->access = common[k].access;
		}
}

/* Build B's ids: a permutation of 1..N, drawn from the build's name. */
static void ids_of(size_t b, size_t n, int *ids)
{
	srv_demo_rng r = {0x5eed0000u + b};
	for (size_t i = 0; i < strlen(builds[b].build); i++)
		r.s = r.s * 131 + (uint8_t)builds[b].build[i];
	for (size_t i = 0; i < n; i++)
		ids[i] = (int)i + 1;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)srv_demo_below(&r, i);
		int t = ids[i - 1];
		ids[i - 1] = ids[j];
		ids[j] = t;
	}
}

typedef struct id_line {
	int id;
	const method *m;
} id_line;

static int by_id(const void *a, const void *b)
{
	return ((const id_line *)a)->id - ((const id_line *)b)->id;
}

char *srv_demo_android_mapping(size_t i, const char **version, const char **build, size_t *out_len)
{
	static method_table t;
	int ids[MAX_METHODS];
	id_line lines[MAX_METHODS];
	methods_of(&t);
	ids_of(i, t.n, ids);
	for (size_t k = 0; k < t.n; k++)
		lines[k] = (id_line){ids[k], &t.m[k]};
	qsort(lines, t.n, sizeof lines[0], by_id);
	size_t cap = (t.n + 1) * 256, len = 0;
	char *text = malloc(cap);
	for (size_t k = 0; text && k < t.n; k++) {
		const method *m = lines[k].m;
		/* "<id>,<access>,<class> <method>[ <desc>]", as TraceMethod writes it. */
		len += (size_t)snprintf(text + len, cap - len, "%d,%d,%s %s%s%s\n", lines[k].id,
					m->access, m->cls, m->name, m->desc[0] ? " " : "", m->desc);
	}
	if (text)
		len += (size_t)snprintf(text + len, cap - len,
					"%d,1,android.os.Handler dispatchMessage "
					"(Landroid.os.Message;)V\n",
					METHOD_ID_DISPATCH);
	*version = builds[i].version;
	*build = builds[i].build;
	*out_len = len;
	return text;
}

/* ---- the elements -------------------------------------------------------------- */

typedef struct user_row {
	char id[24];
	int os, device, lag;
} user_row;

typedef struct gen {
	const srv_demo_options *opt;
	srv_demo_rng r;
	method_table methods;
	int ids[SRV_DEMO_ANDROID_BUILDS][MAX_METHODS];
	user_row users[USERS];
	int eligible[USERS];
	size_t neligible;
} gen;

/* The build USER runs AGO days before today. */
static int build_of(const user_row *u, int ago)
{
	int b = 0;
	for (int i = 0; i < SRV_DEMO_ANDROID_BUILDS; i++)
		if (builds[i].released - u->lag >= ago)
			b = i;
	return b;
}

/* DeviceUtil's keys, which Matrix puts first in every content. */
static json_t *content(gen *g, const char *tag, time_t at)
{
	static const char *const levels[] = {"HIGH", "MIDDLE", "BEST"};
	json_int_t ms = (json_int_t)at * 1000 + (json_int_t)srv_demo_below(&g->r, 1000);
	return json_pack("{s:s,s:f,s:I,s:I,s:s,s:s,s:I}", "machine",
			 levels[srv_demo_below(&g->r, 3)], "cpu_app",
			 0.001 * (double)srv_demo_below(&g->r, 50), "mem",
			 (json_int_t)(4 + srv_demo_below(&g->r, 9)) << 30, "mem_free",
			 (json_int_t)(300000 + srv_demo_below(&g->r, 900000)), "tag", tag,
			 "process", "com.example.android", "time", ms);
}

/* "depth,id,count,ms\n" lines: the dispatch root for a looper stall, the
 * stall's path each level a little faster than its caller, and a light
 * sibling (the tracker's logging) beside the path's first frame. */
static char *stack_text(gen *g, const stall_row *s, int b, int64_t cost)
{
	char *out = malloc(1024);
	size_t len = 0;
	int depth = 0;
	if (!out)
		return NULL;
	if (s->looper)
		len += (size_t)snprintf(out + len, 1024 - len, "%d,%d,1,%lld\n", depth++,
					METHOD_ID_DISPATCH, (long long)cost);
	int log_id = g->ids[b][21];
	len += (size_t)snprintf(out + len, 1024 - len, "%d,%d,%d,%lld\n", depth, log_id,
				1 + (int)srv_demo_below(&g->r, 4), (long long)(cost / 25));
	int64_t ms = cost - cost / 25 - 5;
	for (int i = 0; i < MAX_PATH && s->path[i]; i++) {
		len += (size_t)snprintf(out + len, 1024 - len, "%d,%d,1,%lld\n", depth + i,
					g->ids[b][s->path[i] - 1], (long long)ms);
		ms -= 5 + (int64_t)srv_demo_below(&g->r, (uint64_t)(ms / 20 + 1));
	}
	return out;
}

/* A Java stack as Thread.getStackTrace's toString lines, innermost first:
 * the stall's path reversed, then the main looper. */
static char *thread_stack_text(const gen *g, const stall_row *s)
{
	char *out = malloc(2048);
	size_t len = 0, n = 0;
	if (!out)
		return NULL;
	while (n < MAX_PATH && s->path[n])
		n++;
	for (size_t i = n; i-- > 0;) {
		const method *m = &g->methods.m[s->path[i] - 1];
		const char *simple = strrchr(m->cls, '.') + 1;
		len += (size_t)snprintf(out + len, 2048 - len, "%s.%s(%.*s.java:%d)\n", m->cls,
					m->name, (int)strcspn(simple, "$"), simple,
					40 + 17 * s->path[i]);
	}
	snprintf(out + len, 2048 - len,
		 "android.os.Handler.dispatchMessage(Handler.java:106)\n"
		 "android.os.Looper.loop(Looper.java:223)\n"
		 "android.app.ActivityThread.main(ActivityThread.java:7656)\n");
	return out;
}

/* Zipf-like pick among the stalls of build B. */
static const stall_row *pick_stall(gen *g, int b)
{
	double total = 0;
	for (size_t i = 0; i < NSTALLS; i++)
		total += stalls[i].since > b ? 0 : 1.0 / (double)(i + 1);
	double x = srv_demo_unit(&g->r) * total;
	for (size_t i = 0; i < NSTALLS; i++) {
		if (stalls[i].since > b)
			continue;
		x -= 1.0 / (double)(i + 1);
		if (x < 0)
			return &stalls[i];
	}
	return &stalls[0];
}

static json_t *evil_method(gen *g, int b, time_t at)
{
	const stall_row *s = pick_stall(g, b);
	json_t *o = content(g, "Trace_EvilMethod", at);
	json_object_set_new(o, "detail", json_string(s->detail));
	int64_t cost =
		s->min_ms + (int64_t)srv_demo_below(&g->r, (uint64_t)(s->max_ms - s->min_ms + 1));
	if (s->max_ms)
		json_object_set_new(o, "cost", json_integer(cost));
	if (strcmp(s->detail, "STARTUP") != 0)
		json_object_set_new(o, "scene", json_string(scenes[srv_demo_below(&g->r, 3)]));
	else
		json_object_set_new(o, "subType", json_integer(1));
	if (s->stack) {
		char *text = stack_text(g, s, b, cost), key[24];
		json_object_set_new(o, "stack", json_string(text ? text : ""));
		snprintf(key, sizeof key, "%d|", g->ids[b][s->path[0] - 1]);
		json_object_set_new(o, "stackKey", json_string(key));
		free(text);
	}
	if (s->thread_stack) {
		char *text = thread_stack_text(g, s);
		json_object_set_new(o, "threadStack", json_string(text ? text : ""));
		json_object_set_new(o, "isProcessForeground", json_true());
		free(text);
	}
	return o;
}

/* Trace_StartUp: cold starts more often early in the day; 3.2.0's cold
 * starts are slower (its search index loads at launch). */
static json_t *startup(gen *g, int b, time_t at)
{
	bool warm = srv_demo_below(&g->r, 10) < 6;
	json_t *o = content(g, "Trace_StartUp", at);
	int64_t app = warm ? 0 : 250 + (int64_t)srv_demo_below(&g->r, 500);
	int64_t activity = warm ? 0 : 180 + (int64_t)srv_demo_below(&g->r, 400);
	int64_t total = warm ? 150 + (int64_t)srv_demo_below(&g->r, 450)
			     : app + activity + 200 + (int64_t)srv_demo_below(&g->r, 700);
	if (!warm && b == 1)
		total += total / 5;
	json_object_set_new(o, "application_create", json_integer(app));
	json_object_set_new(o, "application_create_scene", json_integer(159));
	json_object_set_new(o, "first_activity_create", json_integer(activity));
	json_object_set_new(o, "startup_duration", json_integer(total));
	json_object_set_new(o, "is_warm_start_up", json_boolean(warm));
	return o;
}

/* Trace_FPS of a scene: frames by drop level, their dropped-frame sums. */
static json_t *fps(gen *g, time_t at)
{
	static const char *const keys[] = {"DROPPED_BEST", "DROPPED_NORMAL", "DROPPED_MIDDLE",
					   "DROPPED_HIGH", "DROPPED_FROZEN"};
	static const int per_frame[] = {0, 4, 12, 28, 50};
	size_t sc = (size_t)srv_demo_below(&g->r, NSCENES);
	int64_t total = 300 + (int64_t)srv_demo_below(&g->r, 1500);
	int64_t frozen = total * scene_frozen[sc] / 1000;
	int64_t counts[5] = {0, total / 40, total / 150, total / 400 + frozen / 2, frozen};
	counts[0] = total - counts[1] - counts[2] - counts[3] - counts[4];
	json_t *level = json_object(), *sum = json_object();
	int64_t dropped = 0;
	for (int i = 0; i < 5; i++) {
		json_object_set_new(level, keys[i], json_integer(counts[i]));
		json_object_set_new(sum, keys[i], json_integer(counts[i] * per_frame[i]));
		dropped += counts[i] * per_frame[i];
	}
	json_t *o = content(g, "Trace_FPS", at);
	json_object_set_new(o, "scene", json_string(scenes[sc]));
	json_object_set_new(o, "dropLevel", level);
	json_object_set_new(o, "dropSum", sum);
	json_object_set_new(o, "fps", json_real(60.0 * (double)total / (double)(total + dropped)));
	return o;
}

/* One user's envelope at AT: a startup, a scene's frames or two, and a
 * stall or two for some. */
static json_t *envelope(gen *g, const user_row *u, int ago, time_t at, size_t *n)
{
	int b = build_of(u, ago);
	json_t *list = json_array();
	json_array_append_new(list, startup(g, b, at));
	for (uint64_t i = 0, k = 1 + srv_demo_below(&g->r, 2); i < k; i++)
		json_array_append_new(list, fps(g, at));
	for (uint64_t i = 0, k = srv_demo_below(&g->r, 5); i < k && i < 2; i++)
		json_array_append_new(list, evil_method(g, b, at - 60 * (time_t)i));
	*n = json_array_size(list);
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "app_version", builds[b].version, "build",
			 builds[b].build, "user_id", u->id, "os_version", os_versions[u->os],
			 "device", devices[u->device], "reports", list);
}

/* The day starting at START (AGO days before today) for G's users, as
 * srv_demo_open_day. */
static int open_day(gen *g, srv_demo_list *l, time_t start, int ago)
{
	srv_demo_user users[USERS];
	for (int i = 0; i < USERS; i++) {
		const user_row *u = &g->users[i];
		users[i] = (srv_demo_user){u->id, builds[build_of(u, ago)].version,
					   os_versions[u->os], devices[u->device], false};
	}
	return srv_demo_open_day(l, &g->r, g->opt->app, start, ago, users, USERS, g->eligible,
				 &g->neligible);
}

/* The day's envelopes from START (AGO days before today), from an hour in
 * (after the backfilled check-ins), in time order. Today's are drawn as
 * for a whole day and those not yet due left out: their contents, and so
 * the ids the server derives from them, do not depend on the clock, and a
 * second run the same day sends only what became due meanwhile. */
static int day_envelopes(gen *g, srv_demo_list *l, time_t start, int ago)
{
	int rc = 0;
	for (size_t i = 0; i < g->neligible && rc == 0; i++) {
		if (srv_demo_below(&g->r, 1000) >= SENDING_PER_MILLE)
			continue;
		time_t at = start + 3600 +
			    (time_t)((double)(DAY_SECONDS - 3600) *
				     ((double)i + srv_demo_unit(&g->r)) / (double)g->neligible);
		size_t n = 0;
		json_t *body = envelope(g, &g->users[g->eligible[i]], ago, at, &n);
		if (!ago && at > g->opt->now - 60)
			json_decref(body);
		else
			rc = srv_demo_push(l, SRV_DEMO_MATRIX, ago ? at : 0, NULL, body, n);
	}
	return rc;
}

int srv_demo_android_requests(const srv_demo_options *opt, srv_demo_request **out, size_t *out_n)
{
	gen *g = calloc(1, sizeof *g);
	if (!g)
		return -1;
	g->opt = opt;
	g->r.s = opt->seed * 7919 + 44;
	methods_of(&g->methods);
	for (size_t b = 0; b < SRV_DEMO_ANDROID_BUILDS; b++)
		ids_of(b, g->methods.n, g->ids[b]);
	for (int i = 0; i < USERS; i++) {
		user_row *u = &g->users[i];
		snprintf(u->id, sizeof u->id, "android-%03d", i + 1);
		u->os = (int)srv_demo_below(&g->r, NOSES);
		u->device = (int)srv_demo_below(&g->r, NDEVICES);
		u->lag = (int)srv_demo_below(&g->r, 3);
	}
	srv_demo_list l = {0};
	int rc = 0;
	for (int d = 0; d < opt->days && rc == 0; d++) {
		int ago;
		time_t start, span;
		srv_demo_day(opt, d, &start, &ago, &span);
		rc = open_day(g, &l, start, ago);
		if (rc == 0)
			rc = day_envelopes(g, &l, start, ago);
	}
	free(g);
	if (rc < 0) {
		srv_demo_requests_free(l.v, l.n);
		return -1;
	}
	*out = l.v;
	*out_n = l.n;
	return 0;
}
