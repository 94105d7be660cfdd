/*
 * symbolicate.c — see symbolicate.h. One report at a time: its images
 * indexed by load address once, each distinct (debug file, lookup address,
 * load address) symbolized once per memo — a request's batch, where stall
 * samples and sibling reports repeat the same frames many times — JSON
 * text written as we go.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "ingest/image_class.h"
#include "ingest/symbolicate.h"
#include "symbolizer/frame_json.h"

const char *ing_image_status_name(ing_image_status s)
{
	switch (s) {
	case ING_IMAGE_FOUND: return "found";
	case ING_IMAGE_MISSING: return "missing";
	case ING_IMAGE_MALFORMED: return "malformed";
	}
	return "missing";
}

/* One memoized lookup: the inline chain as JSON text (its symbol addresses
 * are runtime ones, hence the load address in the key) and its function
 * names, both in the arena of the call that looked it up. */
typedef struct memo_entry {
	const sym_cache *key_cache;
	uint64_t key_addr, key_load;
	const char *chain;
	size_t chain_len;
	const char **functions;
	size_t nfunctions;
	const char *file; /* of the innermost entry, NULL when unknown */
	uint32_t line;
	bool used;
} memo_entry;

struct ing_memo {
	memo_entry *slots;
	size_t n, cap;
};

typedef struct ctx {
	const ing_report *r;
	const ing_image_symbols *images;
	sym_cache_info *info; /* per image, FOUND only */
	uint32_t *order;      /* image indices by load address */
	size_t norder;
	bool strip_pac;
	ing_arena *arena;
	const ing_group_rules *rules;
	ing_memo *memo;
	ing_symbolized *out;
	cm_jw scratch; /* an inline chain being written */
} ctx;

static int cmp_load(const void *a, const void *b, void *arg)
{
	const ing_report *r = arg;
	uint64_t x = r->images[*(const uint32_t *)a].load_address;
	uint64_t y = r->images[*(const uint32_t *)b].load_address;
	return x < y ? -1 : x > y;
}

static long find_image(const ctx *c, uint64_t addr)
{
	size_t lo = 0, hi = c->norder;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->r->images[c->order[mid]].load_address <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	const ing_image *img = &c->r->images[c->order[lo - 1]];
	if (img->size && addr - img->load_address >= img->size)
		return -1;
	return c->order[lo - 1];
}

ing_memo *ing_memo_new(void)
{
	return calloc(1, sizeof(ing_memo));
}

size_t ing_memo_size(const ing_memo *m)
{
	return m->n;
}

void ing_memo_free(ing_memo *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m);
}

static size_t memo_hash(const sym_cache *cache, uint64_t addr, uint64_t load, size_t cap)
{
	uint64_t h = addr ^ (uint64_t)(uintptr_t)cache * 0x9e3779b97f4a7c15ull ^
		     load * 0xc2b2ae3d27d4eb4full;
	h *= 0xff51afd7ed558ccdull;
	return (size_t)(h >> 20) & (cap - 1);
}

/* The slot of (CACHE, ADDR, LOAD) in M, FOUND telling whether it is filled;
 * NULL when out of memory. */
static memo_entry *memo_slot(ing_memo *m, const sym_cache *cache, uint64_t addr,
			     uint64_t load, bool *found)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 256;
		memo_entry *grown = calloc(ncap, sizeof *grown);
		if (!grown)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			const memo_entry *e = &m->slots[i];
			if (!e->used)
				continue;
			size_t k = memo_hash(e->key_cache, e->key_addr, e->key_load, ncap);
			while (grown[k].used)
				k = (k + 1) & (ncap - 1);
			grown[k] = *e;
		}
		free(m->slots);
		m->slots = grown;
		m->cap = ncap;
	}
	size_t k = memo_hash(cache, addr, load, m->cap);
	while (m->slots[k].used && !(m->slots[k].key_cache == cache &&
				     m->slots[k].key_addr == addr && m->slots[k].key_load == load))
		k = (k + 1) & (m->cap - 1);
	*found = m->slots[k].used;
	return &m->slots[k];
}

