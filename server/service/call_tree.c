/*
 * call_tree.c — see call_tree.h. Nodes live in one array (node 0 is the
 * root), linked to their first child and next sibling; a hash table of
 * (parent, identity) finds a child. Strings are copied once per node into
 * the tree's arena.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/jsonw.h"
#include "ingest/grouping.h"
#include "server/service/call_tree.h"
#include "server/service/folded_read.h"
#include "store/group_stacks.h"

#define OTHER "(other)"
#define NONE  UINT32_MAX
/* Twice the most nodes there can be (SRV_TREE_MAX_NODES and the root,
 * each with at most one "(other)" child): at most about half full. */
#define SLOTS (4u * SRV_TREE_MAX_NODES)

typedef struct frame_info {
	const char *frame, *function, *file, *image;
	int64_t line; /* 0 when unknown */
	int64_t ms;   /* an Android frame's duration, summed over the stack's
		       * reports; -1 when none */
} frame_info;

typedef struct node {
	frame_info info;
	int64_t count, self, ms;
	uint32_t parent, first_child, next_sibling;
	bool other;
} node;

typedef struct tree {
	node *nodes;
	size_t n;
	uint32_t *slots; /* node index + 1, 0 when empty */
	ing_arena *arena;
	int64_t reports;
	bool has_ms; /* some frame carried "ms" (Android): nodes say theirs */
} tree;

static void tree_free(tree *t)
{
	free(t->nodes);
	free(t->slots);
	ing_arena_free(t->arena);
	memset(t, 0, sizeof *t);
}

static int tree_init(tree *t)
{
	tree_free(t);
	t->nodes = calloc(2 * SRV_TREE_MAX_NODES + 2, sizeof *t->nodes);
	t->slots = calloc(SLOTS, sizeof *t->slots);
	t->arena = ing_arena_new(0);
	if (!t->nodes || !t->slots || !t->arena)
		return -1;
	t->n = 1;
	t->nodes[0].first_child = t->nodes[0].next_sibling = NONE;
	return 0;
}

static size_t slot_of(uint32_t parent, const char *frame)
{
	uint64_t h = XXH3_64bits_withSeed(frame, strlen(frame), parent);
	return (size_t)(h & (SLOTS - 1));
}

/* A copy of S in the tree's arena; false when out of memory. */
static bool keep(tree *t, const char **s)
{
	return !*s || (*s = ing_arena_strdup(t->arena, *s)) != NULL;
}

/* PARENT's child FRAME, or NONE with *SLOT where it would go. */
static uint32_t find(const tree *t, uint32_t parent, const char *frame, size_t *slot)
{
	size_t k = slot_of(parent, frame);
	for (; t->slots[k]; k = (k + 1) & (SLOTS - 1)) {
		const node *c = &t->nodes[t->slots[k] - 1];
		if (c->parent == parent && !strcmp(c->info.frame, frame))
			return t->slots[k] - 1;
	}
	*slot = k;
	return NONE;
}

/* PARENT's child named INFO->frame, made when new: its "(other)" child
 * instead once the tree holds SRV_TREE_MAX_NODES nodes. NONE when out of
 * memory. */
static uint32_t child_of(tree *t, uint32_t parent, const frame_info *info)
{
	static const frame_info other_info = {OTHER, NULL, NULL, NULL, 0, -1};
	size_t k;
	uint32_t i = find(t, parent, info->frame, &k);
	bool other = i == NONE && t->n > SRV_TREE_MAX_NODES;
	if (other)
		i = find(t, parent, OTHER, &k);
	if (i != NONE)
		return i;
	i = (uint32_t)t->n;
	node *c = &t->nodes[i];
	c->info = other ? other_info : *info;
	if (!keep(t, &c->info.frame) || !keep(t, &c->info.function) || !keep(t, &c->info.file) ||
	    !keep(t, &c->info.image))
		return NONE;
	c->other = other;
	c->parent = parent;
	c->first_child = NONE;
	c->next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = i;
	t->slots[k] = i + 1;
	t->n++;
	return i;
}

/* W reports of the stack PATH (DEPTH identities, outermost first; COMPLETE
 * when it reaches the innermost frame). 0 or -1. */
static int tree_add(tree *t, const frame_info *path, size_t depth, bool complete, int64_t w)
{
	uint32_t at = 0;
	for (size_t d = 0; d < depth; d++) {
		if ((at = child_of(t, at, &path[d])) == NONE)
			return -1;
		t->nodes[at].count += w;
		if (path[d].ms >= 0) {
			t->nodes[at].ms += path[d].ms;
			t->has_ms = true;
		}
		if (t->nodes[at].other) {
			complete = false;
			break;
		}
	}
	if (complete && at != 0)
		t->nodes[at].self += w;
	return 0;
}

