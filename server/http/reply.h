/*
 * reply.h — queueing replies: JSON bodies, the error registry's
 * {"error":{"code","message"}}, empty and text replies.
 *
 * Every function queues one response on CONN and returns what the access
 * handler must return: MHD_YES, or MHD_NO only when libmicrohttpd could not
 * take the response (the connection is then dropped). Client errors are
 * replies like any other, never MHD_NO. Each reply carries X-Request-Id and
 * X-Content-Type-Options: nosniff.
 */
#ifndef STALLSCOPE_SERVER_REPLY_H
#define STALLSCOPE_SERVER_REPLY_H

#include <jansson.h>
#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "common/errors.h"

/*
 * What replies tell whoever serves the connection, without knowing what it
 * is: the request id a reply carries in X-Request-Id (NULL: none), and each
 * reply queued (STATUS, LEN bytes of body), for the access log. The server
 * installs them (http.c) before its first connection; they are borrowed for
 * the life of the process. Without them replies carry no id.
 */
typedef struct srv_reply_hooks {
	const char *(*request_id)(struct MHD_Connection *conn);
	void (*queued)(struct MHD_Connection *conn, unsigned status, uint64_t len);
} srv_reply_hooks;

void srv_reply_set_hooks(const srv_reply_hooks *hooks);

/* Replies STATUS with BODY serialized; steals BODY (NULL → 500). */
enum MHD_Result srv_reply_json(struct MHD_Connection *conn, unsigned status,
			       json_t *body);

/*
 * The reply of a read whose store call answered RC with the reply's JSON
 * text JSON (malloc'ed, NULL when none; freed here): RC < 0 the store's
 * error, 0 a 404 "no WHAT KEY", else 200 with the text's value.
 */
enum MHD_Result srv_reply_read(struct MHD_Connection *conn, int rc, char *json, const char *what,
			       const char *key);

/*
 * Replies with CODE's status and {"error":{"code","message"}}; the message
 * is FMT formatted, or the registry's default when FMT is NULL. 4xx replies
 * (and 501) are logged as client trouble, other 5xx as ours. ERR_INTERNAL and ERR_STORAGE
 * (which name our files, errno, the database) send the registry's message
 * and only log FMT's.
 */
enum MHD_Result srv_reply_error(struct MHD_Connection *conn, cm_err code,
				const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* As srv_reply_error, then closes the connection: after a request whose
 * framing is ambiguous, no byte that follows can be trusted to start the
 * next request. */
enum MHD_Result srv_reply_error_close(struct MHD_Connection *conn,
				      cm_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* 405 with an Allow header listing ALLOW ("GET, DELETE"). */
enum MHD_Result srv_reply_method_not_allowed(struct MHD_Connection *conn,
					     const char *allow);

/* The reply to a failed store call: ST_SOFT_ERROR → 503
 * database_unavailable, anything else → 500 internal. */
enum MHD_Result srv_reply_store_error(struct MHD_Connection *conn, int st_rc);

/* STATUS without a body (204). */
enum MHD_Result srv_reply_empty(struct MHD_Connection *conn, unsigned status);

/* STATUS with LEN bytes of BODY (malloc'ed, stolen) as CONTENT_TYPE. */
enum MHD_Result srv_reply_text(struct MHD_Connection *conn, unsigned status,
			       const char *content_type, char *body,
			       size_t len);

/* STATUS with LEN bytes of BODY, static data that outlives the reply (a
 * 304 passes NULL and 0), and HEADERS: name, value, …, NULL. */
enum MHD_Result srv_reply_static(struct MHD_Connection *conn, unsigned status, const void *body,
				 size_t len, const char *const *headers);

/*
 * Helpers that may fail on the client's behalf return one of these: the
 * caller continues on SRV_OK and otherwise returns srv_rc_mhd(rc) at once,
 * the reply having been queued already.
 */
typedef enum srv_rc {
	SRV_OK = 1,
	SRV_REPLIED = 0, /* an error reply is queued */
	SRV_FAILED = -1, /* not even a reply could be queued */
} srv_rc;

static inline enum MHD_Result srv_rc_mhd(srv_rc rc)
{
	return rc == SRV_FAILED ? MHD_NO : MHD_YES;
}

/* Maps what a reply function returned to a srv_rc for a failed helper. */
static inline srv_rc srv_replied(enum MHD_Result r)
{
	return r == MHD_YES ? SRV_REPLIED : SRV_FAILED;
}

#endif
