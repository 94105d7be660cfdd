/*
 * symbols.c — see symbols.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "common/log.h"
#include "server/service/symbols.h"
#include "server/service/symcache_upgrade.h"
#include "store/reports.h"

static ing_lru *lru;

static void files_cache_free(void);

int srv_symbols_init(size_t capacity)
{
	lru = ing_lru_new(capacity);
	return lru ? 0 : -1;
}

void srv_symbols_free(void)
{
	files_cache_free();
	ing_lru_free(lru);
	lru = NULL;
}

void srv_symbols_stats(ing_lru_stats *out)
{
	if (lru)
		ing_lru_get_stats(lru, out);
	else
		memset(out, 0, sizeof *out);
}

typedef struct symbol_file {
	uint8_t uuid[16];
	sym_arch arch;
	bool has_dwarf;
	bool system;	/* the instance's system symbols, not the app's upload */
	char path[512]; /* relative to the data dir */
	int64_t version;      /* of the symcache at PATH */
	char debug_path[512]; /* the kept slice, "" for a system symbol */
	ing_image_status status;
	const sym_cache *cache;
	const sym_methods *methods; /* arch java: an Android method mapping */
	ing_lru_entry *entry;
} symbol_file;

struct srv_symbol_set {
	symbol_file *files;
	size_t n, cap;
};

/* ---- which debug files each UUID has, remembered ------------------------ */

/*
 * Every request names the same few images, so the answer of the database
 * for each (app, UUID) — its files, or none — is kept for FILES_TTL_S.
 * An upload or delete in this process makes every entry stale at once
 * (files_generation); one in another server instance is seen within
 * FILES_TTL_S, and a report stored meanwhile as missing is waiting for the
 * dSYM, so the reprocessor, which reads the database, moves it. The table
 * is direct-mapped: a collision just costs a read.
 */
#define FILES_SLOTS 4096
#define FILES_TTL_S 2.0

typedef struct known_file {
	sym_arch arch;
	bool has_dwarf;
	bool system;
	char path[sizeof ((symbol_file *)0)->path];
	int64_t version;
	char debug_path[sizeof((symbol_file *)0)->debug_path];
} known_file;

typedef struct known_uuid {
	int64_t app_id;
	uint8_t uuid[16];
	uint64_t generation;
	double filled_at; /* CLOCK_MONOTONIC seconds */
	size_t n;
	known_file files[];
} known_uuid;

static known_uuid *files_slots[FILES_SLOTS];
static uint64_t files_generation;
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;

static double monotonic_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static known_uuid **files_slot(int64_t app_id, const uint8_t uuid[16])
{
	/* UUIDs from one linker share most of their bytes: hash them all. */
	return &files_slots[XXH3_64bits_withSeed(uuid, 16, (uint64_t)app_id) % FILES_SLOTS];
}

void srv_symbols_forget(void)
{
	pthread_mutex_lock(&files_lock);
	files_generation++;
	pthread_mutex_unlock(&files_lock);
}

static void files_cache_free(void)
{
	pthread_mutex_lock(&files_lock);
	for (size_t i = 0; i < FILES_SLOTS; i++) {
		free(files_slots[i]);
		files_slots[i] = NULL;
	}
	pthread_mutex_unlock(&files_lock);
}

static symbol_file *set_add(srv_symbol_set *set)
{
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 16;
		symbol_file *files = realloc(set->files, cap * sizeof *files);
		if (!files)
			return NULL;
		set->files = files;
		set->cap = cap;
	}
	symbol_file *f = &set->files[set->n++];
	memset(f, 0, sizeof *f);
	return f;
}

/* Appends the remembered files of UUID to SET: true on a valid entry. */
static bool files_recall(srv_symbol_set *set, int64_t app_id, const uint8_t uuid[16],
			 uint64_t generation, double now, bool *oom)
{
	pthread_mutex_lock(&files_lock);
	const known_uuid *k = *files_slot(app_id, uuid);
	bool valid = k && k->app_id == app_id && memcmp(k->uuid, uuid, 16) == 0 &&
		     k->generation == generation && now - k->filled_at < FILES_TTL_S;
	for (size_t i = 0; valid && i < k->n; i++) {
		symbol_file *f = set_add(set);
		if (!f) {
			*oom = true;
			break;
		}
		memcpy(f->uuid, uuid, 16);
		f->arch = k->files[i].arch;
		f->has_dwarf = k->files[i].has_dwarf;
		f->system = k->files[i].system;
		memcpy(f->path, k->files[i].path, sizeof f->path);
		f->version = k->files[i].version;
		memcpy(f->debug_path, k->files[i].debug_path, sizeof f->debug_path);
	}
	pthread_mutex_unlock(&files_lock);
	return valid;
}

