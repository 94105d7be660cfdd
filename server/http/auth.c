/* auth.c — credentials; see auth.h for the formats and the checking order. */
#include "server/http/auth.h"

#include <pthread.h>
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

static srv_rc unauthorized(struct MHD_Connection *conn, unsigned allowed,
			   bool present)
{
	const char *how = (allowed & SRV_AUTH_INGEST)
				  ? "an X-Stallscope-Key header"
				  : "Authorization: Bearer with a token";
	return srv_replied(srv_reply_error(
		conn, ERR_UNAUTHORIZED, "%s; this endpoint takes %s",
		present ? "unknown credentials" : "missing credentials", how));
}

static srv_rc wrong_kind(struct MHD_Connection *conn, st_cred kind)
{
	return srv_replied(srv_reply_error(conn, ERR_FORBIDDEN,
					   "an %s cannot be used on this "
					   "endpoint",
					   kind_names[kind]));
}

/* Reads and hashes the credential; SRV_OK or a 401 reply. */
static srv_rc read_credential(struct MHD_Connection *conn, unsigned allowed,
			      st_cred *out_kind, uint8_t hash[ST_HASH_LEN])
{
	const char *token = credential(conn, allowed);
	if (!token || !token[0])
		return unauthorized(conn, allowed, false);
	if (!srv_token_kind(token, out_kind))
		return unauthorized(conn, allowed, true);
	srv_token_hash(token, hash);
	return SRV_OK;
}

struct app_check {
	const char *bundle_id;
	st_cred kind;
	uint8_t hash[ST_HASH_LEN];
	st_app app, owner;
	bool app_found, matched, owner_found;
};

static int app_check_tx(st_conn *c, void *cls)
{
	struct app_check *a = cls;
	a->app_found = a->matched = a->owner_found = false;
	/* A name no app can have (bytes the database would refuse as text,
	 * say) is simply an unknown app. */
	int rc = srv_bundle_id_valid(a->bundle_id)
			 ? st_app_by_bundle(c, a->bundle_id, &a->app)
			 : 0;
	if (rc < 0)
		return rc;
	a->app_found = rc == 1;
	if (a->app_found &&
	    sodium_memcmp(a->app.hash[a->kind], a->hash, ST_HASH_LEN) == 0) {
		a->matched = true;
		return 1;
	}
	/* Only to choose between 401 and 403/404. */
	rc = st_app_by_credential(c, a->kind, a->hash, &a->owner);
	if (rc < 0)
		return rc;
	a->owner_found = rc == 1;
	return 1;
}

srv_rc srv_auth_app(struct MHD_Connection *conn, const char *bundle_id,
		    unsigned allowed, st_app *out_app)
{
	struct app_check a = {.bundle_id = bundle_id};
	srv_rc rc = read_credential(conn, allowed, &a.kind, a.hash);
	if (rc != SRV_OK)
		return rc;
	int st = st_run_autocommit("auth_app", app_check_tx, &a);
	if (st < 0)
		return srv_replied(srv_reply_store_error(conn, st));
	if (!a.matched && !a.owner_found)
		return unauthorized(conn, allowed, true);
	if (!a.app_found)
		return srv_replied(srv_reply_error(conn, ERR_UNKNOWN_APP,
						   "no app %s", bundle_id));
	if (!a.matched)
		return srv_replied(srv_reply_error(
			conn, ERR_FORBIDDEN,
			"these credentials belong to another app"));
	if (!(allowed & (1u << a.kind)))
		return wrong_kind(conn, a.kind);
	*out_app = a.app;
	return SRV_OK;
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

struct any_check {
	st_cred kind;
	uint8_t hash[ST_HASH_LEN];
	st_app app;
};

static int any_check_tx(st_conn *c, void *cls)
{
	struct any_check *a = cls;
	return st_app_by_credential(c, a->kind, a->hash, &a->app);
}

srv_rc srv_auth_any(struct MHD_Connection *conn, unsigned allowed,
		    st_app *out_app)
{
	struct any_check a;
	srv_rc rc = read_credential(conn, allowed, &a.kind, a.hash);
	if (rc != SRV_OK)
		return rc;
	if (!known_find(a.kind, a.hash, &a.app)) {
		int st = st_run_autocommit("auth_any", any_check_tx, &a);
		if (st < 0)
			return srv_replied(srv_reply_store_error(conn, st));
		if (st == 0)
			return unauthorized(conn, allowed, true);
		/* The database matched the hash; confirm in constant time
		 * anyway so a collation or encoding surprise can never let a
		 * near miss in. */
		if (sodium_memcmp(a.app.hash[a.kind], a.hash, ST_HASH_LEN) != 0)
			return unauthorized(conn, allowed, true);
		known_add(a.kind, a.hash, &a.app);
	}
	if (!(allowed & (1u << a.kind)))
		return wrong_kind(conn, a.kind);
	*out_app = a.app;
	return SRV_OK;
}
