/*
 * apps.c — the apps table: bundle ids and the hashes of their credentials.
 * See store.h for the contracts.
 */
#include <string.h>

#include "store/internal.h"

#define APP_COLUMNS                                                           \
	"id, bundle_id, ingest_key_hash, upload_token_hash, admin_token_hash"

static int read_app(void *cls, const st_row *row)
{
	st_app *out = cls;
	out->id = st_row_int64(row, 0);
	if (st_row_copy(row, 1, out->bundle_id, sizeof out->bundle_id) < 0)
		return -1;
	for (int k = 0; k < 3; k++)
		if (st_row_bytes(row, 2 + k, out->hash[k], ST_HASH_LEN) < 0)
			return -1;
	return 0;
}

int st_app_insert(st_conn *c, const char *bundle_id, const char *name,
		  const uint8_t hashes[3][ST_HASH_LEN], int64_t *out_id)
{
	static const st_stmt q = {
		"app_insert",
		"INSERT INTO apps (bundle_id, name, ingest_key_hash,"
		" upload_token_hash, admin_token_hash)"
		" VALUES ($1, $2, $3, $4, $5)"
		" ON CONFLICT (bundle_id) DO NOTHING RETURNING id",
		5};
	return ST_EXEC(c, &q, st_read_int64, out_id, ST_TEXT(bundle_id), ST_TEXT(name),
		       ST_BYTES(hashes[ST_CRED_INGEST], ST_HASH_LEN),
		       ST_BYTES(hashes[ST_CRED_UPLOAD], ST_HASH_LEN),
		       ST_BYTES(hashes[ST_CRED_ADMIN], ST_HASH_LEN));
}

int st_app_by_credential(st_conn *c, st_cred kind,
			 const uint8_t hash[ST_HASH_LEN], st_app *out)
{
	/* A column cannot be a parameter: one statement per credential. */
	static const st_stmt q[3] = {
		[ST_CRED_INGEST] = {"app_by_ingest_key",
				    "SELECT " APP_COLUMNS
				    " FROM apps WHERE ingest_key_hash = $1",
				    1},
		[ST_CRED_UPLOAD] = {"app_by_upload_token",
				    "SELECT " APP_COLUMNS
				    " FROM apps WHERE upload_token_hash = $1",
				    1},
		[ST_CRED_ADMIN] = {"app_by_admin_token",
				   "SELECT " APP_COLUMNS
				   " FROM apps WHERE admin_token_hash = $1",
				   1},
	};
	return ST_EXEC(c, &q[kind], read_app, out,
		       ST_BYTES(hash, ST_HASH_LEN));
}
