/*
 * symcache_lru.c — see symcache_lru.h. A mutex guards a hash table (path →
 * entry) and a recency list; opening a file happens outside the lock, so a
 * slow open never stalls lookups of other caches. An entry is a symcache
 * or a method table, told apart by which pointer is set: their paths
 * differ (.symcache, .methods), so one path is always one kind.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/symcache_lru.h"

struct ing_lru_entry {
	char *path;
	sym_cache *cache;
	sym_methods *methods;
	unsigned refs;
	bool linked; /* in the table and list (false once evicted) */
	ing_lru_entry *prev, *next;    /* recency list, most recent first */
	ing_lru_entry *hnext;          /* hash chain */
};

struct ing_lru {
	pthread_mutex_t lock;
	size_t capacity, count;
	ing_lru_entry **buckets;
	size_t nbuckets;
	ing_lru_entry *head, *tail;
	uint64_t hits, misses, evictions;
};

static size_t hash_path(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return (size_t)h & (n - 1);
}

ing_lru *ing_lru_new(size_t capacity)
{
	ing_lru *lru = calloc(1, sizeof *lru);
	if (!lru)
		return NULL;
	lru->capacity = capacity ? capacity : 1;
	lru->nbuckets = 64;
	while (lru->nbuckets < lru->capacity * 2)
		lru->nbuckets *= 2;
	lru->buckets = calloc(lru->nbuckets, sizeof *lru->buckets);
	if (!lru->buckets) {
		free(lru);
		return NULL;
	}
	pthread_mutex_init(&lru->lock, NULL);
	return lru;
}

static void destroy(ing_lru_entry *e)
{
	if (e->cache)
		sym_cache_close(e->cache);
	if (e->methods)
		sym_methods_close(e->methods);
	free(e->path);
	free(e);
}

void ing_lru_free(ing_lru *lru)
{
	if (!lru)
		return;
	for (ing_lru_entry *e = lru->head, *next; e; e = next) {
		next = e->next;
		destroy(e);
	}
	pthread_mutex_destroy(&lru->lock);
	free(lru->buckets);
	free(lru);
}

static void list_unlink(ing_lru *lru, ing_lru_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		lru->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		lru->tail = e->prev;
	e->prev = e->next = NULL;
}

static void list_push_front(ing_lru *lru, ing_lru_entry *e)
{
	e->prev = NULL;
	e->next = lru->head;
	if (lru->head)
		lru->head->prev = e;
	lru->head = e;
	if (!lru->tail)
		lru->tail = e;
}

static ing_lru_entry *table_find(ing_lru *lru, const char *path)
{
	for (ing_lru_entry *e = lru->buckets[hash_path(path, lru->nbuckets)]; e; e = e->hnext)
		if (!strcmp(e->path, path))
			return e;
	return NULL;
}

static void table_remove(ing_lru *lru, ing_lru_entry *e)
{
	ing_lru_entry **p = &lru->buckets[hash_path(e->path, lru->nbuckets)];
	while (*p && *p != e)
		p = &(*p)->hnext;
	if (*p)
		*p = e->hnext;
	e->hnext = NULL;
}

/* Drops least recently used entries over capacity; returns those nobody
 * holds, to be closed outside the lock. */
static ing_lru_entry *evict(ing_lru *lru)
{
	ing_lru_entry *doomed = NULL;
	for (ing_lru_entry *e = lru->tail; e && lru->count > lru->capacity;) {
		ing_lru_entry *prev = e->prev;
		table_remove(lru, e);
		list_unlink(lru, e);
		e->linked = false;
		lru->count--;
		lru->evictions++;
		if (e->refs == 0) {
			e->next = doomed;
			doomed = e;
		}
		e = prev;
	}
	return doomed;
}

static void destroy_list(ing_lru_entry *e)
{
	while (e) {
		ing_lru_entry *next = e->next;
		destroy(e);
		e = next;
	}
}

