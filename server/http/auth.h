/*
 * auth.h — app credentials: making them, hashing them, and checking a
 * request's credentials against the app it asks about.
 *
 * Three kinds per app: the ingest key (devices; header X-Stallscope-Key;
 * ingest and sampling routes only), the upload token (release pipelines)
 * and the admin token (dashboard, API), both as Authorization: Bearer.
 * A credential is a kind prefix and 32 random bytes in unpadded URL-safe
 * base64 ("ssi_…", "ssu_…", "ssa_…"); only its BLAKE2b-256 hash is stored,
 * and hashes are compared in constant time.
 *
 * Checking order, decided from the headers alone (http.c runs it before
 * any body byte is read) and never depending on whether the app named in
 * the URL exists, so a credential (an ingest key ships inside every app)
 * cannot list the bundle ids a server hosts:
 *   1. no credential, or one that belongs to no app → 401 unauthorized;
 *   2. a credential of a kind the route does not take → 403 forbidden;
 *   3. a credential of another app than the URL names,
 *      existing or not                              → 403 forbidden,
 *      always the same message.
 * An unknown app is thus never told apart: only its own credentials could.
 *
 * Both checks remember the credentials the database matched: a credential
 * never changes owner, since nothing rotates, revokes or deletes
 * credentials or apps. Whatever adds that must empty the cache (auth.c).
 */
#ifndef STALLSCOPE_SERVER_AUTH_H
#define STALLSCOPE_SERVER_AUTH_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/errors.h"
#include "store/store.h"

/* Route credential bits. */
enum {
	SRV_AUTH_INGEST = 1u << ST_CRED_INGEST,
	SRV_AUTH_UPLOAD = 1u << ST_CRED_UPLOAD,
	SRV_AUTH_ADMIN = 1u << ST_CRED_ADMIN,
};

/* "ssu_" + 43 base64url characters + NUL. */
#define SRV_TOKEN_SIZE 48

/* Writes a fresh credential of KIND to OUT. Needs sodium_init(). */
void srv_token_generate(st_cred kind, char out[SRV_TOKEN_SIZE]);

/* The kind of TOKEN from its prefix and shape; false when malformed. */
bool srv_token_kind(const char *token, st_cred *out_kind);

/*
 * True for a bundle id as apps may have: 1 to ST_BUNDLE_ID_MAX letters,
 * digits, '.', '-', '_', starting with a letter or digit (the apps table
 * has the same CHECK).
 */
bool srv_bundle_id_valid(const char *id);

/* BLAKE2b-256 of the whole token string. */
void srv_token_hash(const char *token, uint8_t out[ST_HASH_LEN]);

/* Why credentials were refused: the error to reply and its message. */
typedef struct srv_refusal {
	cm_err err;
	char message[128];
} srv_refusal;

/*
 * Checks the request's credentials for the app BUNDLE_ID (ALLOWED: SRV_AUTH_*
 * bits) in the order above. True with *out_app filled; otherwise false with
 * *out the refusal (or 503/500 when the database failed). Queues nothing:
 * the caller chooses when the reply goes out.
 */
bool srv_auth_app(struct MHD_Connection *conn, const char *bundle_id,
		  unsigned allowed, st_app *out_app, srv_refusal *out);

/*
 * For routes without {app} (ingest, reports by id): the app is the one the
 * credential belongs to. As srv_auth_app, without step 3.
 */
bool srv_auth_any(struct MHD_Connection *conn, unsigned allowed,
		  st_app *out_app, srv_refusal *out);

#endif
