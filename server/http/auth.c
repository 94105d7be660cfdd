/* auth.c — credentials; see auth.h for the formats and the checking order. */
#include "server/http/auth.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <sodium.h>
#include <string.h>
#include <strings.h>

#include "common/errors.h"

#define TOKEN_BYTES 32
#define PREFIX_LEN 4
#define BODY_LEN 43 /* unpadded base64 of 32 bytes */

static const char *const prefixes[3] = {
	[ST_CRED_INGEST] = "ssi_",
	[ST_CRED_UPLOAD] = "ssu_",
	[ST_CRED_ADMIN] = "ssa_",
};

static const char *const kind_names[3] = {
	[ST_CRED_INGEST] = "ingest key",
	[ST_CRED_UPLOAD] = "upload token",
	[ST_CRED_ADMIN] = "admin token",
};

void srv_token_generate(st_cred kind, char out[SRV_TOKEN_SIZE])
{
	unsigned char raw[TOKEN_BYTES];
	randombytes_buf(raw, sizeof raw);
	memcpy(out, prefixes[kind], PREFIX_LEN);
	sodium_bin2base64(out + PREFIX_LEN, SRV_TOKEN_SIZE - PREFIX_LEN, raw,
			  sizeof raw, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(raw, sizeof raw);
}

bool srv_token_kind(const char *token, st_cred *out_kind)
{
	if (strlen(token) != PREFIX_LEN + BODY_LEN)
		return false;
	for (const char *p = token + PREFIX_LEN; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			return false;
	for (int k = 0; k < 3; k++) {
		if (!memcmp(token, prefixes[k], PREFIX_LEN)) {
			*out_kind = (st_cred)k;
			return true;
		}
	}
	return false;
}

bool srv_bundle_id_valid(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > ST_BUNDLE_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = id[i];
		bool alnum = (ch >= 'A' && ch <= 'Z') ||
			     (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
		if (!alnum && (i == 0 || (ch != '.' && ch != '-' && ch != '_')))
			return false;
	}
	return true;
}

void srv_token_hash(const char *token, uint8_t out[ST_HASH_LEN])
{
	crypto_generichash(out, ST_HASH_LEN, (const unsigned char *)token,
			   strlen(token), NULL, 0);
}

/* The credential the request carries for ALLOWED routes, or NULL. */
static const char *credential(struct MHD_Connection *conn, unsigned allowed)
{
	if (allowed & SRV_AUTH_INGEST) {
		const char *key = MHD_lookup_connection_value(
			conn, MHD_HEADER_KIND, "X-Stallscope-Key");
		if (key)
			return key;
	}
	if (allowed & (SRV_AUTH_UPLOAD | SRV_AUTH_ADMIN)) {
		const char *h = MHD_lookup_connection_value(
			conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
		if (h && !strncasecmp(h, "Bearer ", 7)) {
			h += 7;
			while (*h == ' ')
				h++;
			return h;
		}
	}
	return NULL;
}

static bool refuse(srv_refusal *out, cm_err err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool refuse(srv_refusal *out, cm_err err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	out->err = err;
	vsnprintf(out->message, sizeof out->message, fmt, ap);
	va_end(ap);
	return false;
}

static bool unauthorized(srv_refusal *out, unsigned allowed, bool present)
{
	const char *how = (allowed & SRV_AUTH_INGEST)
				  ? "an X-Stallscope-Key header"
				  : "Authorization: Bearer with a token";
	return refuse(out, ERR_UNAUTHORIZED, "%s; this endpoint takes %s",
		      present ? "unknown credentials" : "missing credentials",
		      how);
}

/*
 * Credentials the database has matched, so a device's request needs no
 * statement to authenticate. Sound because a credential never changes
 * owner: no command or route rotates, revokes or deletes credentials or
 * apps (one that ever does must empty this). Only matches are kept; a
 * collision in the direct-mapped table just costs a read.
 */
#define KNOWN_SLOTS 1024

typedef struct known_credential {
	bool used;
	st_cred kind;
	uint8_t hash[ST_HASH_LEN];
	st_app app;
} known_credential;

static known_credential known[KNOWN_SLOTS];
static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;

static known_credential *known_slot(const uint8_t hash[ST_HASH_LEN])
{
	uint64_t h;
	memcpy(&h, hash, sizeof h);
	return &known[h % KNOWN_SLOTS];
}

static bool known_find(st_cred kind, const uint8_t hash[ST_HASH_LEN], st_app *out)
{
	pthread_mutex_lock(&known_lock);
	const known_credential *k = known_slot(hash);
	bool found = k->used && k->kind == kind &&
		     sodium_memcmp(k->hash, hash, ST_HASH_LEN) == 0;
	if (found)
		*out = k->app;
	pthread_mutex_unlock(&known_lock);
	return found;
}

static void known_add(st_cred kind, const uint8_t hash[ST_HASH_LEN], const st_app *app)
{
	pthread_mutex_lock(&known_lock);
	known_credential *k = known_slot(hash);
	k->used = true;
	k->kind = kind;
	memcpy(k->hash, hash, ST_HASH_LEN);
	k->app = *app;
	pthread_mutex_unlock(&known_lock);
}

struct owner_check {
	st_cred kind;
	uint8_t hash[ST_HASH_LEN];
	st_app app;
};

static int owner_check_tx(st_conn *c, void *cls)
{
	struct owner_check *a = cls;
	return st_app_by_credential(c, a->kind, a->hash, &a->app);
}

/* The app the request's credential belongs to and the credential's kind
 * (steps 1 and 2 of the order in auth.h). */
static bool owner(struct MHD_Connection *conn, unsigned allowed,
		  struct owner_check *a, srv_refusal *out)
{
	const char *token = credential(conn, allowed);
	if (!token || !token[0])
		return unauthorized(out, allowed, false);
	if (!srv_token_kind(token, &a->kind))
		return unauthorized(out, allowed, true);
	srv_token_hash(token, a->hash);
	if (!known_find(a->kind, a->hash, &a->app)) {
		int st = st_run_autocommit("auth", owner_check_tx, a);
		if (st < 0)
			return st == ST_SOFT_ERROR
				       ? refuse(out, ERR_DB_UNAVAILABLE, "%s",
						cm_err_message(ERR_DB_UNAVAILABLE))
				       : refuse(out, ERR_INTERNAL, "database error");
		if (st == 0)
			return unauthorized(out, allowed, true);
		/* The database matched the hash; confirm in constant time
		 * anyway so a collation or encoding surprise can never let a
		 * near miss in. */
		if (sodium_memcmp(a->app.hash[a->kind], a->hash, ST_HASH_LEN) != 0)
			return unauthorized(out, allowed, true);
		known_add(a->kind, a->hash, &a->app);
	}
	if (!(allowed & (1u << a->kind)))
		return refuse(out, ERR_FORBIDDEN,
			      "an %s cannot be used on this endpoint",
			      kind_names[a->kind]);
	return true;
}

bool srv_auth_app(struct MHD_Connection *conn, const char *bundle_id,
		  unsigned allowed, st_app *out_app, srv_refusal *out)
{
	struct owner_check a;
	if (!owner(conn, allowed, &a, out))
		return false;
	/* Bundle ids are compared as the database compares them (text,
	 * byte for byte); the answer must not depend on whether BUNDLE_ID
	 * exists, so no other app is looked up. */
	if (strcmp(a.app.bundle_id, bundle_id) != 0)
		return refuse(out, ERR_FORBIDDEN,
			      "these credentials belong to another app");
	*out_app = a.app;
	return true;
}

bool srv_auth_any(struct MHD_Connection *conn, unsigned allowed,
		  st_app *out_app, srv_refusal *out)
{
	struct owner_check a;
	if (!owner(conn, allowed, &a, out))
		return false;
	*out_app = a.app;
	return true;
}