/* The entry of PATH, referenced, opened as a method table (METHODS) or a
 * symcache on a miss. SYM_OK with *OUT, or the open's error. */
static int acquire(ing_lru *lru, const char *path, bool methods, ing_lru_entry **out,
		   sym_error *err)
{
	pthread_mutex_lock(&lru->lock);
	ing_lru_entry *e = table_find(lru, path);
	if (e) {
		e->refs++;
		list_unlink(lru, e);
		list_push_front(lru, e);
		lru->hits++;
		pthread_mutex_unlock(&lru->lock);
		*out = e;
		return SYM_OK;
	}
	lru->misses++;
	pthread_mutex_unlock(&lru->lock);

	ing_lru_entry *fresh = calloc(1, sizeof *fresh);
	char *copy = strdup(path);
	if (!fresh || !copy) {
		free(fresh);
		free(copy);
		snprintf(err->msg, sizeof err->msg, "out of memory");
		return SYM_ERR_NOMEM;
	}
	fresh->path = copy;
	int rc = methods ? sym_methods_open(path, &fresh->methods, err)
			 : sym_cache_open(path, &fresh->cache, err);
	if (rc != SYM_OK) {
		destroy(fresh);
		return rc;
	}

	pthread_mutex_lock(&lru->lock);
	/* Another thread may have opened the same file meanwhile: keep one. */
	e = table_find(lru, path);
	ing_lru_entry *doomed = NULL;
	if (e) {
		e->refs++;
		list_unlink(lru, e);
		list_push_front(lru, e);
	} else {
		e = fresh;
		fresh = NULL;
		e->refs = 1;
		e->linked = true;
		size_t b = hash_path(e->path, lru->nbuckets);
		e->hnext = lru->buckets[b];
		lru->buckets[b] = e;
		list_push_front(lru, e);
		lru->count++;
		doomed = evict(lru);
	}
	pthread_mutex_unlock(&lru->lock);
	if (fresh)
		destroy(fresh);
	destroy_list(doomed);
	*out = e;
	return SYM_OK;
}

/* An entry of the other kind than asked for: released, and refused. */
static int wrong_kind(ing_lru *lru, ing_lru_entry *e, sym_error *err)
{
	ing_lru_release(lru, e);
	snprintf(err->msg, sizeof err->msg, "not the kind of file asked for");
	return SYM_ERR_FORMAT;
}

int ing_lru_get(ing_lru *lru, const char *path, const sym_cache **out_cache,
		ing_lru_entry **out_entry, sym_error *err)
{
	ing_lru_entry *e;
	int rc = acquire(lru, path, false, &e, err);
	if (rc != SYM_OK)
		return rc;
	if (!e->cache)
		return wrong_kind(lru, e, err);
	*out_cache = e->cache;
	*out_entry = e;
	return SYM_OK;
}

int ing_lru_get_methods(ing_lru *lru, const char *path, const sym_methods **out_methods,
			ing_lru_entry **out_entry, sym_error *err)
{
	ing_lru_entry *e;
	int rc = acquire(lru, path, true, &e, err);
	if (rc != SYM_OK)
		return rc;
	if (!e->methods)
		return wrong_kind(lru, e, err);
	*out_methods = e->methods;
	*out_entry = e;
	return SYM_OK;
}

void ing_lru_release(ing_lru *lru, ing_lru_entry *e)
{
	pthread_mutex_lock(&lru->lock);
	bool close_it = --e->refs == 0 && !e->linked;
	pthread_mutex_unlock(&lru->lock);
	if (close_it)
		destroy(e);
}

void ing_lru_get_stats(ing_lru *lru, ing_lru_stats *out)
{
	pthread_mutex_lock(&lru->lock);
	out->hits = lru->hits;
	out->misses = lru->misses;
	out->evictions = lru->evictions;
	out->open = lru->count;
	pthread_mutex_unlock(&lru->lock);
}
