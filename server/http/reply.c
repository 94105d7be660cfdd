/* reply.c — queueing replies; see reply.h. */
#include "server/http/reply.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/utf8.h"
#include "store/store.h"

static const srv_reply_hooks *hooks;

void srv_reply_set_hooks(const srv_reply_hooks *h)
{
	hooks = h;
}

static const char *request_id(struct MHD_Connection *conn)
{
	return hooks ? hooks->request_id(conn) : NULL;
}

static enum MHD_Result queue(struct MHD_Connection *conn, unsigned status,
			     struct MHD_Response *resp, size_t len)
{
	if (!resp)
		return MHD_NO;
	const char *id = request_id(conn);
	if (id)
		MHD_add_response_header(resp, "X-Request-Id", id);
	/* A browser guessing HTML in a JSON body that quotes client input
	 * would run it: every reply is read as the type it says it is. */
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (hooks)
		hooks->queued(conn, status, len);
	enum MHD_Result r = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return r;
}

/* Queues BODY (malloc'ed, stolen) with an optional extra header. */
static enum MHD_Result reply_buffer(struct MHD_Connection *conn,
				    unsigned status, const char *content_type,
				    char *body, size_t len,
				    const char *header, const char *value)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				content_type);
	if (header)
		MHD_add_response_header(resp, header, value);
	return queue(conn, status, resp, len);
}

enum MHD_Result srv_reply_text(struct MHD_Connection *conn, unsigned status,
			       const char *content_type, char *body,
			       size_t len)
{
	return reply_buffer(conn, status, content_type, body, len, NULL, NULL);
}

enum MHD_Result srv_reply_static(struct MHD_Connection *conn, unsigned status, const void *body,
				 size_t len, const char *const *headers)
{
	/* libmicrohttpd takes a non-const pointer but, persistent, never
	 * writes through it or frees it. */
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body,
								    MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	for (size_t i = 0; headers && headers[i]; i += 2)
		MHD_add_response_header(resp, headers[i], headers[i + 1]);
	return queue(conn, status, resp, len);
}

static enum MHD_Result reply_json_header(struct MHD_Connection *conn,
					 unsigned status, json_t *body,
					 const char *header, const char *value)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (!text) {
		cm_log(CM_BUG, "reply: cannot serialize a %u reply", status);
		static const char fallback[] =
			"{\"error\":{\"code\":\"internal\",\"message\":"
			"\"internal error\"}}";
		text = strdup(fallback);
		if (!text)
			return MHD_NO;
		status = 500;
		header = NULL;
	}
	return reply_buffer(conn, status, "application/json", text,
			    strlen(text), header, value);
}

enum MHD_Result srv_reply_json(struct MHD_Connection *conn, unsigned status,
			       json_t *body)
{
	return reply_json_header(conn, status, body, NULL, NULL);
}

static json_t *error_body(cm_err code, const char *message)
{
	return json_pack("{s:{s:s,s:s}}", "error", "code", cm_err_code(code),
			 "message", message);
}

/* HEADER/VALUE: an extra header, or NULL. */
static enum MHD_Result reply_error_v(struct MHD_Connection *conn,
				     cm_err code, const char *header,
				     const char *value, const char *fmt,
				     va_list ap)
{
	char raw[512];
	if (fmt)
		vsnprintf(raw, sizeof raw, fmt, ap);
	else
		snprintf(raw, sizeof raw, "%s", cm_err_message(code));
	/*
	 * Messages quote client input (paths, names): JSON needs valid UTF-8
	 * and the log one line per record, so both get a cleaned copy.
	 */
	char message[sizeof raw], logged[sizeof raw];
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)raw; *p;) {
		size_t len = cm_utf8_len(p);
		if (len == 0) {
			message[n] = logged[n] = '?';
			n++;
			p++;
			continue;
		}
		for (size_t i = 0; i < len; i++, n++, p++) {
			message[n] = (char)*p;
			logged[n] = *p < ' ' ? '?' : (char)*p;
		}
	}
	message[n] = logged[n] = '\0';
	unsigned status = cm_err_status(code);
	const char *id = request_id(conn);
	/* A coding we do not implement is the client's choice, not our fault. */
	bool fault = status >= 500 && code != ERR_NOT_IMPLEMENTED;
	cm_log(fault ? CM_ERROR : CM_CLIENT, "%s %u %s: %s", id ? id : "-", status,
	       cm_err_code(code), logged);
	/* What broke on our side names our files and errno: the log keeps
	 * it under the request id the client has, the client gets the code. */
	bool ours = code == ERR_INTERNAL || code == ERR_STORAGE || code == ERR_INSUFFICIENT_STORAGE;
	return reply_json_header(conn, status,
				 error_body(code, ours ? cm_err_message(code) : message), header,
				 value);
}

enum MHD_Result srv_reply_error(struct MHD_Connection *conn, cm_err code,
				const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	enum MHD_Result r = reply_error_v(conn, code, NULL, NULL, fmt, ap);
	va_end(ap);
	return r;
}

enum MHD_Result srv_reply_error_close(struct MHD_Connection *conn,
				      cm_err code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* libmicrohttpd closes the connection after a reply saying so. */
	enum MHD_Result r = reply_error_v(conn, code,
					  MHD_HTTP_HEADER_CONNECTION, "close",
					  fmt, ap);
	va_end(ap);
	return r;
}

enum MHD_Result srv_reply_method_not_allowed(struct MHD_Connection *conn,
					     const char *allow)
{
	return reply_json_header(
		conn, cm_err_status(ERR_METHOD_NOT_ALLOWED),
		error_body(ERR_METHOD_NOT_ALLOWED,
			   cm_err_message(ERR_METHOD_NOT_ALLOWED)),
		MHD_HTTP_HEADER_ALLOW, allow);
}

enum MHD_Result srv_reply_store_error(struct MHD_Connection *conn, int st_rc)
{
	if (st_rc == ST_SOFT_ERROR)
		return srv_reply_error(conn, ERR_DB_UNAVAILABLE, NULL);
	return srv_reply_error(conn, ERR_INTERNAL, "database error");
}

enum MHD_Result srv_reply_empty(struct MHD_Connection *conn, unsigned status)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	return queue(conn, status, resp, 0);
}

enum MHD_Result srv_reply_read(struct MHD_Connection *conn, int rc, char *json, const char *what,
			       const char *key)
{
	json_t *body = rc > 0 && json ? json_loads(json, 0, NULL) : NULL;
	free(json);
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	if (rc == 0)
		return srv_reply_error(conn, ERR_NOT_FOUND, "no %s %.64s", what, key);
	return srv_reply_json(conn, 200, body);
}
