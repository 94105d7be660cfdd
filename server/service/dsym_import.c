/*
 * dsym_import.c — from an uploaded body to committed debug files; see
 * dsym_import.h for the rules.
 *
 * Four passes: (1) find the candidate files (the body itself, or what the
 * zip holds) and parse every one, recording its slices; (2) ask the
 * database which slices it already has; (3) build the symcache and kept
 * copy of each slice that is new or upgrades a symbol-table-only one;
 * (4) commit all rows in one transaction, then tidy the files no row
 * points at. Objects are reopened in pass 3 rather than kept open, so a
 * zip of thousands of files does not hold thousands of descriptors.
 */
#include "server/service/dsym_import.h"
#include "server/service/reprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "server/service/datadir.h"
#include "server/service/metrics.h"
#include "server/service/symbols.h"
#include "server/service/unzip.h"
#include "store/reports.h"
#include "symbolizer/symbolizer.h"

typedef enum plan {
	PLAN_SKIP,    /* stored already, nothing to build */
	PLAN_CREATE,  /* not stored */
	PLAN_REPLACE, /* stored without DWARF and ours has it, or stored in an
			 older symcache format */
} plan;

typedef enum outcome {
	OUT_CREATED,
	OUT_REPLACED,
	OUT_UNCHANGED,
	OUT_KEPT, /* ours has no DWARF, the stored one has: kept */
} outcome;

static const char *const outcome_names[] = {
	[OUT_CREATED] = "created",
	[OUT_REPLACED] = "replaced",
	[OUT_UNCHANGED] = "unchanged",
	[OUT_KEPT] = "kept_existing",
};

typedef struct candidate {
	char path[PATH_MAX];
	char name[ST_NAME_MAX + 1];
} candidate;

typedef struct slice {
	size_t cand;  /* index into candidates */
	size_t index; /* slice index in its object */
	sym_slice_info info;
	char uuid[ST_UUID_LEN + 1];
	const char *arch;
	plan plan;
	outcome outcome;
	bool wrote;           /* ours exists on disk */
	st_debug_file ours;   /* what this upload built */
	st_debug_file stored; /* what the database holds afterwards */
	st_debug_file old;    /* the row ours replaced */
} slice;

typedef struct import {
	srv_dsym_import *job;
	candidate *cands;
	size_t ncands;
	slice *slices;
	size_t nslices;
} import;

