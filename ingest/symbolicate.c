/*
 * symbolicate.c — see symbolicate.h. One report at a time: its images
 * indexed by load address once, each distinct (debug file, lookup address,
 * load address) symbolized once per memo — a request's batch, where stall
 * samples and sibling reports repeat the same frames many times — JSON
 * built as we go.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/symbolicate.h"

const char *ing_image_status_name(ing_image_status s)
{
	switch (s) {
	case ING_IMAGE_FOUND: return "found";
	case ING_IMAGE_MISSING: return "missing";
	case ING_IMAGE_MALFORMED: return "malformed";
	}
	return "missing";
}

/* One memoized lookup: the inline chain as JSON (its symbol addresses are
 * runtime ones, hence the load address in the key) and its function names. */
typedef struct memo_entry {
	const sym_cache *key_cache;
	uint64_t key_addr, key_load;
	json_t *chain;
	const char **functions;
	size_t nfunctions;
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
} ctx;

static json_t *jhex(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%" PRIx64, v);
	return json_string(buf);
}

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
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].used)
			json_decref(m->slots[i].chain);
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
	json_t *chain = json_array();
	const char **names = n ? ing_arena_calloc(c->arena, n, sizeof *names) : NULL;
	if (!chain || (n && !names)) {
		json_decref(chain);
		return NULL;
	}
	const sym_cache_info *info = &c->info[i];
	for (size_t k = 0; k < n; k++) {
		const sym_frame *f = &frames[k];
		names[k] = ing_arena_strdup(c->arena, f->function);
		json_t *jf = json_object();
		if (!names[k] || !jf || json_array_append_new(chain, jf) != 0) {
			json_decref(chain);
			return NULL;
		}
		json_object_set_new(jf, "function", json_string(f->function));
		json_object_set_new(jf, "symbol", json_string(f->symbol));
		if (f->symbol_address >= info->base_address)
			json_object_set_new(jf, "symbol_address",
					    jhex(f->symbol_address - info->base_address +
						 img->load_address));
		if (f->file)
			json_object_set_new(jf, "file", json_string(f->file));
		if (f->line)
			json_object_set_new(jf, "line", json_integer(f->line));
		if (f->column)
			json_object_set_new(jf, "column", json_integer(f->column));
		json_object_set_new(jf, "inlined", json_boolean(f->inlined));
	}
	e->used = true;
	e->key_cache = c->images[i].cache;
	e->key_addr = lookup_addr;
	e->key_load = img->load_address;
	e->chain = chain;
	e->functions = names;
	e->nfunctions = n;
	c->memo->n++;
	return e;
}

/* One frame of a stack (INDEX from the innermost) as JSON; fills G for
 * grouping when non-NULL. Thread frames (COUNT) feed the statistics. */
static json_t *frame_json(ctx *c, const ing_frame *fr, size_t index, ing_gframe *g,
			  bool count)
{
	uint64_t addr = c->strip_pac ? sym_addr_strip_pac(fr->address, SYM_ARCH_ARM64E)
				     : fr->address;
	long i = find_image(c, addr);
	json_t *j = json_object();
	if (!j)
		return NULL;
	json_object_set_new(j, "address", jhex(fr->address));
	if (fr->symbol_hint)
		json_object_set_new(j, "symbol_hint", json_string(fr->symbol_hint));
	if (g) {
		memset(g, 0, sizeof *g);
		g->hint = fr->symbol_hint;
		g->address = addr;
	}
	if (i < 0) {
		json_object_set_new(j, "status", json_string("unknown_image"));
		json_object_set_new(j, "image", json_null());
		json_object_set_new(j, "frames", json_array());
		return j;
	}
	const ing_image *img = &c->r->images[i];
	uint64_t offset = addr - img->load_address;
	c->out->image_used[i] = true;
	json_object_set_new(j, "image", json_string(img->name ? img->name : "?"));
	json_object_set_new(j, "offset", jhex(offset));
	if (g) {
		g->image = img->name ? img->name : "?";
		g->offset = offset;
	}
	if (c->images[i].status != ING_IMAGE_FOUND) {
		c->out->image_needed[i] = true;
		c->out->unsymbolized_frames += count;
		json_object_set_new(j, "status", json_string("missing_symbols"));
		json_object_set_new(j, "frames", json_array());
		return j;
	}
	uint64_t file = 0;
	memo_entry *e = NULL;
	if (sym_addr_runtime_to_file(addr, img->load_address, 0, c->info[i].base_address, &file)) {
		e = lookup(c, i, sym_addr_caller_adjust(file, index));
		if (!e) {
			json_decref(j);
			return NULL;
		}
	}
	if (c->images[i].from_symbol_table)
		c->out->symtab_frames += count;
	json_object_set_new(j, "status", json_string("symbolicated"));
	if (e)
		json_object_set(j, "frames", e->chain); /* shared by equal frames */
	else
		json_object_set_new(j, "frames", json_array());
	if (g && e) {
		g->functions = e->functions;
		g->nfunctions = e->nfunctions;
	}
	return j;
}