/* The inline chain at file address LOOKUP of image I (FOUND), memoized. */
static memo_entry *lookup(ctx *c, long i, uint64_t lookup_addr)
{
	bool found;
	const ing_image *img = &c->r->images[i];
	memo_entry *e = memo_slot(c->memo, c->images[i].cache, lookup_addr, img->load_address,
				  &found);
	if (!e || found)
		return e;
	sym_frame frames[SYM_MAX_FRAMES];
	size_t n = sym_cache_lookup(c->images[i].cache, lookup_addr, frames, SYM_MAX_FRAMES);
	const char **names = n ? ing_arena_calloc(c->arena, n, sizeof *names) : NULL;
	if (n && !names)
		return NULL;
	const sym_cache_info *info = &c->info[i];
	/* Written in the call's scratch buffer, kept in the arena. */
	cm_jw *w = &c->scratch;
	w->buf.len = 0;
	w->comma = false;
	cm_jw_array(w);
	for (size_t k = 0; k < n; k++) {
		const sym_frame *f = &frames[k];
		if (!(names[k] = ing_arena_strdup(c->arena, f->function)))
			return NULL;
		sym_frame_json(w, f, f->symbol_address >= info->base_address,
			       f->symbol_address - info->base_address + img->load_address);
	}
	cm_jw_array_end(w);
	size_t len = w->buf.len;
	const char *chain = w->buf.failed ? NULL : ing_arena_strndup(c->arena, w->buf.data, len);
	if (!chain)
		return NULL;
	e->used = true;
	e->key_cache = c->images[i].cache;
	e->key_addr = lookup_addr;
	e->key_load = img->load_address;
	e->chain = chain;
	e->chain_len = len;
	e->functions = names;
	e->nfunctions = n;
	e->file = n && frames[0].file ? ing_arena_strdup(c->arena, frames[0].file) : NULL;
	e->line = n ? frames[0].line : 0;
	if (n && frames[0].file && !e->file)
		return NULL;
	c->memo->n++;
	return e;
}

/* The representative stack's frame G (in image I, symbolized as E or not
 * at all) is the culprit when it is the innermost in an app image. */
static int culprit_offer(ctx *c, long i, const memo_entry *e, const ing_gframe *g)
{
	ing_culprit *cu = &c->out->culprit;
	if (cu->frame || i < 0 || c->out->image_system[i])
		return 0;
	if (!(cu->frame = ing_frame_identity(g, 0, c->arena)))
		return -1;
	cu->function = e && e->nfunctions ? e->functions[0] : NULL;
	cu->file = e ? e->file : NULL;
	cu->line = e ? e->line : 0;
	return 0;
}

/* A device's symbol hint that is a Swift linkage name, in the short form
 * a symbolized frame would show (SPEC §3.6): written to W (unless NULL) as
 * "hint_function" and taken by G (unless NULL) as its hint — only on a
 * frame without symbols (E has no functions), where the hint stands for
 * it. 0, or -1 when out of memory. */
static int hint_function(ctx *c, const ing_frame *fr, const memo_entry *e, ing_gframe *g, cm_jw *w)
{
	const char *hint = fr->symbol_hint;
	if ((e && e->nfunctions) || !(g || w) || !hint || !sym_is_swift_symbol(hint))
		return 0;
	char *shown = sym_demangle(hint, SYM_DEMANGLE_SHORT);
	const char *kept = shown ? ing_arena_strdup(c->arena, shown) : NULL;
	bool lost = shown && !kept;
	free(shown);
	if (lost)
		return -1;
	if (w && kept) {
		cm_jw_key(w, "hint_function");
		cm_jw_string(w, kept);
	}
	if (g && kept)
		g->hint = kept;
	return 0;
}

