/*
 * symbols.c — see symbols.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/symbols.h"
#include "store/reports.h"

static ing_lru *lru;

int srv_symbols_init(size_t capacity)
{
	lru = ing_lru_new(capacity);
	return lru ? 0 : -1;
}

void srv_symbols_free(void)
{
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
	char path[512]; /* relative to the data dir */
	ing_image_status status;
	const sym_cache *cache;
	ing_lru_entry *entry;
} symbol_file;

struct srv_symbol_set {
	symbol_file *files;
	size_t n, cap;
};

typedef struct loading {
	srv_symbol_set *set;
	int64_t app_id;
	const char *literal;
} loading;

static int add_file(void *cls, const st_symbol_file *f)
{
	srv_symbol_set *set = cls;
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 16;
		symbol_file *files = realloc(set->files, cap * sizeof *files);
		if (!files)
			return -1;
		set->files = files;
		set->cap = cap;
	}
	symbol_file *s = &set->files[set->n];
	memset(s, 0, sizeof *s);
	if (!sym_uuid_parse(f->uuid, s->uuid))
		return 0;
	s->arch = sym_arch_parse(f->arch);
	s->has_dwarf = f->has_dwarf;
	snprintf(s->path, sizeof s->path, "%s", f->symcache_path);
	set->n++;
	return 0;
}

static int load_tx(st_conn *c, void *cls)
{
	loading *l = cls;
	l->set->n = 0; /* a retried transaction starts over */
	return st_symbol_files(c, l->app_id, l->literal, add_file, l->set);
}

/* Every UUID of the reports as a PostgreSQL array literal ("{}" if none). */
static char *uuid_literal(const ing_report *const *reports, size_t n)
{
	size_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += reports[i]->nimages;
	char *out = malloc(count * 37 + 3);
	if (!out)
		return NULL;
	size_t len = 0;
	out[len++] = '{';
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < reports[i]->nimages; k++) {
			const ing_image *img = &reports[i]->images[k];
			if (!img->has_uuid)
				continue;
			if (len > 1)
				out[len++] = ',';
			sym_uuid_format(img->uuid, out + len);
			len += 36;
		}
	}
	out[len++] = '}';
	out[len] = '\0';
	return out;
}

int srv_symbol_set_load(const char *data_dir, int64_t app_id,
			const ing_report *const *reports, size_t n, srv_symbol_set **out)
{
	*out = NULL;
	srv_symbol_set *set = calloc(1, sizeof *set);
	char *literal = uuid_literal(reports, n);
	if (!set || !literal) {
		free(set);
		free(literal);
		return ST_HARD_ERROR;
	}
	int rc = 0;
	if (strcmp(literal, "{}") != 0) {
		loading l = {set, app_id, literal};
		rc = st_run_autocommit("symbol_files", load_tx, &l);
	}
	free(literal);
	if (rc < 0) {
		srv_symbol_set_free(set);
		return rc;
	}
	/* Open what the database knows of: a file that cannot be read makes
	 * its images "malformed", which the report view shows. */
	char path[2048];
	for (size_t i = 0; i < set->n; i++) {
		symbol_file *f = &set->files[i];
		snprintf(path, sizeof path, "%s/%s", data_dir, f->path);
		sym_error err;
		if (ing_lru_get(lru, path, &f->cache, &f->entry, &err) == SYM_OK) {
			f->status = ING_IMAGE_FOUND;
		} else {
			f->status = ING_IMAGE_MALFORMED;
			cm_log(CM_WARN, "symcache %s unreadable: %s", path, err.msg);
		}
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
			/* A UUID names one slice; the arch only breaks ties when
			 * a file was stored under several. */
			if (!best || (f->arch == img->arch && best->arch != img->arch))
				best = f;
		}
		out[i].status = best ? best->status : ING_IMAGE_MISSING;
		out[i].cache = best && best->status == ING_IMAGE_FOUND ? best->cache : NULL;
		out[i].from_symbol_table = best && !best->has_dwarf;
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
