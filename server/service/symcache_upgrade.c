/*
 * symcache_upgrade.c — see symcache_upgrade.h.
 */
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "server/service/datadir.h"
#include "server/service/symcache_upgrade.h"
#include "store/store.h"
#include "symbolizer/symbolizer.h"

static pthread_mutex_t upgrading = PTHREAD_MUTEX_INITIALIZER;

/* The row of F as it is now: 1 with *OUT, 0 gone, or a negative st_status. */
typedef struct reread_tx {
	int64_t app_id;
	const st_symbol_file *f;
	st_debug_file row;
} reread_tx;

static int reread_cb(st_conn *c, void *cls)
{
	reread_tx *t = cls;
	return st_debug_file_get(c, t->app_id, t->f->uuid, t->f->arch, false, &t->row);
}

typedef struct point_tx {
	const st_debug_file *fresh;
	const char *from_path;
} point_tx;

static int point_cb(st_conn *c, void *cls)
{
	point_tx *t = cls;
	return st_debug_file_set_symcache(c, t->fresh, t->from_path);
}

/* Builds F's symcache from its kept slice into FRESH->symcache_path (a
 * new name) and fills FRESH's counts: 0, or -1 (logged). */
static int build(const char *data_dir, const st_symbol_file *f, st_debug_file *fresh)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", data_dir, f->debug_path);
	sym_object *obj = NULL;
	sym_error err = {{0}};
	size_t index = 0;
	int rc = sym_object_open(path, &obj, &err);
	if (rc == SYM_OK)
		rc = sym_object_select(obj, sym_arch_parse(f->arch), &index, &err);
	if (rc == SYM_OK) {
		snprintf(path, sizeof path, "%s/%s", data_dir, fresh->symcache_path);
		rc = srv_datadir_mkparents(path) < 0 ? SYM_ERR_IO : SYM_OK;
	}
	sym_cache_stats stats = {0};
	if (rc == SYM_OK)
		rc = sym_cache_write(obj, index, path, 0600, &stats, &err);
	sym_object_free(obj);
	if (rc != SYM_OK) {
		cm_log(CM_WARN, "symcache of %s (%s %s) not rebuilt: %s", f->debug_path, f->uuid,
		       f->arch, err.msg[0] ? err.msg : "cannot create its folder");
		return -1;
	}
	fresh->functions = stats.functions;
	fresh->symcache_size = (int64_t)stats.bytes;
	fresh->symcache_version = SYM_CACHE_VERSION;
	return 0;
}

/* What the row says now, after another writer changed it: 1 with F
 * pointed at a current symcache, 0 when it has none, or a negative
 * st_status. */
static int take_row(int64_t app_id, st_symbol_file *f)
{
	reread_tx r = {.app_id = app_id, .f = f};
	int rc = st_run_tx("symcache_upgrade_reread", reread_cb, &r);
	if (rc <= 0 || r.row.symcache_version != SYM_CACHE_VERSION)
		return rc < 0 ? rc : 0;
	snprintf(f->symcache_path, sizeof f->symcache_path, "%s", r.row.symcache_path);
	f->symcache_version = r.row.symcache_version;
	return 1;
}

static int upgrade_locked(const char *data_dir, int64_t app_id, st_symbol_file *f)
{
	/* Another thread may have done it while this one waited. */
	int rc = take_row(app_id, f);
	if (rc != 0)
		return rc;
	st_debug_file fresh = {.app_id = app_id};
	snprintf(fresh.uuid, sizeof fresh.uuid, "%s", f->uuid);
	snprintf(fresh.arch, sizeof fresh.arch, "%s", f->arch);
	uint8_t raw[8];
	char nonce[2 * sizeof raw + 1];
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(nonce, sizeof nonce, raw, sizeof raw);
	snprintf(fresh.symcache_path, sizeof fresh.symcache_path,
		 "symcaches/%" PRId64 "/%s-%s-%s.symcache", app_id, f->uuid, f->arch, nonce);
	if (build(data_dir, f, &fresh) < 0)
		return 0;
	point_tx p = {.fresh = &fresh, .from_path = f->symcache_path};
	rc = st_run_tx("symcache_upgrade_point", point_cb, &p);
	if (rc <= 0) {
		srv_datadir_remove(data_dir, fresh.symcache_path);
		return rc < 0 ? rc : take_row(app_id, f);
	}
	cm_log(CM_INFO, "symcache of %s %s rebuilt at version %u (was %" PRId64 ")", f->uuid,
	       f->arch, SYM_CACHE_VERSION, f->symcache_version);
	srv_datadir_remove(data_dir, f->symcache_path);
	snprintf(f->symcache_path, sizeof f->symcache_path, "%s", fresh.symcache_path);
	f->symcache_version = SYM_CACHE_VERSION;
	return 1;
}

int srv_symcache_upgrade(const char *data_dir, int64_t app_id, st_symbol_file *f)
{
	if (f->symcache_version == SYM_CACHE_VERSION)
		return 1;
	if (f->system || !f->debug_path[0])
		return 0;
	pthread_mutex_lock(&upgrading);
	int rc = upgrade_locked(data_dir, app_id, f);
	pthread_mutex_unlock(&upgrading);
	return rc;
}
