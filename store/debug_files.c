/*
 * debug_files.c — one row per uploaded Mach-O slice (UUID + arch) of an
 * app, pointing at the kept slice and its symcache in the data dir.
 * The instance's system symbols (schema/014) are rows of the same shape
 * without an app or a kept copy. See store.h for the contracts.
 */
#include <string.h>

#include "store/internal.h"

#define DF_COLUMNS                                                                                 \
	"id, app_id, upper(uuid::text), arch, name, kind, has_dwarf,"                              \
	" functions, file_size, symcache_size, symcache_version,"                                  \
	" debug_path, symcache_path,"                                                              \
	" to_char(created_at AT TIME ZONE 'UTC',"                                                  \
	" 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"                                                      \
	" coalesce(app_version, ''), coalesce(build, ''),"                                         \
	" coalesce(content_hash, '')"

static int read_file(st_debug_file *f, const st_row *row)
{
	memset(f, 0, sizeof *f);
	f->id = st_row_int64(row, 0);
	f->app_id = st_row_int64(row, 1);
	f->has_dwarf = st_row_bool(row, 6);
	f->functions = st_row_int64(row, 7);
	f->file_size = st_row_int64(row, 8);
	f->symcache_size = st_row_int64(row, 9);
	f->symcache_version = st_row_int64(row, 10);
	if (st_row_copy(row, 2, f->uuid, sizeof f->uuid) < 0 ||
	    st_row_copy(row, 3, f->arch, sizeof f->arch) < 0 ||
	    st_row_copy(row, 4, f->name, sizeof f->name) < 0 ||
	    st_row_copy(row, 5, f->kind, sizeof f->kind) < 0 ||
	    st_row_copy(row, 11, f->debug_path, sizeof f->debug_path) < 0 ||
	    st_row_copy(row, 12, f->symcache_path, sizeof f->symcache_path) < 0 ||
	    st_row_copy(row, 13, f->created_at, sizeof f->created_at) < 0 ||
	    st_row_copy(row, 14, f->app_version, sizeof f->app_version) < 0 ||
	    st_row_copy(row, 15, f->build, sizeof f->build) < 0 ||
	    st_row_copy(row, 16, f->content_hash, sizeof f->content_hash) < 0)
		return -1;
	return 0;
}

static int read_one(void *cls, const st_row *row)
{
	return read_file(cls, row);
}

struct each {
	st_debug_file_cb cb;
	void *cls;
};

static int read_each(void *cls, const st_row *row)
{
	struct each *e = cls;
	st_debug_file f;
	if (read_file(&f, row) < 0)
		return -1;
	return e->cb(e->cls, &f);
}

int st_debug_file_get(st_conn *c, int64_t app_id, const char *uuid,
		      const char *arch, bool for_update, st_debug_file *out)
{
	static const st_stmt q = {
		"debug_file_get",
		"SELECT " DF_COLUMNS " FROM debug_files"
		" WHERE app_id = $1 AND uuid = $2::uuid AND arch = $3",
		3};
	static const st_stmt q_lock = {
		"debug_file_get_for_update",
		"SELECT " DF_COLUMNS " FROM debug_files"
		" WHERE app_id = $1 AND uuid = $2::uuid AND arch = $3"
		" FOR UPDATE",
		3};
	return ST_EXEC(c, for_update ? &q_lock : &q, read_one, out,
		       ST_INT64(app_id), ST_TEXT(uuid), ST_TEXT(arch));
}

