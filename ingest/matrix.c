/*
 * matrix.c — Matrix TraceCanary (Android) bodies (SPEC §13; see matrix.h).
 *
 * Matrix never uploads: the app's PluginListener posts what it got, the
 * content object or Issue.toString()'s log line (FORMATS §1), and the
 * envelope carries what the payload lacks (version, build, user, device).
 * A Trace_EvilMethod element's report has image 0 standing for the build's
 * method mapping when it has a method-id `stack`; thread 0 is the stack's
 * heaviest path (or the threadStack when there is no stack), thread 1 the
 * threadStack beside a stack.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/json.h"
#include "ingest/field.h"
#include "ingest/matrix.h"
#include "ingest/matrix_stack.h"

/* What every element of the body shares. */
typedef struct mx_env {
	const char *app_version, *build, *user_id, *os_version, *device;
	uint8_t mapping_uuid[16];
} mx_env;

/* The latest "time" a device clock can claim: 9999-12-31T23:59:59.999Z. */
#define MX_TIME_MAX_MS UINT64_C(253402300799999)
/* Frames per drop level in one report: an hour at 240 Hz is under 10^6. */
#define MX_FRAMES_MAX UINT64_C(1000000000)
/* No screen refreshes faster; a larger fps would skew every mean. */
#define MX_FPS_MAX 1000.0

static const struct {
	const char *detail;
	ing_kind kind;
} details[] = {
	{"NORMAL", ING_KIND_SLOW_METHOD},
	/* 0.4.x: ENTER the first activity's slow enter, FULL a full buffer. */
	{"ENTER", ING_KIND_SLOW_METHOD},
	{"FULL", ING_KIND_SLOW_METHOD},
	{"ANR", ING_KIND_ANR},
	{"SIGNAL_ANR", ING_KIND_ANR},
	{"SIGNAL_ANR_NATIVE_BACKTRACE", ING_KIND_ANR},
	{"LAG", ING_KIND_LAG},
	{"LAG_IDLE_HANDLER", ING_KIND_LAG},
	{"LAG_TOUCH", ING_KIND_LAG},
	{"STARTUP", ING_KIND_SLOW_STARTUP},
	{"PRIORITY_MODIFIED", ING_KIND_THREAD_POLICY},
	{"TIMERSLACK_MODIFIED", ING_KIND_THREAD_POLICY},
};

/* FrameTracer's level names, in ing_measure's order. */
static const char *const drop_keys[ING_DROP_LEVELS] = {
	"DROPPED_BEST", "DROPPED_NORMAL", "DROPPED_MIDDLE", "DROPPED_HIGH", "DROPPED_FROZEN",
};

void ing_matrix_mapping_uuid(const char *app_version, const char *build, uint8_t out[16])
{
	static const char label[] = "matrix-mapping"; /* with its NUL */
	XXH3_state_t st;
	app_version = app_version ? app_version : "";
	build = build ? build : "";
	XXH3_128bits_reset(&st);
	XXH3_128bits_update(&st, label, sizeof label);
	XXH3_128bits_update(&st, app_version, strlen(app_version) + 1);
	XXH3_128bits_update(&st, build, strlen(build));
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&st));
	memcpy(out, c.digest, 16);
	out[6] = (uint8_t)((out[6] & 0x0f) | 0x80);
	out[8] = (uint8_t)((out[8] & 0x3f) | 0x80);
}

/* ---- envelope -------------------------------------------------------- */

static int required_dimension(ing_ctx *c, const json_t *root, const char *key, const char **out)
{
	if (ing_dimension_field(c, root, "", key, out) < 0)
		return -1;
	if (!*out)
		return ing_fail(c, ERR_BAD_FIELD, "%s: %s", key,
				ing_get(root, key) ? "must not be empty" : "missing");
	return 0;
}