static const char *string_at(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static uint64_t hex_at(const json_t *o, const char *key)
{
	const char *s = string_at(o, key);
	return s ? strtoull(s, NULL, 16) : 0;
}

/* An Android frame (it has "method_id", or is a threadStack frame of
 * image "java") is grouped by its symbol, or "#ID" without one
 * (ingest/symbolicate.c). */
static bool is_java(const json_t *fr)
{
	const char *image = string_at(fr, "image");
	return image && !strcmp(image, "java") && !json_object_get(fr, "address");
}

/* FR (a stored frame, ingest/symbolicate.h) as grouping sees it; its
 * function names in ARENA. 0 or -1. */
static int gframe_of(const json_t *fr, ing_arena *arena, ing_gframe *g)
{
	const json_t *chain = json_object_get(fr, "frames");
	size_t n = json_array_size(chain);
	const char **names = ing_arena_calloc(arena, n ? n : 1, sizeof *names);
	if (!names)
		return -1;
	if (is_java(fr)) {
		json_int_t id = json_integer_value(json_object_get(fr, "method_id"));
		for (size_t k = 0; k < n; k++)
			names[k] = string_at(json_array_get(chain, k), "symbol");
		char hint[24];
		snprintf(hint, sizeof hint, "#%lld", (long long)id);
		*g = (ing_gframe){.image = "java",
				  .functions = names,
				  .nfunctions = n,
				  .hint = n ? NULL : ing_arena_strdup(arena, hint),
				  .offset = (uint64_t)id};
		return n || g->hint ? 0 : -1;
	}
	for (size_t k = 0; k < n; k++)
		names[k] = string_at(json_array_get(chain, k), "function");
	*g = (ing_gframe){.image = string_at(fr, "image"),
			  .functions = names,
			  .nfunctions = n,
			  .hint = string_at(fr, json_object_get(fr, "hint_function")
							? "hint_function"
							: "symbol_hint"),
			  .offset = hex_at(fr, "offset"),
			  .address = hex_at(fr, "address")};
	return 0;
}

/* Frame I's duration summed over REPORTS reports: MS[I], their sum
 * (schema/051); without MS, a stack stored before kept each report's in
 * its frames. -1 when none. */
static int64_t ms_of(const json_t *fr, size_t i, const json_t *ms, int64_t reports)
{
	const json_t *v = ms ? json_array_get(ms, i) : json_object_get(fr, "ms");
	if (!json_is_integer(v))
		return -1;
	return ms ? json_integer_value(v) : json_integer_value(v) * reports;
}

/* The outermost SRV_TREE_MAX_DEPTH identities of FRAMES (innermost first)
 * into PATH, outermost first, with the durations of REPORTS reports (MS,
 * see ms_of): their count, or -1. *COMPLETE tells whether they reach the
 * innermost one. */
static long path_of(const json_t *frames, const json_t *ms, int64_t reports, ing_arena *arena,
		    frame_info *path, bool *complete)
{
	size_t depth = 0;
	*complete = true;
	for (size_t i = json_array_size(frames); i-- > 0;) {
		const json_t *fr = json_array_get(frames, i);
		ing_gframe g;
		if (gframe_of(fr, arena, &g) != 0)
			return -1;
		for (size_t k = ing_frame_depth(&g); k-- > 0;) {
			if (depth == SRV_TREE_MAX_DEPTH) {
				*complete = false;
				return (long)depth;
			}
			const json_t *entry = json_array_get(json_object_get(fr, "frames"), k);
			frame_info *p = &path[depth++];
			if (!(p->frame = ing_frame_identity(&g, k, arena)))
				return -1;
			p->function = string_at(entry, "function");
			p->file = string_at(entry, "file");
			p->line = json_integer_value(json_object_get(entry, "line"));
			p->image = g.image;
			p->ms = ms_of(fr, i, ms, reports);
		}
	}
	return (long)depth;
}

/* st_stack_cb: REPORTS reports of the stack BODY into the tree. */
static int add_stack(void *cls, int64_t reports, const char *body, const char *ms_json)
{
	tree *t = cls;
	t->reports += reports;
	json_t *root = body ? json_loads(body, 0, NULL) : NULL;
	const json_t *frames = json_is_array(root) ? root : json_object_get(root, "frames");
	ing_arena *scratch = ing_arena_new(0);
	frame_info *path = calloc(SRV_TREE_MAX_DEPTH, sizeof *path);
	json_t *ms = ms_json ? json_loads(ms_json, 0, NULL) : NULL;
	bool complete;
	long depth = scratch && path && (ms || !ms_json)
			     ? path_of(frames, ms, reports, scratch, path, &complete)
			     : -1;
	int rc = depth < 0 ? -1 : tree_add(t, path, (size_t)depth, complete, reports);
	free(path);
	ing_arena_free(scratch);
	json_decref(ms);
	json_decref(root);
	return rc;
}

/* One child as written: a node, or NONE for the "(other)" the fold made. */
typedef struct shown {
	uint32_t node;
	int64_t count, self, ms;
	const char *frame;
} shown;

static int by_count(const void *a, const void *b)
{
	const shown *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->frame, y->frame);
}

