/*
 * mapping_import.c — see mapping_import.h. The table and the kept text are
 * written under names of this upload's own (a nonce) before the row is
 * committed, so a failed or losing upload removes exactly what it wrote.
 */
#include "server/service/mapping_import.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/matrix.h"
#include "server/service/datadir.h"
#include "server/service/reprocess.h"
#include "server/service/symbols.h"
#include "store/reports.h"
#include "symbolizer/method_map.h"

static void fail(srv_mapping_import *job, cm_err err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(srv_mapping_import *job, cm_err err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(job->msg, sizeof job->msg, fmt, ap);
	va_end(ap);
	job->err = err;
}

typedef struct import {
	srv_mapping_import *job;
	st_debug_file ours, old;
	bool wrote, replaced;
} import;

static void remove_files(const srv_mapping_import *job, const st_debug_file *f)
{
	srv_datadir_remove(job->cfg->data_dir, f->symcache_path);
	srv_datadir_remove(job->cfg->data_dir, f->debug_path);
}

/* The row this upload would store, with its paths. */
static void describe_ours(import *im)
{
	srv_mapping_import *job = im->job;
	st_debug_file *f = &im->ours;
	uint8_t uuid[16], raw[8];
	char nonce[2 * sizeof raw + 1];
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(nonce, sizeof nonce, raw, sizeof raw);
	ing_matrix_mapping_uuid(job->app_version, job->build, uuid);

	memset(f, 0, sizeof *f);
	f->app_id = job->app.id;
	sym_uuid_format(uuid, f->uuid);
	snprintf(f->arch, sizeof f->arch, "java");
	snprintf(f->name, sizeof f->name, "methodMapping.txt");
	snprintf(f->kind, sizeof f->kind, "method_mapping");
	f->has_dwarf = true; /* names every method it has: nothing better comes */
	f->symcache_version = SYM_METHODS_VERSION;
	snprintf(f->app_version, sizeof f->app_version, "%s", job->app_version);
	snprintf(f->build, sizeof f->build, "%s", job->build);
	snprintf(f->symcache_path, sizeof f->symcache_path,
		 "symcaches/%" PRId64 "/%s-java-%s.methods", job->app.id, f->uuid, nonce);
	snprintf(f->debug_path, sizeof f->debug_path,
		 "debug/%" PRId64 "/%s-java-%s/methodMapping.txt", job->app.id, f->uuid, nonce);
}

/* The table and the kept copy of the text. 0, or -1 with JOB failed. */
static int write_files(import *im)
{
	srv_mapping_import *job = im->job;
	st_debug_file *f = &im->ours;
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", job->cfg->data_dir, f->symcache_path);
	if (srv_datadir_mkparents(path) < 0) {
		fail(job, cm_err_storage(errno), "cannot create the directory of the method table");
		return -1;
	}
	im->wrote = true;
	sym_methods_stats stats;
	sym_error err = {{0}};
	memset(&stats, 0, sizeof stats);
	errno = 0;
	int rc = sym_methods_convert(job->body_path, path, &stats, &err);
	if (rc == SYM_ERR_IO) {
		fail(job, cm_err_storage(errno), "cannot write the method table");
		return -1;
	}
	if (rc == SYM_ERR_NOMEM) {
		fail(job, ERR_DECOMPRESSED_TOO_LARGE, "mapping too large: %s", err.msg);
		return -1;
	}
	if (rc != 0) {
		fail(job, ERR_BAD_DEBUG_FILE, "not a Matrix methodMapping.txt: %s", err.msg);
		return -1;
	}
	job->lines = stats.lines;
	job->skipped = stats.skipped;
	f->functions = (int64_t)stats.methods;
	sodium_bin2hex(f->content_hash, sizeof f->content_hash, stats.content_hash,
		       sizeof stats.content_hash);
	struct stat st;
	f->symcache_size = stat(path, &st) == 0 ? (int64_t)st.st_size : 0;

	int fd = open(job->body_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		fail(job, ERR_STORAGE, "cannot read the upload");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	f->file_size = (int64_t)st.st_size;
	snprintf(path, sizeof path, "%s/%s", job->cfg->data_dir, f->debug_path);
	char msg[256];
	rc = srv_datadir_copy(fd, 0, (uint64_t)st.st_size, path, msg, sizeof msg);
	int e = errno;
	close(fd);
	if (rc < 0) {
		fail(job, cm_err_storage(e), "cannot keep the mapping text");
		return -1;
	}
	return 0;
}

/* The row, decided under its lock: new, the same text again, or another
 * text for the build (which replaces the stored one). */
static int commit_tx(st_conn *c, void *cls)
{
	import *im = cls;
	srv_mapping_import *job = im->job;
	st_debug_file cur;
	im->replaced = false;
	job->created = false;
	int rc = st_debug_file_get(c, job->app.id, im->ours.uuid, "java", true, &cur);
	if (rc == 0) {
		rc = st_debug_file_insert(c, &im->ours);
		if (rc == 0) /* inserted by another upload meanwhile */
			return ST_SOFT_ERROR;
		job->created = rc == 1;
		job->stored = im->ours;
	} else if (rc == 1 && (strcmp(cur.content_hash, im->ours.content_hash) != 0 ||
			       cur.symcache_version != SYM_METHODS_VERSION)) {
		rc = st_debug_file_replace(c, &im->ours);
		if (rc == 0)
			return ST_SOFT_ERROR;
		job->created = im->replaced = rc == 1;
		im->old = cur;
		job->stored = im->ours;
	} else if (rc == 1) {
		job->stored = cur;
	}
	if (rc < 0)
		return rc;
	char uuids[ST_UUID_LEN + 3];
	snprintf(uuids, sizeof uuids, "{%s}", im->ours.uuid);
	rc = job->created ? st_arrivals_record(c, job->app.id, uuids) : 0;
	return rc < 0 ? rc : 1;
}

void srv_mapping_import_run(srv_mapping_import *job)
{
import im = {.job = job };
	job->err = ERR_NONE;
	job->msg[0] = '\0';
	describe_ours(&im);
	if (write_files(&im) == 0) {
		int rc = st_run_tx("mapping_commit", commit_tx, &im);
		if (rc < 0) {
			fail(job, rc == ST_SOFT_ERROR ? ERR_DB_UNAVAILABLE : ERR_INTERNAL, "%s",
			     cm_err_message(rc == ST_SOFT_ERROR ? ERR_DB_UNAVAILABLE
								: ERR_INTERNAL));
		} else {
			/* The next report uses it; the waiting ones move now. */
			srv_symbols_forget();
			srv_reprocess_wake();
			if (im.replaced)
				remove_files(job, &im.old);
		}
	}
	/* Files no row points at: ours unless they were committed. */
	if (im.wrote && (job->err != ERR_NONE || !job->created))
		remove_files(job, &im.ours);
}
