/*
 * symcache_lru.h — the symcaches (and Android method tables,
 * symbolizer/method_map.h) a server process has open: a bounded,
 * thread-safe LRU of mmap'ed files shared by all request threads.
 *
 * Opening validates the whole file once (symcache_read.c); after that a
 * cache is only read, so any number of threads may look up in it at once.
 * Entries are reference-counted: eviction never unmaps a cache a request is
 * still using; it is closed when its last user releases it.
 *
 * Memory: the LRU owns the caches; callers borrow one between ing_lru_get
 * and ing_lru_release.
 */
#ifndef STALLSCOPE_INGEST_SYMCACHE_LRU_H
#define STALLSCOPE_INGEST_SYMCACHE_LRU_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer/method_map.h"
#include "symbolizer/symbolizer.h"

typedef struct ing_lru ing_lru;
typedef struct ing_lru_entry ing_lru_entry;

/* An LRU keeping at most CAPACITY caches open. NULL when out of memory. */
ing_lru *ing_lru_new(size_t capacity);

/* Closes everything; no reference may be outstanding. NULL is fine. */
void ing_lru_free(ing_lru *lru);

/*
 * The cache of the symcache file at PATH, opened on a miss. On success
 * *out_cache is usable until ing_lru_release(lru, *out_entry). Returns
 * SYM_OK or the symbolizer's error (ERR filled): a file that cannot be
 * opened or fails validation is not cached, so a repaired file is retried.
 */
int ing_lru_get(ing_lru *lru, const char *path, const sym_cache **out_cache,
		ing_lru_entry **out_entry, sym_error *err);

/* The same for the method table at PATH (SPEC §13). */
int ing_lru_get_methods(ing_lru *lru, const char *path, const sym_methods **out_methods,
			ing_lru_entry **out_entry, sym_error *err);

void ing_lru_release(ing_lru *lru, ing_lru_entry *entry);

typedef struct ing_lru_stats {
	uint64_t hits, misses, evictions;
	size_t open; /* caches open now */
} ing_lru_stats;

void ing_lru_get_stats(ing_lru *lru, ing_lru_stats *out);

#endif