/* Remembers the files of UUID found in SET (none: the image has no debug
 * file), as the database answered at GENERATION. */
static void files_remember(const srv_symbol_set *set, int64_t app_id, const uint8_t uuid[16],
			   uint64_t generation, double filled_at)
{
	size_t n = 0;
	for (size_t i = 0; i < set->n; i++)
		n += memcmp(set->files[i].uuid, uuid, 16) == 0;
	known_uuid *k = malloc(sizeof *k + n * sizeof k->files[0]);
	if (!k)
		return; /* only a cache */
	k->app_id = app_id;
	memcpy(k->uuid, uuid, 16);
	k->generation = generation;
	k->filled_at = filled_at;
	k->n = 0;
	for (size_t i = 0; i < set->n; i++) {
		const symbol_file *f = &set->files[i];
		if (memcmp(f->uuid, uuid, 16) != 0)
			continue;
		known_file *kf = &k->files[k->n++];
		kf->arch = f->arch;
		kf->has_dwarf = f->has_dwarf;
		kf->system = f->system;
		memcpy(kf->path, f->path, sizeof kf->path);
		kf->version = f->version;
		memcpy(kf->debug_path, f->debug_path, sizeof kf->debug_path);
	}
	pthread_mutex_lock(&files_lock);
	known_uuid **slot = files_slot(app_id, uuid);
	free(*slot);
	*slot = k;
	pthread_mutex_unlock(&files_lock);
}

/* ---- loading a set ------------------------------------------------------------ */

typedef struct loading {
	srv_symbol_set *set;
	size_t keep; /* files taken from memory, ahead of the database's */
	int64_t app_id;
	const char *literal;
} loading;

static int add_file(void *cls, const st_symbol_file *f)
{
	srv_symbol_set *set = cls;
	uint8_t uuid[16];
	if (!sym_uuid_parse(f->uuid, uuid))
		return 0;
	symbol_file *s = set_add(set);
	if (!s)
		return -1;
	memcpy(s->uuid, uuid, 16);
	s->arch = sym_arch_parse(f->arch);
	s->has_dwarf = f->has_dwarf;
	s->system = f->system;
	snprintf(s->path, sizeof s->path, "%s", f->symcache_path);
	s->version = f->symcache_version;
	snprintf(s->debug_path, sizeof s->debug_path, "%s", f->debug_path);
	return 0;
}

static int load_tx(st_conn *c, void *cls)
{
	loading *l = cls;
	l->set->n = l->keep; /* a retried transaction starts over */
	return st_symbol_files(c, l->app_id, l->literal, add_file, l->set);
}

static int uuid_order(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

/* Every distinct UUID of the reports, sorted: *N of them in *OUT (malloc). */
static int distinct_uuids(const ing_report *const *reports, size_t n, uint8_t (**out)[16],
			  size_t *count)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += reports[i]->nimages;
	uint8_t(*v)[16] = malloc((total ? total : 1) * sizeof *v);
	if (!v)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < reports[i]->nimages; j++)
			if (reports[i]->images[j].has_uuid)
				memcpy(v[k++], reports[i]->images[j].uuid, 16);
	qsort(v, k, sizeof *v, uuid_order);
	size_t d = 0;
	for (size_t i = 0; i < k; i++)
		if (d == 0 || memcmp(v[d - 1], v[i], 16) != 0)
			memmove(v[d++], v[i], 16);
	*out = v;
	*count = d;
	return 0;
}

/* A symcache of an older format is never served: rebuilt first
 * (symcache_upgrade.h). 1 when F is current, 0 when it cannot be (its
 * images then count as missing symbols, which an upload or a system
 * symbols import answers), or a negative st_status. */
static int make_current(const char *data_dir, int64_t app_id, symbol_file *f)
{
	if (f->arch == SYM_ARCH_JAVA) {
		/* One table format so far: a later one rebuilds from the
		 * kept mapping text (debug_path) as symcaches are here. */
		if (f->version == SYM_METHODS_VERSION)
			return 1;
		f->status = ING_IMAGE_MISSING;
		return 0;
	}
	if (f->version == SYM_CACHE_VERSION)
		return 1;
	st_symbol_file row = {.system = f->system, .symcache_version = f->version};
	sym_uuid_format(f->uuid, row.uuid);
	snprintf(row.arch, sizeof row.arch, "%s", sym_arch_name(f->arch));
	snprintf(row.symcache_path, sizeof row.symcache_path, "%s", f->path);
	snprintf(row.debug_path, sizeof row.debug_path, "%s", f->debug_path);
	int rc = srv_symcache_upgrade(data_dir, app_id, &row);
	if (rc <= 0) {
		f->status = ING_IMAGE_MISSING;
		return rc;
	}
	snprintf(f->path, sizeof f->path, "%s", row.symcache_path);
	f->version = row.symcache_version;
	srv_symbols_forget();
	return 1;
}