/* One frame of a stack (INDEX from the innermost), written to W unless W
 * is NULL; fills G for grouping when non-NULL (the representative stack,
 * whose frames are also offered as the culprit). Thread frames (COUNT) feed
 * the statistics. Returns 0, or -1 when out of memory. */
static int frame_visit(ctx *c, const ing_frame *fr, size_t index, ing_gframe *g, bool count,
		       cm_jw *w)
{
	uint64_t addr = c->strip_pac ? sym_addr_strip_pac(fr->address, SYM_ARCH_ARM64E)
				     : fr->address;
	long i = find_image(c, addr);
	if (w) {
		cm_jw_object(w);
		cm_jw_key(w, "address");
		cm_jw_hex(w, fr->address);
		cm_jw_optional_string(w, "symbol_hint", fr->symbol_hint);
	}
	if (g) {
		memset(g, 0, sizeof *g);
		g->hint = fr->symbol_hint;
		g->address = addr;
	}
	const char *status;
	memo_entry *e = NULL;
	if (i < 0) {
		status = "unknown_image";
		if (w) {
			cm_jw_key(w, "status");
			cm_jw_string(w, status);
			cm_jw_key(w, "image");
			cm_jw_null(w);
		}
	} else {
		const ing_image *img = &c->r->images[i];
		uint64_t offset = addr - img->load_address;
		c->out->image_used[i] = true;
		if (w) {
			cm_jw_key(w, "image");
			cm_jw_string(w, img->name ? img->name : "?");
			cm_jw_key(w, "offset");
			cm_jw_hex(w, offset);
		}
		if (g) {
			g->image = img->name ? img->name : "?";
			g->offset = offset;
		}
		if (c->images[i].status != ING_IMAGE_FOUND || !c->images[i].cache) {
			c->out->image_needed[i] = true;
			c->out->unsymbolized_frames += count;
			status = "missing_symbols";
		} else {
			uint64_t file = 0;
			if (sym_addr_runtime_to_file(addr, img->load_address, 0,
						     c->info[i].base_address, &file) &&
			    !(e = lookup(c, i, sym_addr_caller_adjust(file, index))))
				return -1;
			if (c->images[i].from_symbol_table)
				c->out->symtab_frames += count;
			status = "symbolicated";
		}
		if (w) {
			cm_jw_key(w, "status");
			cm_jw_string(w, status);
		}
	}
	if (hint_function(c, fr, e, g, w) != 0)
		return -1;
	if (w) {
		cm_jw_key(w, "frames");
		if (e)
			cm_jw_raw(w, e->chain, e->chain_len);
		else
			cm_jw_raw(w, "[]", 2);
		cm_jw_object_end(w);
	}
	if (g && e) {
		g->functions = e->functions;
		g->nfunctions = e->nfunctions;
	}
	return g ? culprit_offer(c, i, e, g) : 0;
}

/* The packages of Android and its languages: a frame in them is never an
 * Android report's culprit (SPEC §13). */
