/*
 * grouping.c — SPEC §6: frame identities and the two group keys.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ingest/grouping.h"

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/* One identity: IMAGE then SEP then TEXT, control bytes replaced so the
 * "\n"-joined key input stays unambiguous. */
static const char *identity(ing_arena *arena, const char *image,
			    const char *sep, const char *text)
{
	size_t li = strlen(image), ls = strlen(sep), lt = strlen(text);
	if (li > SIZE_MAX / 2 || lt > SIZE_MAX / 2 - li - ls - 1)
		return NULL;
	char *s = ing_arena_alloc(arena, li + ls + lt + 1);
	if (!s)
		return NULL;
	memcpy(s, image, li);
	memcpy(s + li, sep, ls);
	memcpy(s + li + ls, text, lt);
	s[li + ls + lt] = '\0';
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return s;
}

static bool skip_image(const ing_group_rules *r, const char *image)
{
	for (size_t i = 0; r && i < r->nskip_images; i++)
		if (r->skip_images[i] && !strcmp(r->skip_images[i], image))
			return true;
	return false;
}

static bool skip_function(const ing_group_rules *r, const char *fn)
{
	for (size_t i = 0; r && i < r->nskip_prefixes; i++) {
		const char *p = r->skip_prefixes[i];
		if (p && *p && !strncmp(fn, p, strlen(p)))
			return true;
	}
	return false;
}

static bool usable_hint(const char *hint)
{
	return hint && *hint && strcmp(hint, "<redacted>") != 0;
}

/* The name identity K of F is made of: inline entry K, else the usable
 * hint; NULL for a frame keyed by its address. */
static const char *frame_name(const ing_gframe *f, size_t k)
{
	if (!f->image)
		return NULL;
	if (f->nfunctions)
		return f->functions[k] ? f->functions[k] : "";
	return usable_hint(f->hint) ? f->hint : NULL;
}

size_t ing_frame_depth(const ing_gframe *f)
{
	return f->image && f->nfunctions ? f->nfunctions : 1;
}

const char *ing_frame_identity(const ing_gframe *f, size_t k, ing_arena *arena)
{
	char hex[2 + 16 + 1];
	const char *name = frame_name(f, k);
	if (name)
		return identity(arena, basename_of(f->image), "!", name);
	snprintf(hex, sizeof hex, "0x%" PRIx64, f->image ? f->offset : f->address);
	return identity(arena, f->image ? basename_of(f->image) : "?", "+", hex);
}

/* Collects up to ING_GROUP_L2_DEPTH identities into OUT, applying RULES
 * (NULL = none). Returns -1 on memory exhaustion. */
static int collect(const ing_gframe *frames, size_t nframes,
		   const ing_group_rules *rules, ing_arena *arena,
		   ing_grouping *out)
{
	out->nidentities = 0;
	for (size_t i = 0; i < nframes; i++) {
		const ing_gframe *f = &frames[i];
		if (skip_image(rules, f->image ? basename_of(f->image) : "?"))
			continue;
		for (size_t k = 0; k < ing_frame_depth(f); k++) {
			const char *name = frame_name(f, k);
			if (name && skip_function(rules, name))
				continue;
			const char *id = ing_frame_identity(f, k, arena);
			if (!id)
				return -1;
			out->identities[out->nidentities++] = id;
			if (out->nidentities == ING_GROUP_L2_DEPTH)
				return 0;
		}
	}
	return 0;
}

void ing_group_key(const char *text, size_t len, char out[ING_GROUP_KEY_LEN])
{
	snprintf(out, ING_GROUP_KEY_LEN, "%016" PRIx64,
		 (uint64_t)XXH3_64bits(text, len));
}

/* Keys the first N identities joined by "\n". */
static int key_over(ing_arena *arena, const char *const *ids, size_t n,
		    char out[ING_GROUP_KEY_LEN])
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += strlen(ids[i]) + (i ? 1 : 0);
	char *buf = ing_arena_alloc(arena, len + 1);
	if (!buf)
		return -1;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf[at++] = '\n';
		size_t l = strlen(ids[i]);
		memcpy(buf + at, ids[i], l);
		at += l;
	}
	ing_group_key(buf, len, out);
	return 0;
}

int ing_group(const ing_gframe *frames, size_t nframes,
	      const ing_group_rules *rules, ing_arena *arena,
	      ing_grouping *out)
{
	memset(out, 0, sizeof *out);
	if (collect(frames, nframes, rules, arena, out) < 0)
		return -1;
	if (out->nidentities == 0 && nframes && rules) {
		out->rules_ignored = true;
		if (collect(frames, nframes, NULL, arena, out) < 0)
			return -1;
	}
	size_t n1 = out->nidentities < ING_GROUP_L1_DEPTH ? out->nidentities
							  : ING_GROUP_L1_DEPTH;
	if (key_over(arena, out->identities, n1, out->key1) < 0 ||
	    key_over(arena, out->identities, out->nidentities, out->key2) < 0)
		return -1;
	return 0;
}