static int parse_envelope(ing_ctx *c, const json_t *root, mx_env *env, const json_t **list)
{
	if (!json_is_object(root))
		return ing_fail(c, ERR_BAD_FIELD,
				"body: expected {\"app_version\",\"build\",…,"
				"\"reports\":[…]}");
	const char *user;
	if (required_dimension(c, root, "app_version", &env->app_version) < 0 ||
	    required_dimension(c, root, "build", &env->build) < 0 ||
	    ing_dimension_field(c, root, "", "user_id", &user) < 0 ||
	    ing_dimension_field(c, root, "", "os_version", &env->os_version) < 0 ||
	    ing_dimension_field(c, root, "", "device", &env->device) < 0)
		return -1;
	env->user_id = user ? user : c->user_id;
	ing_matrix_mapping_uuid(env->app_version, env->build, env->mapping_uuid);
	*list = ing_get(root, "reports");
	if (!*list)
		return ing_fail(c, ERR_BAD_FIELD, "reports: missing");
	if (!json_is_array(*list))
		return ing_fail(c, ERR_BAD_FIELD, "reports: expected an array");
	size_t n = json_array_size(*list);
	if (n == 0)
		return ing_fail(c, ERR_BAD_FIELD, "reports: empty batch");
	if (n > c->limits->max_reports)
		return ing_fail(c, ERR_TOO_MANY, "reports: %zu reports, more than the limit of %zu",
				n, c->limits->max_reports);
	return 0;
}

/* ---- element: content object or Issue.toString() line --------------- */

typedef struct mx_line {
	const char *tag, *json; /* tag[…] and the content's JSON text */
	size_t tag_len, json_len;
} mx_line;