static void fail(srv_dsym_import *job, cm_err err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(srv_dsym_import *job, cm_err err, const char *fmt, ...)
{
	job->err = err;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(job->msg, sizeof job->msg, fmt, ap);
	va_end(ap);
}

void srv_dsym_sanitize_name(const char *name, char *out)
{
	size_t n = 0;
	for (const char *p = name; p && *p && n < ST_NAME_MAX; p++) {
		char ch = *p;
		bool safe = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
			    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
			    ch == '-' || ch == '+' || ch == '@';
		out[n++] = safe ? ch : '_';
	}
	out[n] = '\0';
	if (n == 0 || !strcmp(out, ".") || !strcmp(out, ".."))
		strcpy(out, "debug-file");
}

static const char *kind_name(uint32_t filetype)
{
	switch (filetype) {
	case 1: return "object";
	case 2: return "execute";
	case 6: return "dylib";
	case 8: return "bundle";
	case 10: return "dsym";
	case 11: return "kext";
	default: return "other";
	}
}

static int add_candidate(import *im, const char *path, const char *name)
{
	candidate *grown =
		realloc(im->cands, (im->ncands + 1) * sizeof *im->cands);
	if (!grown)
		return -1;
	im->cands = grown;
	candidate *c = &im->cands[im->ncands++];
	snprintf(c->path, sizeof c->path, "%s", path);
	srv_dsym_sanitize_name(name, c->name);
	return 0;
}

/* Pass 1a: the body itself, or the files its zip holds. */
static int find_candidates(import *im)
{
	srv_dsym_import *job = im->job;
	uint8_t head[4] = {0};
	int fd = open(job->body_path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? pread(fd, head, sizeof head, 0) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		fail(job, ERR_STORAGE, "cannot read the upload: %s",
		     strerror(errno));
		return -1;
	}
	if (!srv_is_zip(head, (size_t)n))
		return add_candidate(im, job->body_path, job->name) < 0 ? -1 : 0;

	char dest[PATH_MAX + 2];
	snprintf(dest, sizeof dest, "%s.d", job->body_path);
	srv_unzip_limits lim = {job->cfg->max_unzipped,
				job->cfg->max_zip_entries};
	srv_unzip_result files;
	cm_err err = srv_unzip(job->body_path, dest, &lim, &files, job->msg,
			       sizeof job->msg);
	if (err != ERR_NONE) {
		job->err = err;
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < files.n && rc == 0; i++)
		rc = add_candidate(im, files.files[i].path, files.files[i].name);
	srv_unzip_result_free(&files);
	if (rc < 0)
		fail(job, ERR_INTERNAL, "out of memory");
	return rc;
}

static slice *find_slice(import *im, const char *uuid, const char *arch)
{
	for (size_t i = 0; i < im->nslices; i++)
		if (!strcmp(im->slices[i].uuid, uuid) &&
		    !strcmp(im->slices[i].arch, arch))
			return &im->slices[i];
	return NULL;
}

/* C's Mach-O, or NULL with JOB failed as a bad debug file. */
static sym_object *open_candidate(srv_dsym_import *job, const candidate *c)
{
	sym_object *obj;
	sym_error err = {{0}};
	if (sym_object_open(c->path, &obj, &err) == SYM_OK)
		return obj;
	/* The symbolizer names the file it read, here a temp file of ours
	 * the client knows by C's name alone. */
	size_t n = strlen(c->path);
	const char *said = err.msg;
	if (!strncmp(said, c->path, n) && !strncmp(said + n, ": ", 2))
		said += n + 2;
	else if (strstr(said, c->path))
		said = "cannot be read";
	cm_log(CM_CLIENT, "dsyms: %s (%s): %s", c->name, c->path, err.msg);
	fail(job, ERR_BAD_DEBUG_FILE, "%s: %s", c->name, said);
	return NULL;
}

/* Pass 1b: parse every candidate; any bad one refuses the upload. */
static int parse_candidates(import *im)
{
	srv_dsym_import *job = im->job;
	for (size_t k = 0; k < im->ncands; k++) {
		const candidate *c = &im->cands[k];
		sym_object *obj = open_candidate(job, c);
		if (!obj)
			return -1;
		size_t count = sym_object_slice_count(obj);
		int rc = 0;
		for (size_t i = 0; i < count && rc == 0; i++) {
			sym_slice_info info;
			sym_object_slice_info(obj, i, &info);
			const char *arch = sym_arch_name(info.arch);
			if (info.arch == SYM_ARCH_UNKNOWN) {
				fail(job, ERR_BAD_DEBUG_FILE, "%s: slice %zu has "
				     "an unsupported CPU type 0x%x/0x%x",
				     c->name, i, info.cputype, info.cpusubtype);
				rc = -1;
				break;
			}
			if (!info.has_uuid) {
				fail(job, ERR_BAD_DEBUG_FILE, "%s: the %s slice "
				     "has no LC_UUID, so no report could ever "
				     "refer to it", c->name, arch);
				rc = -1;
				break;
			}
			char uuid[ST_UUID_LEN + 1];
			sym_uuid_format(info.uuid, uuid);
			slice *dup = find_slice(im, uuid, arch);
			/* The same slice twice (say a dSYM and its binary):
			 * the one with DWARF wins. */
			if (dup) {
				if (!dup->info.has_dwarf && info.has_dwarf) {
					dup->cand = k;
					dup->index = i;
					dup->info = info;
				}
				continue;
			}
			slice *grown = realloc(im->slices, (im->nslices + 1) *
							      sizeof *grown);
			if (!grown) {
				fail(job, ERR_INTERNAL, "out of memory");
				rc = -1;
				break;
			}
			im->slices = grown;
			slice *s = &im->slices[im->nslices++];
			memset(s, 0, sizeof *s);
			s->cand = k;
			s->index = i;
			s->info = info;
			memcpy(s->uuid, uuid, sizeof uuid);
			s->arch = arch;
		}
		sym_object_free(obj);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The row of a slice in the store the job fills. */
static int stored_get(st_conn *c, const srv_dsym_import *job, const char *uuid, const char *arch,
		      bool for_update, st_debug_file *out)
{
	return job->system ? st_system_symbol_get(c, uuid, arch, for_update, out)
			   : st_debug_file_get(c, job->app.id, uuid, arch, for_update, out);
}

/* A system symbol has no kept copy: its debug_path is "". */
static void remove_files(const srv_dsym_import *job, const st_debug_file *f)
{
	srv_datadir_remove(job->cfg->data_dir, f->symcache_path);
	if (f->debug_path[0])
		srv_datadir_remove(job->cfg->data_dir, f->debug_path);
}

/* Whether a slice with DWARF or not (OURS_DWARF) replaces the stored
 * STORED: DWARF wins over a symbol table, never the reverse; and a symcache
 * of an older format is rebuilt by any upload that is not worse, which is
 * how system symbols (no kept copy to rebuild from) reach the new format. */
static bool replaces(const st_debug_file *stored, bool ours_dwarf)
{
	if (!stored->has_dwarf && ours_dwarf)
		return true;
	return stored->symcache_version != SYM_CACHE_VERSION && (ours_dwarf || !stored->has_dwarf);
}

/* Pass 2: what is stored already decides what to build. */
static int precheck_tx(st_conn *c, void *cls)
{
	import *im = cls;
	for (size_t i = 0; i < im->nslices; i++) {
		slice *s = &im->slices[i];
		int rc = stored_get(c, im->job, s->uuid, s->arch, false, &s->stored);
		if (rc < 0)
			return rc;
		if (rc == 0)
			s->plan = PLAN_CREATE;
		else if (replaces(&s->stored, s->info.has_dwarf))
			s->plan = PLAN_REPLACE;
		else {
			s->plan = PLAN_SKIP;
			s->outcome = s->stored.has_dwarf && !s->info.has_dwarf
					     ? OUT_KEPT
					     : OUT_UNCHANGED;
		}
	}
	return 1;
}

static void remove_ours(import *im)
{
	for (size_t i = 0; i < im->nslices; i++) {
		slice *s = &im->slices[i];
		if (!s->wrote)
			continue;
		remove_files(im->job, &s->ours);
		s->wrote = false;
	}
}

static double since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Pass 3 for one slice of the open OBJ read from SRC_FD. */
static int build_slice(import *im, slice *s, const sym_object *obj, int src_fd)
{
	srv_dsym_import *job = im->job;
	const candidate *c = &im->cands[s->cand];
	st_debug_file *f = &s->ours;
	uint8_t raw[8];
	char nonce[2 * sizeof raw + 1];
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(nonce, sizeof nonce, raw, sizeof raw);

	memset(f, 0, sizeof *f);
	f->app_id = job->app.id;
	memcpy(f->uuid, s->uuid, sizeof f->uuid);
	snprintf(f->arch, sizeof f->arch, "%s", s->arch);
	snprintf(f->name, sizeof f->name, "%s", c->name);
	snprintf(f->kind, sizeof f->kind, "%s", kind_name(s->info.filetype));
	f->has_dwarf = s->info.has_dwarf;
	f->file_size = (int64_t)s->info.size;
	f->symcache_version = SYM_CACHE_VERSION;
	if (job->system) {
		/* The operator keeps the source tree: only the symcache. */
		snprintf(f->symcache_path, sizeof f->symcache_path,
			 "symcaches/system/%s-%s-%s.symcache", s->uuid, s->arch, nonce);
	} else {
		snprintf(f->symcache_path, sizeof f->symcache_path,
			 "symcaches/%" PRId64 "/%s-%s-%s.symcache", job->app.id, s->uuid, s->arch,
			 nonce);
		snprintf(f->debug_path, sizeof f->debug_path, "debug/%" PRId64 "/%s-%s-%s/%s",
			 job->app.id, s->uuid, s->arch, nonce, c->name);
	}

	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", job->cfg->data_dir,
		 f->symcache_path);
	if (srv_datadir_mkparents(path) < 0) {
		int e = errno;
		fail(job, cm_err_storage(e), "cannot create the directory of %s: %s", path,
		     strerror(e));
		return -1;
	}
	/* Set before writing: a failure below may leave a file to remove. */
	s->wrote = true;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sym_cache_stats stats = {0};
	sym_error err = {{0}};
	int rc = sym_cache_write(obj, s->index, path, 0600, &stats, &err);
	/* The failed call's errno: what ran after it (close, unlink of its
	 * temp file) succeeded and left errno alone. */
	int e = errno;
	srv_metrics_symcache_build(rc == SYM_OK, since(&t0));
	if (rc != SYM_OK) {
		fail(job, rc == SYM_ERR_IO ? cm_err_storage(e) : ERR_BAD_DEBUG_FILE,
		     "%s (%s %s): %s", c->name, s->uuid, s->arch, err.msg);
		return -1;
	}
	f->functions = stats.functions;
	f->symcache_size = (int64_t)stats.bytes;
	if (job->system)
		return 0;

	snprintf(path, sizeof path, "%s/%s", job->cfg->data_dir, f->debug_path);
	char msg[256];
	if (srv_datadir_copy(src_fd, s->info.offset, s->info.size, path, msg,
			     sizeof msg) < 0) {
		fail(job, cm_err_storage(errno), "%s", msg);
		return -1;
	}
	return 0;
}

/* Pass 3: build what pass 2 asked for, one object open at a time. */
static int build_all(import *im)
{
	srv_dsym_import *job = im->job;
	for (size_t k = 0; k < im->ncands; k++) {
		bool needed = false;
		for (size_t i = 0; i < im->nslices; i++)
			needed |= im->slices[i].cand == k &&
				  im->slices[i].plan != PLAN_SKIP;
		if (!needed)
			continue;
		const candidate *c = &im->cands[k];
		sym_object *obj = open_candidate(job, c);
		if (!obj)
			return -1;
		int fd = open(c->path, O_RDONLY | O_CLOEXEC);
		int rc = fd < 0 ? -1 : 0;
		if (fd < 0)
			fail(job, ERR_STORAGE, "cannot read %s: %s", c->name,
			     strerror(errno));
		for (size_t i = 0; i < im->nslices && rc == 0; i++) {
			slice *s = &im->slices[i];
			if (s->cand == k && s->plan != PLAN_SKIP)
				rc = build_slice(im, s, obj, fd);
		}
		if (fd >= 0)
			close(fd);
		sym_object_free(obj);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The arrivals of the slices stored (created or replaced), so that every
 * server's reprocessor moves the reports waiting for them. */
static int record_arrivals(st_conn *c, const import *im)
{
	char *uuids = malloc(im->nslices * (ST_UUID_LEN + 1) + 2);
	if (!uuids)
		return ST_HARD_ERROR;
	size_t n = 0, len = 0;
	uuids[len++] = '{';
	for (size_t i = 0; i < im->nslices; i++) {
		const slice *s = &im->slices[i];
		if (s->outcome != OUT_CREATED && s->outcome != OUT_REPLACED)
			continue;
		if (n++)
			uuids[len++] = ',';
		memcpy(uuids + len, s->uuid, ST_UUID_LEN);
		len += ST_UUID_LEN;
	}
	uuids[len++] = '}';
	uuids[len] = '\0';
	int rc = n ? st_arrivals_record(c, im->job->system ? 0 : im->job->app.id, uuids) : 0;
	free(uuids);
	return rc;
}

/* Pass 4: the rows, deciding again under row locks since pass 2 was a
 * separate transaction and another upload may have committed since. */
static int commit_tx(st_conn *c, void *cls)
{
	import *im = cls;
	for (size_t i = 0; i < im->nslices; i++) {
		slice *s = &im->slices[i];
		if (s->plan == PLAN_SKIP)
			continue;
		st_debug_file cur;
		int rc = stored_get(c, im->job, s->uuid, s->arch, true, &cur);
		if (rc == 0) {
			rc = im->job->system ? st_system_symbol_insert(c, &s->ours)
					     : st_debug_file_insert(c, &s->ours);
			if (rc == 1) {
				s->outcome = OUT_CREATED;
				s->stored = s->ours;
				continue;
			}
			if (rc == 0)
				rc = stored_get(c, im->job, s->uuid, s->arch, true, &cur);
			/* Inserted and deleted again meanwhile: retry. */
			if (rc == 0)
				return ST_SOFT_ERROR;
		}
		if (rc < 0)
			return rc;
		if (replaces(&cur, s->ours.has_dwarf)) {
			rc = im->job->system ? st_system_symbol_replace(c, &s->ours)
					     : st_debug_file_replace(c, &s->ours);
			if (rc < 0)
				return rc;
			if (rc == 0)
				return ST_SOFT_ERROR;
			s->outcome = OUT_REPLACED;
			s->old = cur;
			s->stored = s->ours;
		} else {
			s->outcome = cur.has_dwarf && !s->ours.has_dwarf
					     ? OUT_KEPT
					     : OUT_UNCHANGED;
			s->stored = cur;
		}
	}
	int rc = record_arrivals(c, im);
	return rc < 0 ? rc : 1;
}

static json_t *describe(const slice *s)
{
	const st_debug_file *f = &s->stored;
	return json_pack("{s:s,s:s,s:s,s:s,s:b,s:I,s:s}", "uuid", f->uuid,
			 "arch", f->arch, "name", f->name, "kind", f->kind,
			 "has_dwarf", f->has_dwarf, "functions",
			 (json_int_t)f->functions, "status",
			 outcome_names[s->outcome]);
}

static void finish(import *im)
{
	srv_dsym_import *job = im->job;
	/* Files no row points at: ours when the stored row won, the old
	 * row's when ours replaced it. */
	for (size_t i = 0; i < im->nslices; i++) {
		slice *s = &im->slices[i];
		if (s->wrote && (s->outcome == OUT_UNCHANGED || s->outcome == OUT_KEPT))
			remove_files(job, &s->ours);
		if (s->outcome == OUT_REPLACED)
			remove_files(job, &s->old);
		s->wrote = false;
	}
	job->files = json_array();
	for (size_t i = 0; job->files && i < im->nslices; i++) {
		const slice *s = &im->slices[i];
		job->created |= s->outcome == OUT_CREATED ||
				s->outcome == OUT_REPLACED;
		if (json_array_append_new(job->files, describe(s)) < 0) {
			json_decref(job->files);
			job->files = NULL;
		}
	}
	if (!job->files)
		fail(job, ERR_INTERNAL, "out of memory");
}

static void store_failed(srv_dsym_import *job, int rc)
{
	if (rc == ST_SOFT_ERROR)
		fail(job, ERR_DB_UNAVAILABLE, "%s",
		     cm_err_message(ERR_DB_UNAVAILABLE));
	else
		fail(job, ERR_INTERNAL, "database error");
}

void srv_dsym_import_run(srv_dsym_import *job)
{
	import im = {.job = job};
	job->err = ERR_NONE;
	job->msg[0] = '\0';
	job->created = false;
	job->files = NULL;
	if (find_candidates(&im) < 0 || parse_candidates(&im) < 0)
		goto cleanup;
	int rc = st_run_tx("dsym_precheck", precheck_tx, &im);
	if (rc < 0) {
		store_failed(job, rc);
		goto cleanup;
	}
	if (build_all(&im) < 0)
		goto cleanup;
	rc = st_run_tx("dsym_commit", commit_tx, &im);
	if (rc < 0) {
		store_failed(job, rc);
		goto cleanup;
	}
	/* The next report uses these files, and reports waiting for them
	 * move within seconds, not at the next periodic look. */
	srv_symbols_forget();
	srv_reprocess_wake();
	finish(&im);
cleanup:
	remove_ours(&im);
	free(im.cands);
	free(im.slices);
}