/* STACK as a JSON array of frames; GFRAMES (may be NULL) receives one
 * grouping frame per stack frame. */
static json_t *stack_json(ctx *c, const ing_stack *stack, ing_gframe *gframes, bool count)
{
	json_t *arr = json_array();
	if (!arr)
		return NULL;
	for (size_t k = 0; k < stack->nframes; k++) {
		json_t *f = frame_json(c, &stack->frames[k], k, gframes ? &gframes[k] : NULL,
				       count);
		if (!f || json_array_append_new(arr, f) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *images_json(const ctx *c)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < c->r->nimages; i++) {
		const ing_image *img = &c->r->images[i];
		json_t *j = json_object();
		if (!j || json_array_append_new(arr, j) != 0) {
			json_decref(arr);
			return NULL;
		}
		json_object_set_new(j, "name", img->name ? json_string(img->name) : json_null());
		if (img->has_uuid) {
			char uuid[37];
			sym_uuid_format(img->uuid, uuid);
			json_object_set_new(j, "uuid", json_string(uuid));
		} else {
			json_object_set_new(j, "uuid", json_null());
		}
		json_object_set_new(j, "arch", img->arch == SYM_ARCH_UNKNOWN
							? json_null()
							: json_string(sym_arch_name(img->arch)));
		json_object_set_new(j, "load_address", jhex(img->load_address));
		json_object_set_new(j, "size", json_integer((json_int_t)img->size));
		json_object_set_new(j, "status",
				    json_string(ing_image_status_name(c->images[i].status)));
		json_object_set_new(j, "needed", json_boolean(c->out->image_needed[i]));
	}
	return arr;
}

void ing_symbolized_clear(ing_symbolized *s)
{
	json_decref(s->images);
	json_decref(s->threads);
	json_decref(s->stack);
	s->images = s->threads = s->stack = NULL;
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
		if (c->images[i].status == ING_IMAGE_FOUND)
			sym_cache_get_info(c->images[i].cache, &c->info[i]);
		c->order[i] = (uint32_t)i;
	}
	c->norder = r->nimages;
	qsort_r(c->order, c->norder, sizeof *c->order, cmp_load, (void *)r);

	if (!(out->threads = json_array()))
		return -1;
	for (size_t t = 0; t < r->nthreads; t++) {
		const ing_thread *th = &r->threads[t];
		json_t *j = json_object(), *frames = j ? stack_json(c, &th->stack, NULL, true) : NULL;
		if (!frames || json_array_append_new(out->threads, j) != 0) {
			json_decref(frames);
			json_decref(j);
			return -1;
		}
		json_object_set_new(j, "name", th->name ? json_string(th->name) : json_null());
		json_object_set_new(j, "main", json_boolean(th->main));
		json_object_set_new(j, "frames", frames);
	}

	/* The representative stack: its frames were mostly symbolized with the
	 * threads already (memoized); its grouping frames are taken here. */
	const ing_stack *rep = ing_representative(r, &out->source);
	size_t n = rep ? rep->nframes : 0;
	ing_gframe *g = n ? ing_arena_calloc(c->arena, n, sizeof *g) : NULL;
	if (n && !g)
		return -1;
	json_t *frames = rep ? stack_json(c, rep, g, false) : json_array();
	if (!frames || !(out->stack = json_object())) {
		json_decref(frames);
		return -1;
	}
	json_object_set_new(out->stack, "source", json_string(source_name(out->source)));
	for (size_t t = 0; rep && t < r->nthreads; t++)
		if (&r->threads[t].stack == rep)
			json_object_set_new(out->stack, "thread", json_integer((json_int_t)t));
	json_object_set_new(out->stack, "frames", frames);
	if (!(out->images = images_json(c)))
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
	int rc = c.info && c.order && out->image_needed && out->image_used ? run(&c) : -1;
	ing_memo_free(own);
	free(c.info);
	free(c.order);
	if (rc)
		ing_symbolized_clear(out);
	return rc;
}