int st_debug_file_insert(st_conn *c, const st_debug_file *f)
{
	static const st_stmt q = {
		"debug_file_insert",
		"INSERT INTO debug_files (app_id, uuid, arch, name, kind,"
		" has_dwarf, functions, file_size, symcache_size,"
		" symcache_version, debug_path, symcache_path, app_version, build,"
		" content_hash)"
		" VALUES ($1, $2::uuid, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
		" $12, NULLIF($13, ''), NULLIF($14, ''), NULLIF($15, ''))"
		" ON CONFLICT (app_id, uuid, arch) DO NOTHING",
		15};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(f->app_id), ST_TEXT(f->uuid), ST_TEXT(f->arch),
		       ST_TEXT(f->name), ST_TEXT(f->kind), ST_BOOL(f->has_dwarf),
		       ST_INT64(f->functions), ST_INT64(f->file_size), ST_INT64(f->symcache_size),
		       ST_INT64(f->symcache_version), ST_TEXT(f->debug_path),
		       ST_TEXT(f->symcache_path), ST_TEXT(f->app_version), ST_TEXT(f->build),
		       ST_TEXT(f->content_hash));
}

int st_debug_file_replace(st_conn *c, const st_debug_file *f)
{
	static const st_stmt q = {
		"debug_file_replace",
		"UPDATE debug_files SET name = $4, kind = $5, has_dwarf = $6,"
		" functions = $7, file_size = $8, symcache_size = $9,"
		" symcache_version = $10, debug_path = $11,"
		" symcache_path = $12, created_at = now(), app_version = NULLIF($13, ''),"
		" build = NULLIF($14, ''), content_hash = NULLIF($15, '')"
		" WHERE app_id = $1 AND uuid = $2::uuid AND arch = $3",
		15};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(f->app_id), ST_TEXT(f->uuid), ST_TEXT(f->arch),
		       ST_TEXT(f->name), ST_TEXT(f->kind), ST_BOOL(f->has_dwarf),
		       ST_INT64(f->functions), ST_INT64(f->file_size), ST_INT64(f->symcache_size),
		       ST_INT64(f->symcache_version), ST_TEXT(f->debug_path),
		       ST_TEXT(f->symcache_path), ST_TEXT(f->app_version), ST_TEXT(f->build),
		       ST_TEXT(f->content_hash));
}

int st_debug_file_set_symcache(st_conn *c, const st_debug_file *f, const char *from_path)
{
	static const st_stmt q = {
		"debug_file_set_symcache",
		"UPDATE debug_files SET symcache_path = $5, symcache_version = $6,"
		" symcache_size = $7, functions = $8"
		" WHERE app_id = $1 AND uuid = $2::uuid AND arch = $3 AND symcache_path = $4",
		8};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(f->app_id), ST_TEXT(f->uuid), ST_TEXT(f->arch),
		       ST_TEXT(from_path), ST_TEXT(f->symcache_path), ST_INT64(f->symcache_version),
		       ST_INT64(f->symcache_size), ST_INT64(f->functions));
}

int st_debug_file_list(st_conn *c, int64_t app_id, int64_t before_id,
		       unsigned limit, st_debug_file_cb cb, void *cls)
{
	static const st_stmt q = {
		"debug_file_list",
		"SELECT " DF_COLUMNS " FROM debug_files"
		" WHERE app_id = $1 AND ($2::bigint = 0 OR id < $2::bigint)"
		" ORDER BY id DESC LIMIT $3",
		3};
	struct each e = {cb, cls};
	return ST_EXEC(c, &q, read_each, &e, ST_INT64(app_id),
		       ST_INT64(before_id), ST_INT64(limit));
}

int st_method_mapping_list(st_conn *c, int64_t app_id, int64_t before_id, unsigned limit,
			   st_debug_file_cb cb, void *cls)
{
	static const st_stmt q = {
		"method_mapping_list",
		"SELECT " DF_COLUMNS " FROM debug_files"
		" WHERE app_id = $1 AND kind = 'method_mapping'"
		" AND ($2::bigint = 0 OR id < $2::bigint) ORDER BY id DESC LIMIT $3",
		3};
	struct each e = {cb, cls};
	return ST_EXEC(c, &q, read_each, &e, ST_INT64(app_id), ST_INT64(before_id),
		       ST_INT64(limit));
}