/* PARENT's children as written, best first, the tail and any "(other)"
 * child folded into one (*OUT, malloc'ed): how many, or -1. */
static long children_of(const tree *t, uint32_t parent, shown **out)
{
	size_t n = 0;
	for (uint32_t c = t->nodes[parent].first_child; c != NONE; c = t->nodes[c].next_sibling)
		n++;
	shown *v = calloc(n ? n : 1, sizeof *v);
	if (!(*out = v))
		return -1;
	shown other = {NONE, 0, 0, 0, OTHER};
	bool folded = false;
	size_t k = 0;
	for (uint32_t c = t->nodes[parent].first_child; c != NONE; c = t->nodes[c].next_sibling) {
		const node *x = &t->nodes[c];
		if (x->other) {
			other.count += x->count;
			other.self += x->self;
			other.ms += x->ms;
			folded = true;
		} else {
			v[k++] = (shown){c, x->count, x->self, x->ms, x->info.frame};
		}
	}
	qsort(v, k, sizeof *v, by_count);
	if (k + folded > SRV_TREE_MAX_CHILDREN) {
		for (size_t i = SRV_TREE_MAX_CHILDREN - 1; i < k; i++) {
			other.count += v[i].count;
			other.self += v[i].self;
			other.ms += v[i].ms;
		}
		k = SRV_TREE_MAX_CHILDREN - 1;
		folded = true;
	}
	if (folded)
		v[k++] = other;
	qsort(v, k, sizeof *v, by_count);
	return (long)k;
}

static void write_optional_int(cm_jw *w, const char *key, int64_t v)
{
	cm_jw_key(w, key);
	if (v)
		cm_jw_int(w, v);
	else
		cm_jw_null(w);
}

/* PARENT's children as a JSON array to W, each with its own. 0 or -1. */
static int write_children(const tree *t, uint32_t parent, cm_jw *w)
{
	shown *v;
	long n = children_of(t, parent, &v);
	cm_jw_array(w);
	for (long i = 0; i < n; i++) {
		const frame_info *info = v[i].node == NONE ? NULL : &t->nodes[v[i].node].info;
		cm_jw_object(w);
		cm_jw_key(w, "frame");
		cm_jw_string(w, v[i].frame);
		cm_jw_key(w, "function");
		cm_jw_string(w, info ? info->function : NULL);
		cm_jw_key(w, "file");
		cm_jw_string(w, info ? info->file : NULL);
		write_optional_int(w, "line", info ? info->line : 0);
		cm_jw_key(w, "image");
		cm_jw_string(w, info ? info->image : NULL);
		cm_jw_key(w, "count");
		cm_jw_int(w, v[i].count);
		cm_jw_key(w, "self");
		cm_jw_int(w, v[i].self);
		if (t->has_ms) {
			cm_jw_key(w, "ms");
			cm_jw_int(w, v[i].ms);
		}
		cm_jw_key(w, "children");
		if (!info)
			cm_jw_raw(w, "[]", 2);
		else if (write_children(t, v[i].node, w) != 0)
			n = -1;
		cm_jw_object_end(w);
	}
	cm_jw_array_end(w);
	free(v);
	return n < 0 ? -1 : 0;
}

typedef struct tree_tx {
	int64_t app_id;
	const char *key1, *key2;
	const st_group_filter *f;
	tree t;
} tree_tx;

static int tree_cb(st_conn *c, void *cls)
{
	tree_tx *x = cls;
	if (tree_init(&x->t) != 0)
		return ST_HARD_ERROR;
	return st_group_stacks(c, x->app_id, x->key1, x->key2, x->f, add_stack, &x->t);
}

int srv_call_tree(int64_t app_id, const char *key1, const char *key2, const st_group_filter *f,
		  char **out_json, char *as_of)
{
	*out_json = NULL;
	tree_tx x = {.app_id = app_id, .key1 = key1, .key2 = key2, .f = f};
	int rc = srv_read_folded(app_id, "call_tree", tree_cb, &x, as_of);
	if (rc > 0) {
		cm_jw w = {0};
		cm_jw_object(&w);
		cm_jw_key(&w, "as_of");
		if (as_of[0])
			cm_jw_string(&w, as_of);
		else
			cm_jw_null(&w);
		cm_jw_key(&w, "reports");
		cm_jw_int(&w, x.t.reports);
		cm_jw_key(&w, "root");
		cm_jw_object(&w);
		cm_jw_key(&w, "children");
		int wrc = write_children(&x.t, 0, &w);
		cm_jw_object_end(&w);
		cm_jw_object_end(&w);
		*out_json = cm_jw_finish(&w, NULL);
		if (wrc != 0 || !*out_json) {
			free(*out_json);
			*out_json = NULL;
			rc = ST_HARD_ERROR;
		}
	}
	tree_free(&x.t);
	return rc;
}
