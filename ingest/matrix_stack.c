/*
 * matrix_stack.c — Matrix's `stack` tree and `threadStack` text (see
 * matrix_stack.h; the formats: ../shared/tracecanary/FORMATS.md §4, §7).
 */
#include <stdio.h>
#include <string.h>

#include "ingest/matrix_stack.h"

/* Digits at *P (before END) into *OUT, saturating; false when none. */
static bool read_uint(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
	}
	if (s == *p)
		return false;
	*p = s;
	*out = v;
	return true;
}

/* P…END (one line, no newline) must be `depth,methodId,count,durMs`:
 * NULL with *N filled, else the reason. */
static const char *parse_line(const char *p, const char *end, ing_mnode *n)
{
	static const char shape[] = "expected depth,methodId,count,durMs";
	uint64_t depth, id, count, dur;
	if (!read_uint(&p, end, &depth) || p == end || *p++ != ',' || !read_uint(&p, end, &id) ||
	    p == end || *p++ != ',' || !read_uint(&p, end, &count) || p == end || *p++ != ',')
		return shape;
	bool neg = p < end && *p == '-';
	p += neg;
	if (!read_uint(&p, end, &dur) || p != end)
		return shape;
	if (depth > INT32_MAX)
		return "depth too large";
	if (id >= ING_METHOD_ID_MAX)
		return "method id at or above 1048575";
	if (count > UINT32_MAX)
		return "count too large";
	n->depth = (uint32_t)depth;
	n->method_id = (uint32_t)id;
	n->count = (uint32_t)count;
	n->ms = neg || dur > (uint64_t)ING_MSTACK_MS_MAX ? 0 : (int64_t)dur;
	return NULL;
}

/* The line starting at P (before END): its end without "\r" into *LEND,
 * the next line's start returned. */
static const char *next_line(const char *p, const char *end, const char **lend)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	const char *e = nl ? nl : end;
	*lend = e > p && e[-1] == '\r' ? e - 1 : e;
	return nl ? nl + 1 : end;
}

static size_t count_lines(const char *text, size_t len)
{
	size_t n = 0;
	const char *p = text, *end = text + len, *lend;
	while (p < end) {
		const char *start = p;
		p = next_line(p, end, &lend);
		n += lend > start;
	}
	return n;
}

/* Links node I under its parent: the nearest preceding line of smaller
 * depth, found on OPEN (the chain of lines still open, *NOPEN of them).
 * TAIL holds each node's last child so far; *LAST_TOP the top level's. */
static void attach(ing_mtree *t, size_t i, int32_t *open, size_t *nopen, int32_t *tail,
		   int32_t *last_top)
{
	ing_mnode *n = &t->nodes[i];
	while (*nopen && t->nodes[open[*nopen - 1]].depth >= n->depth)
		(*nopen)--;
	n->parent = *nopen ? open[*nopen - 1] : -1;
	n->first_child = n->next_sibling = -1;
	tail[i] = -1;
	int32_t *prev_tail = n->parent < 0 ? last_top : &tail[n->parent];
	if (*prev_tail >= 0)
		t->nodes[*prev_tail].next_sibling = (int32_t)i;
	else if (n->parent >= 0)
		t->nodes[n->parent].first_child = (int32_t)i;
	else
		t->first_top = (int32_t)i;
	*prev_tail = (int32_t)i;
	open[(*nopen)++] = (int32_t)i;
}

int ing_mtree_parse(ing_arena *arena, const char *text, size_t len, ing_mtree *out, char *why,
		    size_t whylen)
{
	out->nodes = NULL;
	out->n = 0;
	out->first_top = -1;
	size_t total = count_lines(text, len);
	if (total > ING_MSTACK_MAX_LINES) {
		snprintf(why, whylen, "%zu lines, more than %u", total, ING_MSTACK_MAX_LINES);
		return ING_MSTACK_BAD;
	}
	ing_mnode *nodes = ing_arena_calloc(arena, total, sizeof *nodes);
	int32_t *open = ing_arena_calloc(arena, total, sizeof *open);
	int32_t *tail = ing_arena_calloc(arena, total, sizeof *tail);
	if (!nodes || !open || !tail)
		return ING_MSTACK_NOMEM;
	out->nodes = nodes;
	size_t nopen = 0, lineno = 0;
	int32_t last_top = -1;
	const char *p = text, *end = text + len, *lend;
	while (p < end) {
		const char *start = p;
		p = next_line(p, end, &lend);
		lineno++;
		if (lend == start)
			continue;
		const char *bad = parse_line(start, lend, &nodes[out->n]);
		if (bad) {
			snprintf(why, whylen, "line %zu: %s", lineno, bad);
			return ING_MSTACK_BAD;
		}
		attach(out, out->n++, open, &nopen, tail, &last_top);
	}
	return 0;
}

ptrdiff_t ing_mtree_heaviest(const ing_mtree *t, size_t *out, size_t max)
{
	size_t n = 0;
	for (int32_t level = t->first_top; level >= 0;) {
		int32_t best = level;
		for (int32_t s = t->nodes[level].next_sibling; s >= 0; s = t->nodes[s].next_sibling)
			if (t->nodes[s].ms > t->nodes[best].ms)
				best = s;
		if (n == max)
			return -1;
		out[n++] = (size_t)best;
		level = t->nodes[best].first_child;
	}
	return (ptrdiff_t)n;
}

