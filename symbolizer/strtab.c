/* strtab.c — see strtab.h. FNV-1a hashing, linear probing. */
#include <stdlib.h>
#include <string.h>

#include "symbolizer/strtab.h"

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

static int grow_slots(sym_strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t i = 0; i < t->nslots; i++) {
		uint32_t v = t->slots[i];
		if (!v)
			continue;
		const char *s = t->blob + (v - 1);
		size_t h = (size_t)hash_bytes(s, strlen(s)) & (n - 1);
		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = v;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

int sym_strtab_init(sym_strtab *t)
{
	memset(t, 0, sizeof *t);
	return sym_strtab_intern(t, "", 0) == 0 ? 0 : -1;
}

void sym_strtab_free(sym_strtab *t)
{
	free(t->blob);
	free(t->slots);
	memset(t, 0, sizeof *t);
}

uint32_t sym_strtab_intern(sym_strtab *t, const char *s, size_t len)
{
	if ((t->count + 1) * 2 > t->nslots && grow_slots(t) != 0)
		return SYM_NO_STR;
	size_t mask = t->nslots - 1;
	size_t h = (size_t)hash_bytes(s, len) & mask;
	for (;; h = (h + 1) & mask) {
		uint32_t v = t->slots[h];
		if (!v)
			break;
		const char *cand = t->blob + (v - 1);
		if (!strncmp(cand, s, len) && cand[len] == '\0')
			return v - 1;
	}
	/* Offsets are stored +1 in 32 bits: stay below 4 GiB - 1. */
	if (len >= UINT32_MAX - 1 - t->len)
		return SYM_NO_STR;
	if (t->len + len + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		while (cap < t->len + len + 1)
			cap *= 2;
		char *blob = realloc(t->blob, cap);
		if (!blob)
			return SYM_NO_STR;
		t->blob = blob;
		t->cap = cap;
	}
	uint32_t id = (uint32_t)t->len;
	memcpy(t->blob + t->len, s, len);
	t->blob[t->len + len] = '\0';
	t->len += len + 1;
	t->slots[h] = id + 1;
	t->count++;
	return id;
}