/* The end of the text between P and the next MARK (before END), or NULL. */
static const char *until(const char *p, const char *end, const char *mark)
{
	return memmem(p, (size_t)(end - p), mark, strlen(mark));
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* "null" (Matrix ≤ 0.5.2 printed an Integer) or a decimal int. */
static bool issue_type(const char *p, const char *end)
{
	if (end - p == 4 && !memcmp(p, "null", 4))
		return true;
	p += p < end && *p == '-';
	if (p == end)
		return false;
	for (; p < end; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* S (LEN bytes) as `tag[T]type[N];key[K];content[{…}]` (a log prefix
 * before tag[ tolerated), or as the content's own JSON text. */
static bool issue_line(const char *s, size_t len, mx_line *l)
{
	const char *end = s + len;
	memset(l, 0, sizeof *l);
	while (s < end && is_blank(*s))
		s++;
	while (end > s && is_blank(end[-1]))
		end--;
	if (s < end && *s == '{') {
		l->json = s;
		l->json_len = (size_t)(end - s);
		return true;
	}
	const char *tag = until(s, end, "tag[");
	const char *tag_end = tag ? until(tag + 4, end, "]type[") : NULL;
	const char *type_end = tag_end ? until(tag_end + 6, end, "];key[") : NULL;
	const char *content = type_end ? until(type_end + 6, end, "];content[") : NULL;
	if (!content || !issue_type(tag_end + 6, type_end) || end[-1] != ']')
		return false;
	l->tag = tag + 4;
	l->tag_len = (size_t)(tag_end - l->tag);
	l->json = content + 10;
	if (l->json > end - 1)
		return false;
	l->json_len = (size_t)(end - 1 - l->json);
	return true;
}

/* String element V at WHERE: its content parsed into *OWNED, the line's
 * tag (NULL when none) into *LINE_TAG. */
static int line_content(ing_ctx *c, const json_t *v, const char *where, json_t **owned,
			const char **line_tag)
{
	mx_line l;
	if (!issue_line(json_string_value(v), json_string_length(v), &l))
		return ing_fail(c, ERR_BAD_FIELD,
				"%s: not an Issue.toString() line "
				"(tag[…]type[…];key[…];content[{…}])",
				where);
	if (l.tag_len && l.tag_len <= c->limits->max_string &&
	    !(*line_tag = ing_arena_strndup(c->arena, l.tag, l.tag_len)))
		return ing_nomem(c);
	char why[200];
	/* As deep as the same content sent as an object inside the body. */
	size_t depth = c->limits->max_depth > 2 ? c->limits->max_depth - 2 : 1;
	if (!(*owned = cm_json_parse(l.json, l.json_len, depth, why, sizeof why)))
		return ing_fail(c, ERR_BAD_FIELD, "%s: content[…]: %s", where, why);
	if (!json_is_object(*owned))
		return ing_fail(c, ERR_BAD_FIELD, "%s: content[…]: expected a JSON object", where);
	return 0;
}

/* ---- Trace_EvilMethod ------------------------------------------------ */

/* O[KEY] at WHERE as milliseconds 0…1 h; absent → -1 (a failure when
 * REQUIRED). */
static int ms_field(ing_ctx *c, const json_t *o, const char *where, const char *key, bool required,
		    int64_t *out)
{
	char path[ING_PATH_MAX];
	const json_t *v = ing_get(o, key);
	*out = -1;
	ing_path_key(path, sizeof path, where, key);
	if (!v)
		return required ? ing_fail(c, ERR_BAD_FIELD, "%s: missing", path) : 0;
	if (!json_is_number(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected milliseconds", path);
	double d = json_number_value(v);
	if (d < 0)
		return ing_fail(c, ERR_BAD_FIELD, "%s: negative duration", path);
	if (d > (double)ING_MSTACK_MS_MAX)
		return ing_fail(c, ERR_BAD_FIELD, "%s: more than an hour", path);
	*out = json_is_integer(v) ? (int64_t)json_integer_value(v) : (int64_t)floor(d);
	return 0;
}

/* O's "time" (device epoch ms) into *MS and as RFC 3339 UTC with
 * milliseconds into *TEXT; absent or odd → -1 and NULL (only metadata). */
static int epoch_time(ing_ctx *c, const json_t *o, int64_t *ms, const char **text)
{
	uint64_t u;
	struct tm tm;
	char buf[48];
	const json_t *v = ing_get(o, "time");
	*ms = -1;
	*text = NULL;
	if (!v || ing_uint_value(v, MX_TIME_MAX_MS, &u))
		return 0;
	time_t secs = (time_t)(u / 1000);
	if (!gmtime_r(&secs, &tm))
		return 0;
	*ms = (int64_t)u;
	size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof buf - n, ".%03dZ", (int)(u % 1000));
	if (!(*text = ing_arena_strdup(c->arena, buf)))
		return ing_nomem(c);
	return 0;
}

static int evil_kind(ing_ctx *c, const json_t *o, const char *where, ing_kind *kind)
{
	char path[ING_PATH_MAX];
	const char *detail;
	if (ing_string_field(c, o, where, "detail", true, &detail) < 0)
		return -1;
	for (size_t i = 0; i < sizeof details / sizeof *details; i++)
		if (!strcmp(details[i].detail, detail)) {
			*kind = details[i].kind;
			return 0;
		}
	return ing_fail(c, ERR_UNSUPPORTED_REPORT, "%s: unknown detail \"%.64s\"",
			ing_path_key(path, sizeof path, where, "detail"), detail);
}

/* The content O as compact JSON text, kept with the report. */
static int keep_content(ing_ctx *c, const json_t *o, const char *where, const char **out)
{
	size_t len;
	char *text = cm_json_dump(o, &len);
	if (!text)
		return ing_fail(c, ERR_BAD_FIELD, "%s: content nested too deep to keep", where);
	*out = ing_arena_strndup(c->arena, text, len);
	free(text);
	return *out ? 0 : ing_nomem(c);
}

/* The report's own fields: dimensions, time, kind, duration, keys. */
static int evil_fields(ing_ctx *c, const mx_env *env, const json_t *o, const char *where,
		       ing_report *r)
{
	int64_t ms;
	r->platform = ING_PLATFORM_ANDROID;
	r->source = "matrix";
	r->os = "android";
	r->app_version = env->app_version;
	r->build = env->build;
	r->os_version = env->os_version;
	r->device = env->device;
	r->user_id = env->user_id;
	if (evil_kind(c, o, where, &r->kind) < 0 ||
	    ms_field(c, o, where, "cost", false, &r->duration_ms) < 0 ||
	    epoch_time(c, o, &ms, &r->timestamp) < 0 ||
	    ing_string_field(c, o, where, "stackKey", false, &r->client_key) < 0)
		return -1;
	return keep_content(c, o, where, &r->matrix_content);
}

/* O's "stack" tree: its heaviest path, innermost first, into OUT. */
static int method_stack(ing_ctx *c, const json_t *o, const char *where, ing_stack *out)
{
	char path[ING_PATH_MAX], why[160];
	const json_t *v = ing_get(o, "stack");
	ing_path_key(path, sizeof path, where, "stack");
	if (!v)
		return 0;
	if (!json_is_string(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected a string", path);
	ing_mtree t;
	int rc = ing_mtree_parse(c->arena, json_string_value(v), json_string_length(v), &t, why,
				 sizeof why);
	if (rc == ING_MSTACK_NOMEM)
		return ing_nomem(c);
	if (rc < 0)
		return ing_fail(c, ERR_BAD_FIELD, "%s %s", path, why);
	size_t *idx = ing_arena_calloc(c->arena, t.n, sizeof *idx);
	if (!idx)
		return ing_nomem(c);
	ptrdiff_t n = ing_mtree_heaviest(&t, idx, c->limits->max_frames);
	if (n < 0)
		return ing_fail(c, ERR_TOO_MANY, "%s: heaviest path deeper than %zu frames", path,
				c->limits->max_frames);
	if (n == 0)
		return 0;
	out->nframes = (size_t)n;
	out->frames = ing_arena_calloc(c->arena, out->nframes, sizeof *out->frames);
	out->java = ing_arena_calloc(c->arena, out->nframes, sizeof *out->java);
	if (!out->frames || !out->java)
		return ing_nomem(c);
	for (size_t k = 0; k < out->nframes; k++) {
		const ing_mnode *node = &t.nodes[idx[out->nframes - 1 - k]];
		out->frames[k].address = node->method_id;
		out->java[k] = (ing_java_frame){.ms = node->ms, .count = node->count};
	}
	return 0;
}

/* O's "threadStack" text as frames into OUT. */
static int thread_stack(ing_ctx *c, const json_t *o, const char *where, ing_stack *out)
{
	char path[ING_PATH_MAX];
	const json_t *v = ing_get(o, "threadStack");
	if (!v)
		return 0;
	if (!json_is_string(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected a string",
				ing_path_key(path, sizeof path, where, "threadStack"));
	if (ing_thread_stack_parse(c->arena, json_string_value(v), json_string_length(v),
				   c->limits->max_frames, c->limits->max_string, out) < 0)
		return ing_nomem(c);
	return 0;
}

/* The threads (and the mapping's image) of O into R. */
static int evil_stacks(ing_ctx *c, const mx_env *env, const json_t *o, const char *where,
		       ing_report *r)
{
	ing_stack tree = {0}, text = {0};
	if (method_stack(c, o, where, &tree) < 0 || thread_stack(c, o, where, &text) < 0)
		return -1;
	size_t n = tree.nframes && text.nframes ? 2 : 1;
	if (ing_threads_alloc(c, n, where, r) < 0)
		return -1;
	r->nthreads = n;
	r->threads[0] =
		(ing_thread){.name = "main", .main = true, .stack = tree.nframes ? tree : text};
	if (n == 2)
		r->threads[1] = (ing_thread){.name = "threadStack", .stack = text};
	if (!tree.nframes)
		return 0;
	if (!(r->images = ing_arena_calloc(c->arena, 1, sizeof *r->images)))
		return ing_nomem(c);
	r->nimages = 1;
	size_t len = strlen(ING_MATRIX_IMAGE_DIR) + strlen(env->build) + 1 +
		     strlen(ING_MATRIX_IMAGE_FILE) + 1;
	char *name = ing_arena_alloc(c->arena, len);
	if (!name)
		return ing_nomem(c);
	snprintf(name, len, ING_MATRIX_IMAGE_DIR "%s/" ING_MATRIX_IMAGE_FILE, env->build);
	r->images[0] = (ing_image){.name = name,
				   .has_uuid = true,
				   .arch = SYM_ARCH_JAVA,
				   .size = ING_MATRIX_IMAGE_SIZE};
	memcpy(r->images[0].uuid, env->mapping_uuid, 16);
	return 0;
}

static int parse_evil(ing_ctx *c, const mx_env *env, ing_entry *e, const json_t *o,
		      const char *where)
{
	ing_report *r = ing_arena_alloc(c->arena, sizeof *r);
	if (!r)
		return ing_nomem(c);
	if (evil_fields(c, env, o, where, r) < 0 || evil_stacks(c, env, o, where, r) < 0)
		return -1;
	r->report_id = e->report_id;
	e->report = r;
	return 0;
}

/* ---- Trace_StartUp and Trace_FPS ------------------------------------ */

static int startup_fields(ing_ctx *c, const json_t *o, const char *where, ing_measure *m)
{
	char path[ING_PATH_MAX];
	if (ms_field(c, o, where, "startup_duration", true, &m->startup_ms) < 0 ||
	    ms_field(c, o, where, "application_create", false, &m->application_create_ms) < 0 ||
	    ms_field(c, o, where, "first_activity_create", false, &m->first_activity_create_ms) < 0)
		return -1;
	const json_t *warm = ing_get(o, "is_warm_start_up");
	if (warm && !json_is_boolean(warm))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected true or false",
				ing_path_key(path, sizeof path, where, "is_warm_start_up"));
	m->warm = json_is_true(warm);
	return 0;
}

/* O[KEY] at WHERE: frame counts by drop level into OUT (missing levels 0). */
static int drop_levels(ing_ctx *c, const json_t *o, const char *where, const char *key,
		       int64_t out[ING_DROP_LEVELS])
{
	char path[ING_PATH_MAX], item[ING_PATH_MAX];
	const json_t *v = ing_get(o, key);
	ing_path_key(path, sizeof path, where, key);
	if (v && !json_is_object(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object", path);
	for (size_t i = 0; i < ING_DROP_LEVELS; i++) {
		const json_t *n = ing_get(v, drop_keys[i]);
		const char *why;
		uint64_t u = 0;
		if (n && (why = ing_uint_value(n, MX_FRAMES_MAX, &u)))
			return ing_fail(c, ERR_BAD_FIELD, "%s: %s",
					ing_path_key(item, sizeof item, path, drop_keys[i]), why);
		out[i] = (int64_t)u;
	}
	return 0;
}

static int fps_fields(ing_ctx *c, const json_t *o, const char *where, ing_measure *m)
{
	char path[ING_PATH_MAX];
	if (ing_string_field(c, o, where, "scene", false, &m->scene) < 0 ||
	    drop_levels(c, o, where, "dropLevel", m->drop_level) < 0 ||
	    drop_levels(c, o, where, "dropSum", m->drop_sum) < 0)
		return -1;
	if (!m->scene)
		m->scene = "";
	const json_t *fps = ing_get(o, "fps");
	ing_path_key(path, sizeof path, where, "fps");
	if (!fps)
		return ing_fail(c, ERR_BAD_FIELD, "%s: missing", path);
	if (!json_is_number(fps) || !(json_number_value(fps) >= 0) ||
	    json_number_value(fps) > MX_FPS_MAX)
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected a number from 0 to %.0f", path,
				MX_FPS_MAX);
	m->fps = json_number_value(fps);
	return 0;
}

/* O at WHERE as a measure of KIND into E, keyed and dimensioned as a
 * report would be. */
static int parse_measure(ing_ctx *c, const mx_env *env, ing_entry *e, const json_t *o,
			 const char *where, ing_measure_kind kind)
{
	const char *ignored;
	ing_measure *m = ing_arena_alloc(c->arena, sizeof *m);
	if (!m)
		return ing_nomem(c);
	*m = (ing_measure){.kind = kind,
			   .key = e->report_id,
			   .app_version = env->app_version,
			   .build = env->build,
			   .user_id = env->user_id,
			   .os_version = env->os_version,
			   .device = env->device};
	if (epoch_time(c, o, &m->time_ms, &ignored) < 0 ||
	    (kind == ING_MEASURE_STARTUP ? startup_fields(c, o, where, m)
					 : fps_fields(c, o, where, m)) < 0)
		return -1;
	e->measure = m;
	return 0;
}

/* ---- body ------------------------------------------------------------ */

/* Content O of element WHERE into E: its key, then by tag. */
static int parse_content(ing_ctx *c, const mx_env *env, ing_entry *e, const json_t *o,
			 const char *where, const char *line_tag)
{
	char key[33];
	const char *tag;
	if (ing_metrickit_entry_key(o, env->user_id, key) < 0 ||
	    !(e->report_id = ing_arena_strdup(c->arena, key)))
		return ing_nomem(c);
	if (ing_string_field(c, o, where, "tag", false, &tag) < 0)
		return -1;
	if (!tag && !(tag = line_tag))
		return ing_fail(c, ERR_BAD_FIELD, "%s.tag: missing", where);
	if (!strcmp(tag, "Trace_EvilMethod"))
		return parse_evil(c, env, e, o, where);
	if (!strcmp(tag, "Trace_StartUp"))
		return parse_measure(c, env, e, o, where, ING_MEASURE_STARTUP);
	if (!strcmp(tag, "Trace_FPS"))
		return parse_measure(c, env, e, o, where, ING_MEASURE_FRAMES);
	return ing_fail(c, ERR_UNSUPPORTED_REPORT,
			"%s.tag: \"%.64s\" is not a report stallscope reads (Trace_EvilMethod, "
			"Trace_StartUp, Trace_FPS)",
			where, tag);
}

/* Element I (V) into the batch's next entry; a refusal stays in the
 * entry, -1 only for what fails the whole body. */
static int parse_element(ing_ctx *c, const mx_env *env, ing_batch *b, ing_error *err,
			 const json_t *v, size_t i)
{
	char where[ING_PATH_MAX];
	ing_path_index(where, sizeof where, "reports", i);
	ing_entry *e = &b->entries[b->nentries++];
	c->err = &e->error;
	json_t *owned = NULL;
	const char *line_tag = NULL;
	int rc;
	if (json_is_object(v))
		rc = parse_content(c, env, e, v, where, NULL);
	else if (json_is_string(v))
		rc = line_content(c, v, where, &owned, &line_tag) < 0
			     ? -1
			     : parse_content(c, env, e, owned, where, line_tag);
	else
		rc = ing_fail(c, ERR_BAD_FIELD,
			      "%s: expected a content object or an Issue.toString() line", where);
	json_decref(owned);
	if (rc < 0 && c->fatal) {
		*err = e->error;
		return -1;
	}
	return 0;
}

int ing_parse_matrix_json(const json_t *root, const ing_limits *limits, const char *user_id,
			  ing_batch **out_batch, ing_error *err)
{
	ing_limits defaults = ing_limits_default();
	ing_ctx c;
	ing_batch *b;
	mx_env env = {0};
	const json_t *list = NULL;
	if (!limits)
		limits = &defaults;
	*out_batch = NULL;
	if (ing_batch_begin(limits, user_id, err, &c, &b) < 0)
		return -1;
	b->is_batch = true;
	if (parse_envelope(&c, root, &env, &list) < 0 ||
	    ing_batch_reserve(&c, b, json_array_size(list)) < 0)
		return ing_batch_abort(&c, b);
	for (size_t i = 0; i < json_array_size(list); i++)
		if (parse_element(&c, &env, b, err, json_array_get(list, i), i) < 0)
			return ing_batch_abort(&c, b);
	*out_batch = b;
	return 0;
}

int ing_parse_matrix(const char *body, size_t len, const ing_limits *limits, const char *user_id,
		     ing_batch **out_batch, ing_error *err)
{
	return ing_parse_text(ing_parse_matrix_json, body, len, limits, 0, user_id, out_batch, err);
}

/* The stored text as the envelope it came in (one element): the
 * dimensions are the envelope's, the element is kept whole. */
static int stored_envelope(const json_t *stored, const ing_limits *limits, const char *user_id,
			   ing_batch **out_batch, ing_error *err)
{
	static const char *const keys[] = {"app_version", "build", "user_id", "os_version",
					   "device"};
	const json_t *content = json_object_get(stored, "matrix");
	json_t *env = json_object();
	json_t *list = json_array();
	bool ok = env && list && json_is_object(content) &&
		  json_array_append(list, (json_t *)content) == 0 &&
		  json_object_set(env, "reports", list) == 0;
	for (size_t i = 0; ok && i < sizeof keys / sizeof keys[0]; i++) {
		const json_t *v = json_object_get(stored, keys[i]);
		ok = !json_is_string(v) || json_object_set(env, keys[i], (json_t *)v) == 0;
	}
	int rc = ok ? ing_parse_matrix_json(env, limits, user_id, out_batch, err)
		    : ing_error_set(err, ERR_BAD_FIELD, "matrix: not a stored Matrix report");
	json_decref(list);
	json_decref(env);
	return rc;
}

int ing_parse_matrix_stored(const char *text, size_t len, ing_batch **out_batch, ing_error *err)
{
	return ing_parse_text(stored_envelope, text, len, NULL, 0, NULL, out_batch, err);
}