static bool java_platform_frame(const char *name)
{
	static const char *const prefixes[] = {"android.", "java.", "kotlin.", "androidx.",
					       "com.android."};
	for (size_t i = 0; name && i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* A Java frame's names: the readable FUNCTION shown and the SYMBOL it is
 * grouped by, for method id ID of the mapping M (arena copies). False
 * when M has no such method; -1 in *OOM when out of memory. */
static bool java_names(ctx *c, const sym_methods *m, uint32_t id, const char **function,
		       const char **symbol, bool *oom)
{
	sym_method method;
	if (!m || !sym_methods_lookup(m, id, &method))
		return false;
	size_t nf = sym_method_readable(&method, NULL, 0) + 1;
	size_t ns = sym_method_linkage(&method, NULL, 0) + 1;
	char *f = ing_arena_alloc(c->arena, nf), *s = ing_arena_alloc(c->arena, ns);
	if (!f || !s) {
		*oom = true;
		return false;
	}
	sym_method_readable(&method, f, nf);
	sym_method_linkage(&method, s, ns);
	*function = f;
	*symbol = s;
	return true;
}

static void java_chain_write(cm_jw *w, const char *function, const char *symbol,
			     const ing_java_frame *jf)
{
	cm_jw_array(w);
	if (function) {
		cm_jw_object(w);
		cm_jw_key(w, "function");
		cm_jw_string(w, function);
		cm_jw_key(w, "symbol");
		cm_jw_string(w, symbol);
		cm_jw_optional_string(w, "file", jf->file);
		if (jf->line > 0) {
			cm_jw_key(w, "line");
			cm_jw_int(w, jf->line);
		}
		cm_jw_key(w, "inlined");
		cm_jw_bool(w, false);
		cm_jw_object_end(w);
	}
	cm_jw_array_end(w);
}

/* An Android frame (SPEC §13), as frame_visit does a native one: a
 * threadStack frame is named already; a method id is named by the
 * mapping of the report's build (image 0), and makes the report wait for
 * it while it is missing. Its identity is java!SYMBOL, or java!#ID. */
static int java_frame_visit(ctx *c, const ing_frame *fr, const ing_java_frame *jf, ing_gframe *g,
			    bool count, cm_jw *w)
{
	const char *function = jf->name, *symbol = jf->name, *status = "symbolicated";
	bool has_mapping = c->r->nimages > 0, oom = false;
	uint32_t id = (uint32_t)fr->address;
	if (!jf->name) {
		if (has_mapping)
			c->out->image_used[0] = true;
		if (!has_mapping || c->images[0].status != ING_IMAGE_FOUND) {
			if (has_mapping)
				c->out->image_needed[0] = true;
			c->out->unsymbolized_frames += count;
			status = "missing_symbols";
		} else if (!java_names(c, c->images[0].methods, id, &function, &symbol, &oom)) {
			if (oom)
				return -1;
			status = "unknown_method";
		}
	}
	if (w) {
		cm_jw_object(w);
		if (!jf->name) {
			cm_jw_key(w, "method_id");
			cm_jw_int(w, id);
		}
		cm_jw_key(w, "image");
		cm_jw_string(w, "java");
		cm_jw_key(w, "status");
		cm_jw_string(w, status);
		cm_jw_key(w, "frames");
		java_chain_write(w, function, symbol, jf);
		cm_jw_object_end(w);
	}
	if (!g)
		return 0;
	memset(g, 0, sizeof *g);
	g->image = "java";
	g->offset = id;
	if (symbol) {
		const char **names = ing_arena_calloc(c->arena, 1, sizeof *names);
		if (!names)
			return -1;
		names[0] = symbol;
		g->functions = names;
		g->nfunctions = 1;
	} else {
		char hint[16];
		snprintf(hint, sizeof hint, "#%u", id);
		if (!(g->hint = ing_arena_strdup(c->arena, hint)))
			return -1;
	}
	ing_culprit *cu = &c->out->culprit;
	if (cu->frame || java_platform_frame(function))
		return 0;
	if (!(cu->frame = ing_frame_identity(g, 0, c->arena)))
		return -1;
	cu->function = function;
	cu->file = jf->file;
	cu->line = jf->line > 0 ? (uint32_t)jf->line : 0;
	return 0;
}

/* KEY and, per frame of STACK, its line's ms (or its count of calls when
 * not MS); null for a frame without a duration. */
static void java_column_write(cm_jw *w, const char *key, const ing_stack *stack, bool ms)
{
	cm_jw_key(w, key);
	cm_jw_array(w);
	for (size_t k = 0; k < stack->nframes; k++) {
		const ing_java_frame *jf = &stack->java[k];
		if (jf->ms < 0)
			cm_jw_null(w);
		else
			cm_jw_int(w, ms ? jf->ms : jf->count);
	}
	cm_jw_array_end(w);
}

/* The Java durations of STACK (SPEC §13) as "java_ms" and "java_count"
 * (one per frame, innermost first) to W, when a frame has one. They lie
 * beside the frames, never in them: a stack's text is its identity
 * (stacks, group_stack_days), which the reports of one path with other
 * durations share. */
static void java_durations_write(cm_jw *w, const ing_stack *stack)
{
	bool any = false;
	for (size_t k = 0; stack->java && k < stack->nframes; k++)
		any = any || stack->java[k].ms >= 0;
	if (!any)
		return;
	java_column_write(w, "java_ms", stack, true);
	java_column_write(w, "java_count", stack, false);
}

/* STACK's frames, as a JSON array to W unless W is NULL; GFRAMES (may be
 * NULL) receives one grouping frame per stack frame. */
static int stack_visit(ctx *c, const ing_stack *stack, ing_gframe *gframes, bool count, cm_jw *w)
{
	if (w)
		cm_jw_array(w);
	for (size_t k = 0; k < stack->nframes; k++) {
		ing_gframe *g = gframes ? &gframes[k] : NULL;
		int rc = stack->java ? java_frame_visit(c, &stack->frames[k], &stack->java[k], g,
							count, w)
				     : frame_visit(c, &stack->frames[k], k, g, count, w);
		if (rc != 0)
			return -1;
	}
	if (w)
		cm_jw_array_end(w);
	return 0;
}

static void images_write(const ctx *c, cm_jw *w)
{
	cm_jw_array(w);
	for (size_t i = 0; i < c->r->nimages; i++) {
		const ing_image *img = &c->r->images[i];
		cm_jw_object(w);
		cm_jw_key(w, "name");
		cm_jw_string(w, img->name);
		cm_jw_key(w, "uuid");
		if (img->has_uuid) {
			char uuid[37];
			sym_uuid_format(img->uuid, uuid);
			cm_jw_string(w, uuid);
		} else {
			cm_jw_null(w);
		}
		cm_jw_key(w, "arch");
		cm_jw_string(w, img->arch == SYM_ARCH_UNKNOWN ? NULL : sym_arch_name(img->arch));
		cm_jw_key(w, "load_address");
		cm_jw_hex(w, img->load_address);
		cm_jw_key(w, "size");
		cm_jw_int(w, (int64_t)img->size);
		cm_jw_key(w, "status");
		cm_jw_string(w, ing_image_status_name(c->images[i].status));
		cm_jw_key(w, "needed");
		cm_jw_bool(w, c->out->image_needed[i]);
		cm_jw_key(w, "system");
		cm_jw_bool(w, c->out->image_system[i]);
		cm_jw_object_end(w);
	}
	cm_jw_array_end(w);
}

void ing_symbolized_clear(ing_symbolized *s)
{
	free(s->images);
	free(s->threads);
	free(s->stack);
	s->images = s->threads = s->stack = NULL;
	s->images_len = s->threads_len = s->stack_len = 0;
}

static const char *source_name(ing_rep_source s)
{
	switch (s) {
	case ING_REP_SAMPLES: return "samples";
	case ING_REP_MAIN: return "main_thread";
	case ING_REP_FIRST: return "first_thread";
	case ING_REP_NONE: break;
	}
	return "none";
}

static int run(ctx *c)
{
	const ing_report *r = c->r;
	ing_symbolized *out = c->out;
	for (size_t i = 0; i < r->nimages; i++) {
		if (r->images[i].arch == SYM_ARCH_ARM64E)
			c->strip_pac = true;
		if (c->images[i].status == ING_IMAGE_FOUND && c->images[i].cache)
			sym_cache_get_info(c->images[i].cache, &c->info[i]);
		c->order[i] = (uint32_t)i;
	}
	c->norder = r->nimages;
	qsort_r(c->order, c->norder, sizeof *c->order, cmp_load, (void *)r);

	out->thread_spans = ing_arena_calloc(c->arena, r->nthreads ? r->nthreads : 1,
					     sizeof *out->thread_spans);
	if (!out->thread_spans)
		return -1;
	cm_jw w = {0};
	cm_jw_array(&w);
	for (size_t t = 0; t < r->nthreads; t++) {
		const ing_thread *th = &r->threads[t];
		cm_jw_object(&w);
		out->thread_spans[t].at = w.buf.len - 1;
		cm_jw_key(&w, "name");
		cm_jw_string(&w, th->name);
		cm_jw_key(&w, "main");
		cm_jw_bool(&w, th->main);
		cm_jw_key(&w, "frames");
		if (stack_visit(c, &th->stack, NULL, true, &w) != 0) {
			free(w.buf.data);
			return -1;
		}
		cm_jw_object_end(&w);
		out->thread_spans[t].len = w.buf.len - out->thread_spans[t].at;
	}
	cm_jw_array_end(&w);
	if (!(out->threads = cm_jw_finish(&w, &out->threads_len)))
		return -1;

	/* The representative stack: a thread's is stored as a reference to
	 * that thread; its frames were symbolized with the threads already
	 * (memoized), and its grouping frames are taken here. */
	const ing_stack *rep = ing_representative(r, &out->source);
	size_t n = rep ? rep->nframes : 0;
	ing_gframe *g = n ? ing_arena_calloc(c->arena, n, sizeof *g) : NULL;
	if (n && !g)
		return -1;
	long thread = -1;
	for (size_t t = 0; rep && t < r->nthreads; t++)
		if (&r->threads[t].stack == rep)
			thread = (long)t;
	cm_jw_object(&w);
	cm_jw_key(&w, "source");
	cm_jw_string(&w, source_name(out->source));
	if (thread >= 0) {
		cm_jw_key(&w, "thread");
		cm_jw_int(&w, thread);
	} else {
		cm_jw_key(&w, "frames");
	}
	static const ing_stack none = {0};
	if (stack_visit(c, rep ? rep : &none, g, false, thread >= 0 ? NULL : &w) != 0) {
		free(w.buf.data);
		return -1;
	}
	java_durations_write(&w, rep ? rep : &none);
	cm_jw_object_end(&w);
	if (!(out->stack = cm_jw_finish(&w, &out->stack_len)))
		return -1;
	images_write(c, &w);
	if (!(out->images = cm_jw_finish(&w, &out->images_len)))
		return -1;
	return ing_group(g, n, c->rules, c->arena, &out->grouping);
}

int ing_symbolicate(const ing_report *r, const ing_image_symbols *images,
		    const ing_group_rules *rules, ing_memo *memo, ing_arena *arena,
		    ing_symbolized *out)
{
	memset(out, 0, sizeof *out);
	ing_memo *own = memo ? NULL : ing_memo_new();
	if (!memo && !own)
		return -1;
	ctx c;
	memset(&c, 0, sizeof c);
	c.memo = memo ? memo : own;
	c.r = r;
	c.images = images;
	c.arena = arena;
	c.rules = rules;
	c.out = out;
	size_t ni = r->nimages ? r->nimages : 1;
	c.info = calloc(ni, sizeof *c.info);
	c.order = calloc(ni, sizeof *c.order);
	out->image_needed = ing_arena_calloc(arena, ni, sizeof *out->image_needed);
	out->image_used = ing_arena_calloc(arena, ni, sizeof *out->image_used);
	out->image_system = ing_arena_calloc(arena, ni, sizeof *out->image_system);
	for (size_t i = 0; out->image_system && i < r->nimages; i++)
		out->image_system[i] = ing_image_is_system(r->images[i].name);
	int rc = c.info && c.order && out->image_needed && out->image_used && out->image_system
			 ? run(&c)
			 : -1;
	ing_memo_free(own);
	free(c.info);
	free(c.order);
	free(c.scratch.buf.data);
	if (rc)
		ing_symbolized_clear(out);
	return rc;
}
