/*
 * vec.h — internal to symbolizer/: a growable array and a deduplicating set
 * of fixed-size records, used while building symcaches.
 *
 * Memory: a vec owns its buffer (free v.p); a recset owns its slot array
 * (free s.slots) and borrows the vec it indexes.
 */
#ifndef STALLSCOPE_SYMBOLIZER_VEC_H
#define STALLSCOPE_SYMBOLIZER_VEC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct vec {
	void *p;
	size_t n, cap, elem;
} vec;

#define VEC(type) ((vec){NULL, 0, 0, sizeof(type)})
#define AT(v, type, i) (((type *)(v).p)[i])

/* Room for one more element at the end; NULL when out of memory. */
static inline void *vec_push(vec *v)
{
	if (v->n == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 256;
		if (ncap > SIZE_MAX / v->elem)
			return NULL;
		void *np = realloc(v->p, ncap * v->elem);
		if (!np)
			return NULL;
		v->p = np;
		v->cap = ncap;
	}
	return (char *)v->p + v->n++ * v->elem;
}

/* Open addressing over indices into a vec of records whose size is a
 * multiple of 4 and which hold no padding. */
typedef struct recset {
	vec *records;
	uint32_t *slots; /* index + 1, 0 = empty */
	size_t nslots;
} recset;

#define RECSET_FAILED UINT32_MAX

static inline uint64_t recset_hash(const uint32_t *w, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < n; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	return h;
}

static inline int recset_grow(recset *s)
{
	size_t n = s->nslots ? s->nslots * 2 : 4096;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return -1;
	size_t words = s->records->elem / 4;
	for (size_t i = 0; i < s->nslots; i++) {
		if (!s->slots[i])
			continue;
		const uint32_t *rec = (const uint32_t *)((char *)s->records->p +
							 (size_t)(s->slots[i] - 1) * s->records->elem);
		size_t h = (size_t)recset_hash(rec, words) & (n - 1);
		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = s->slots[i];
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = n;
	return 0;
}

/* The index of a record equal to REC, appending it if new; RECSET_FAILED
 * when out of memory or past 2^32 - 2 records. */
static inline uint32_t recset_intern(recset *s, const void *rec)
{
	if ((s->records->n + 1) * 2 > s->nslots && recset_grow(s) != 0)
		return RECSET_FAILED;
	size_t words = s->records->elem / 4;
	size_t mask = s->nslots - 1;
	size_t h = (size_t)recset_hash(rec, words) & mask;
	for (; s->slots[h]; h = (h + 1) & mask) {
		const void *cand = (char *)s->records->p +
				   (size_t)(s->slots[h] - 1) * s->records->elem;
		if (!memcmp(cand, rec, s->records->elem))
			return s->slots[h] - 1;
	}
	if (s->records->n >= UINT32_MAX - 2)
		return RECSET_FAILED;
	void *slot = vec_push(s->records);
	if (!slot)
		return RECSET_FAILED;
	memcpy(slot, rec, s->records->elem);
	s->slots[h] = (uint32_t)s->records->n;
	return (uint32_t)(s->records->n - 1);
}

/* u64 key -> u32 value, open addressing; key UINT64_MAX is reserved. */
typedef struct idmap {
	uint64_t *keys;
	uint32_t *vals;
	size_t n, cap;
} idmap;

static inline size_t idmap_slot(const idmap *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & mask;
	while (m->keys[h] != UINT64_MAX && m->keys[h] != key)
		h = (h + 1) & mask;
	return h;
}

/* Points *out at KEY's value, inserting VAL when absent; -1 on OOM. */
static inline int idmap_get_or_put(idmap *m, uint64_t key, uint32_t val, uint32_t **out)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 1024;
		uint64_t *keys = malloc(ncap * sizeof *keys);
		uint32_t *vals = malloc(ncap * sizeof *vals);
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -1;
		}
		memset(keys, 0xff, ncap * sizeof *keys);
		idmap old = *m;
		m->keys = keys;
		m->vals = vals;
		m->cap = ncap;
		for (size_t i = 0; i < old.cap; i++) {
			if (old.keys[i] == UINT64_MAX)
				continue;
			size_t h = idmap_slot(m, old.keys[i]);
			m->keys[h] = old.keys[i];
			m->vals[h] = old.vals[i];
		}
		free(old.keys);
		free(old.vals);
	}
	size_t h = idmap_slot(m, key);
	if (m->keys[h] == UINT64_MAX) {
		m->keys[h] = key;
		m->vals[h] = val;
		m->n++;
	}
	*out = &m->vals[h];
	return 0;
}

static inline void idmap_free(idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

#endif