int srv_symbol_set_load(const char *data_dir, int64_t app_id,
			const ing_report *const *reports, size_t n, bool fresh,
			srv_symbol_set **out)
{
	*out = NULL;
	srv_symbol_set *set = calloc(1, sizeof *set);
	uint8_t(*uuids)[16] = NULL;
	size_t nuuids = 0;
	if (!set || distinct_uuids(reports, n, &uuids, &nuuids) != 0) {
		free(set);
		return ST_HARD_ERROR;
	}
	pthread_mutex_lock(&files_lock);
	uint64_t generation = files_generation;
	pthread_mutex_unlock(&files_lock);
	double now = monotonic_now();

	/* Recalled UUIDs are dropped from the list; the rest are asked. */
	size_t nmissed = 0;
	bool oom = false;
	for (size_t i = 0; i < nuuids && !oom; i++)
		if (fresh || !files_recall(set, app_id, uuids[i], generation, now, &oom))
			memmove(uuids[nmissed++], uuids[i], 16);
	char *literal = oom ? NULL : malloc(nmissed * 37 + 3);
	int rc = literal ? 0 : ST_HARD_ERROR;
	if (literal && nmissed > 0) {
		size_t len = 0;
		literal[len++] = '{';
		for (size_t i = 0; i < nmissed; i++) {
			if (i > 0)
				literal[len++] = ',';
			sym_uuid_format(uuids[i], literal + len);
			len += 36;
		}
		literal[len++] = '}';
		literal[len] = '\0';
		loading l = {set, set->n, app_id, literal};
		rc = st_run_autocommit("symbol_files", load_tx, &l);
		for (size_t i = 0; rc >= 0 && i < nmissed; i++)
			files_remember(set, app_id, uuids[i], generation, now);
	}
	free(literal);
	free(uuids);
	if (rc < 0) {
		srv_symbol_set_free(set);
		return rc;
	}
	/* Open what the database knows of: a file that cannot be read makes
	 * its images "malformed", which the report view shows. */
	char path[2048];
	for (size_t i = 0; i < set->n && rc >= 0; i++) {
		symbol_file *f = &set->files[i];
		if ((rc = make_current(data_dir, app_id, f)) <= 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", data_dir, f->path);
		sym_error err;
		if ((f->arch == SYM_ARCH_JAVA
			     ? ing_lru_get_methods(lru, path, &f->methods, &f->entry, &err)
			     : ing_lru_get(lru, path, &f->cache, &f->entry, &err)) == SYM_OK) {
			f->status = ING_IMAGE_FOUND;
		} else {
			f->status = ING_IMAGE_MALFORMED;
			cm_log(CM_WARN, "symcache %s unreadable: %s", path, err.msg);
		}
	}
	if (rc < 0) {
		srv_symbol_set_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

void srv_symbol_set_images(srv_symbol_set *set, const ing_report *r,
			   ing_image_symbols *out)
{
	for (size_t i = 0; i < r->nimages; i++) {
		const ing_image *img = &r->images[i];
		const symbol_file *best = NULL;
		for (size_t k = 0; img->has_uuid && k < set->n; k++) {
			const symbol_file *f = &set->files[k];
			if (memcmp(f->uuid, img->uuid, 16) != 0)
				continue;
			/* The app's own upload wins over the system symbols, so
			 * a team can override them; then a UUID names one slice,
			 * and the arch only breaks ties when a file was stored
			 * under several. */
			if (!best || (best->system && !f->system) ||
			    (best->system == f->system && f->arch == img->arch &&
			     best->arch != img->arch))
				best = f;
		}
		/* A method mapping serves Android reports only, a symcache
		 * Apple ones only, whatever a report claims. */
		bool found = best && best->status == ING_IMAGE_FOUND;
		bool fits =
			found && (best->methods != NULL) == (r->platform == ING_PLATFORM_ANDROID);
		out[i].status = !best || (found && !fits) ? ING_IMAGE_MISSING : best->status;
		out[i].cache = fits ? best->cache : NULL;
		out[i].methods = fits ? best->methods : NULL;
		out[i].from_symbol_table = fits && !best->has_dwarf;
	}
}

void srv_symbol_set_free(srv_symbol_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		if (set->files[i].entry)
			ing_lru_release(lru, set->files[i].entry);
	free(set->files);
	free(set);
}