int st_debug_file_delete(st_conn *c, int64_t app_id, const char *uuid,
			 st_debug_file_cb cb, void *cls)
{
	static const st_stmt q = {
		"debug_file_delete",
		"DELETE FROM debug_files WHERE app_id = $1 AND uuid = $2::uuid"
		" RETURNING " DF_COLUMNS,
		2};
	struct each e = {cb, cls};
	return ST_EXEC(c, &q, read_each, &e, ST_INT64(app_id),
		       ST_TEXT(uuid));
}

/* ---- system symbols ------------------------------------------------------- */

#define SS_COLUMNS                                                                                 \
	"id, 0::bigint, upper(uuid::text), arch, name, kind, has_dwarf,"                           \
	" functions, file_size, symcache_size, symcache_version,"                                  \
	" '', symcache_path,"                                                                      \
	" to_char(created_at AT TIME ZONE 'UTC',"                                                  \
	" 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '', '', ''"

int st_system_symbol_get(st_conn *c, const char *uuid, const char *arch, bool for_update,
			 st_debug_file *out)
{
	static const st_stmt q = {"system_symbol_get",
				  "SELECT " SS_COLUMNS " FROM system_symbols"
				  " WHERE uuid = $1::uuid AND arch = $2",
				  2};
	static const st_stmt q_lock = {"system_symbol_get_for_update",
				       "SELECT " SS_COLUMNS " FROM system_symbols"
				       " WHERE uuid = $1::uuid AND arch = $2 FOR UPDATE",
				       2};
	return ST_EXEC(c, for_update ? &q_lock : &q, read_one, out, ST_TEXT(uuid), ST_TEXT(arch));
}

int st_system_symbol_insert(st_conn *c, const st_debug_file *f)
{
	static const st_stmt q = {"system_symbol_insert",
				  "INSERT INTO system_symbols (uuid, arch, name, kind, has_dwarf,"
				  " functions, file_size, symcache_size, symcache_version,"
				  " symcache_path)"
				  " VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
				  " ON CONFLICT (uuid, arch) DO NOTHING",
				  10};
	return ST_EXEC(c, &q, NULL, NULL, ST_TEXT(f->uuid), ST_TEXT(f->arch), ST_TEXT(f->name),
		       ST_TEXT(f->kind), ST_BOOL(f->has_dwarf), ST_INT64(f->functions),
		       ST_INT64(f->file_size), ST_INT64(f->symcache_size),
		       ST_INT64(f->symcache_version), ST_TEXT(f->symcache_path));
}

int st_system_symbol_replace(st_conn *c, const st_debug_file *f)
{
	static const st_stmt q = {"system_symbol_replace",
				  "UPDATE system_symbols SET name = $3, kind = $4, has_dwarf = $5,"
				  " functions = $6, file_size = $7, symcache_size = $8,"
				  " symcache_version = $9, symcache_path = $10, created_at = now()"
				  " WHERE uuid = $1::uuid AND arch = $2",
				  10};
	return ST_EXEC(c, &q, NULL, NULL, ST_TEXT(f->uuid), ST_TEXT(f->arch), ST_TEXT(f->name),
		       ST_TEXT(f->kind), ST_BOOL(f->has_dwarf), ST_INT64(f->functions),
		       ST_INT64(f->file_size), ST_INT64(f->symcache_size),
		       ST_INT64(f->symcache_version), ST_TEXT(f->symcache_path));
}

int st_system_symbol_list(st_conn *c, int64_t before_id, unsigned limit, st_debug_file_cb cb,
			  void *cls)
{
	static const st_stmt q = {"system_symbol_list",
				  "SELECT " SS_COLUMNS " FROM system_symbols"
				  " WHERE $1::bigint = 0 OR id < $1::bigint"
				  " ORDER BY id DESC LIMIT $2",
				  2};
	struct each e = {cb, cls};
	return ST_EXEC(c, &q, read_each, &e, ST_INT64(before_id), ST_INT64(limit));
}