/* ---- threadStack ---------------------------------------------------- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Digits (optionally negative) filling all of P…END into *OUT; at most 9
 * so no line number overflows. */
static bool whole_int(const char *p, const char *end, int64_t *out)
{
	bool neg = p < end && *p == '-';
	p += neg;
	if (p == end || end - p > 9)
		return false;
	int64_t v = 0;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (*p - '0');
	}
	*out = neg ? -v : v;
	return true;
}

/* A name without spaces or parentheses (class, method, file). */
static bool plain(const char *p, const char *end)
{
	if (p == end)
		return false;
	for (; p < end; p++)
		if (is_space(*p) || *p == '(' || *p == ')')
			return false;
	return true;
}

typedef struct ts_line {
	const char *name, *name_end; /* "pkg.Class.method" or "pkg.Class:method" */
	const char *colon;	     /* Matrix's class:method separator, or NULL */
	const char *file, *file_end; /* NULL when none */
	int64_t line;
} ts_line;

/* The parenthesized part of a toString() frame, P…END. */
static bool paren_to_string(const char *p, const char *end, ts_line *l)
{
	static const char native[] = "Native Method", unknown[] = "Unknown Source";
	if ((size_t)(end - p) == sizeof native - 1 && !memcmp(p, native, sizeof native - 1)) {
		l->line = -2;
		return true;
	}
	const char *colon = memrchr(p, ':', (size_t)(end - p));
	const char *fend = colon ? colon : end;
	if (colon && (!whole_int(colon + 1, end, &l->line) || l->line < 0))
		return false;
	if ((size_t)(fend - p) == sizeof unknown - 1 && !memcmp(p, unknown, sizeof unknown - 1))
		return true;
	if (!plain(p, fend))
		return false;
	l->file = p;
	l->file_end = fend;
	return true;
}

/* One line P…END of a threadStack into *L; false when it is no frame. */
static bool parse_ts_line(const char *p, const char *end, ts_line *l)
{
	memset(l, 0, sizeof *l);
	while (p < end && is_space(*p))
		p++;
	if (end - p >= 2 && p[0] == '|' && p[1] == '*')
		for (p += 2; p < end && is_space(*p); p++)
			;
	if (end - p >= 3 && !memcmp(p, "at ", 3))
		p += 3;
	while (end > p && is_space(end[-1]))
		end--;
	if (end == p || end[-1] != ')')
		return false;
	const char *open = memchr(p, '(', (size_t)(end - p));
	if (!open || !plain(p, open))
		return false;
	l->name = p;
	l->name_end = open;
	const char *in = open + 1, *in_end = end - 1;
	if (whole_int(in, in_end, &l->line)) {
		/* Matrix's own form: pkg.Class:method(line), -1 unknown. */
		l->colon = memchr(p, ':', (size_t)(open - p));
		if (!l->colon || l->colon == p || l->colon + 1 == open)
			return false;
		l->line = l->line == -1 ? 0 : l->line;
		return l->line >= -2;
	}
	const char *dot = memrchr(p, '.', (size_t)(open - p));
	if (!dot || dot == p || dot + 1 == open)
		return false;
	return paren_to_string(in, in_end, l);
}

/* L's frame into J (name with Matrix's ':' made a '.'); false when too
 * long (nothing allocated) or out of memory (*NOMEM). */
static bool java_frame(ing_arena *arena, const ts_line *l, size_t max_string, ing_java_frame *j,
		       bool *nomem)
{
	size_t nlen = (size_t)(l->name_end - l->name);
	size_t flen = l->file ? (size_t)(l->file_end - l->file) : 0;
	if (nlen > max_string || flen > max_string)
		return false;
	char *name = ing_arena_strndup(arena, l->name, nlen);
	const char *file = l->file ? ing_arena_strndup(arena, l->file, flen) : NULL;
	if (!name || (l->file && !file)) {
		*nomem = true;
		return false;
	}
	if (l->colon)
		name[l->colon - l->name] = '.';
	*j = (ing_java_frame){.name = name, .file = file, .line = l->line, .ms = -1, .count = 0};
	return true;
}

int ing_thread_stack_parse(ing_arena *arena, const char *text, size_t len, size_t max_frames,
			   size_t max_string, ing_stack *out)
{
	memset(out, 0, sizeof *out);
	size_t cap = count_lines(text, len);
	cap = cap < max_frames ? cap : max_frames;
	if (cap == 0)
		return 0;
	out->frames = ing_arena_calloc(arena, cap, sizeof *out->frames);
	out->java = ing_arena_calloc(arena, cap, sizeof *out->java);
	if (!out->frames || !out->java)
		return ING_MSTACK_NOMEM;
	const char *p = text, *end = text + len, *lend;
	bool nomem = false;
	while (p < end && out->nframes < cap) {
		const char *start = p;
		ts_line l;
		p = next_line(p, end, &lend);
		if (parse_ts_line(start, lend, &l) &&
		    java_frame(arena, &l, max_string, &out->java[out->nframes], &nomem))
			out->nframes++;
		if (nomem)
			return ING_MSTACK_NOMEM;
	}
	if (out->nframes == 0) {
		out->frames = NULL;
		out->java = NULL;
	}
	return 0;
}
