/*
 * report.c — the arena that owns a parsed report (or batch), the kind
 * names, the default limits and the error helper declared in report.h.
 *
 * The arena is a list of malloc'ed chunks carved by bumping an offset. Every
 * size is rounded up to 16 bytes with overflow checks, and LIMIT counts the
 * chunks' full sizes (headers included), so a hostile body cannot make the
 * parser use more memory than the configured bound.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/report.h"

#define ARENA_ALIGN 16u
#define ARENA_CHUNK (64u * 1024u)

typedef struct arena_chunk {
	struct arena_chunk *next;
	size_t size; /* usable bytes after the header */
	size_t used;
} arena_chunk;

/* The header is padded so the payload starts 16-byte aligned. */
#define CHUNK_HEADER                                                        \
	((sizeof(arena_chunk) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))

struct ing_arena {
	arena_chunk *head;
	size_t limit; /* 0 = none */
	size_t total; /* bytes malloc'ed for chunks */
	bool over_limit;
};

ing_arena *ing_arena_new(size_t limit)
{
	ing_arena *a = calloc(1, sizeof *a);
	if (a)
		a->limit = limit;
	return a;
}

void ing_arena_free(ing_arena *arena)
{
	if (!arena)
		return;
	arena_chunk *c = arena->head;
	while (c) {
		arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	free(arena);
}

static bool round_up(size_t n, size_t *out)
{
	if (n > SIZE_MAX - (ARENA_ALIGN - 1))
		return false;
	*out = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	return true;
}

/* A new chunk with at least NEED usable bytes, linked in front (or, with
 * BEHIND, after the current head so the head's free space stays in use). */
static arena_chunk *arena_grow(ing_arena *a, size_t need, bool behind)
{
	size_t usable = need > ARENA_CHUNK ? need : ARENA_CHUNK;
	if (usable > SIZE_MAX - CHUNK_HEADER)
		return NULL;
	size_t bytes = CHUNK_HEADER + usable;
	if (a->limit && (bytes > a->limit || a->total > a->limit - bytes)) {
		/* A smaller chunk may still fit the remaining budget. */
		size_t exact = CHUNK_HEADER + need;
		if (exact > a->limit || a->total > a->limit - exact) {
			a->over_limit = true;
			return NULL;
		}
		usable = need;
		bytes = exact;
	}
	/* malloc gives max_align_t alignment (16 on our targets) and the
	 * header is a multiple of 16, so the payload is 16-byte aligned. */
	arena_chunk *c = aligned_alloc(ARENA_ALIGN, bytes);
	if (!c)
		return NULL;
	c->size = usable;
	c->used = 0;
	if (behind && a->head) {
		c->next = a->head->next;
		a->head->next = c;
	} else {
		c->next = a->head;
		a->head = c;
	}
	a->total += bytes;
	return c;
}

void *ing_arena_alloc(ing_arena *arena, size_t size)
{
	size_t need;
	if (!arena || !round_up(size ? size : 1, &need))
		return NULL;
	arena_chunk *c = arena->head;
	if (!c || c->size - c->used < need) {
		/* A big allocation gets its own chunk behind the current one
		 * so the current chunk's free space is not wasted. */
		c = arena_grow(arena, need, need >= ARENA_CHUNK / 4);
		if (!c)
			return NULL;
	}
	unsigned char *p = (unsigned char *)c + CHUNK_HEADER + c->used;
	c->used += need;
	memset(p, 0, need);
	return p;
}

void *ing_arena_calloc(ing_arena *arena, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return ing_arena_alloc(arena, n * size);
}

char *ing_arena_strndup(ing_arena *arena, const char *s, size_t len)
{
	if (!s || len == SIZE_MAX)
		return NULL;
	char *p = ing_arena_alloc(arena, len + 1);
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

char *ing_arena_strdup(ing_arena *arena, const char *s)
{
	return s ? ing_arena_strndup(arena, s, strlen(s)) : NULL;
}

size_t ing_arena_used(const ing_arena *arena)
{
	return arena ? arena->total : 0;
}

bool ing_arena_over_limit(const ing_arena *arena)
{
	return arena && arena->over_limit;
}

static const char *const kind_names[] = {
	[ING_KIND_STALL] = "stall",
	[ING_KIND_HANG] = "hang",
	[ING_KIND_CPU] = "cpu",
	[ING_KIND_CRASH] = "crash",
	[ING_KIND_SLOW_METHOD] = "slow_method",
	[ING_KIND_ANR] = "anr",
	[ING_KIND_LAG] = "lag",
	[ING_KIND_SLOW_STARTUP] = "slow_startup",
	[ING_KIND_THREAD_POLICY] = "thread_policy",
};

const char *ing_kind_name(ing_kind kind)
{
	if ((unsigned)kind < sizeof kind_names / sizeof kind_names[0])
		return kind_names[kind];
	return "unknown";
}

bool ing_kind_parse(const char *name, ing_kind *out)
{
	if (!name)
		return false;
	for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++) {
		if (!strcmp(kind_names[i], name)) {
			if (out)
				*out = (ing_kind)i;
			return true;
		}
	}
	return false;
}

bool ing_kind_is_android(ing_kind kind)
{
	return kind >= ING_KIND_SLOW_METHOD && kind <= ING_KIND_THREAD_POLICY;
}

ing_limits ing_limits_default(void)
{
	return (ing_limits){
		.max_reports = 1000,
		.max_threads = 64,
		.max_frames = 2048,
		.max_images = 1024,
		.max_samples = 1024,
		.max_string = 4096,
		.max_dimension = ING_DIMENSION_MAX,
		.max_depth = 64,
		.max_memory = (size_t)256 * 1024 * 1024,
	};
}

int ing_error_set(ing_error *err, cm_err code, const char *fmt, ...)
{
	if (!err)
		return -1;
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	return -1;
}
