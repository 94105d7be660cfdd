/*
 * h_web_get.c — GET / and GET /web/{file}: the dashboard (web/), served
 * from the copy built into the binary (web_assets.h). The page holds no
 * data: it calls the JSON API with the admin token the user types in.
 *
 * Replies revalidate (no-cache plus an ETag of the content), so a new
 * binary's dashboard shows at the next load while an unchanged one costs
 * a 304. The content security policy allows only our own files: the
 * dashboard renders data from reports, which are untrusted input.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "server/api/ops/web_assets.h"

#define CSP                                                                                        \
	"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "          \
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

static const char *content_type(const char *name)
{
	const char *dot = strrchr(name, '.');
	if (dot && !strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (dot && !strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (dot && !strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	return "application/octet-stream";
}

/* If-None-Match as RFC 9110 §13.1.2 reads it: "*", or a list of tags
 * compared weakly (a proxy that compresses may have added W/). */
static bool etag_matches(const char *header, const char *etag)
{
	size_t etag_len = strlen(etag);
	const char *p = header;
	while (*p) {
		p += strspn(p, " \t,");
		size_t len = strcspn(p, ",");
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		const char *tag = p;
		if (len == 1 && tag[0] == '*')
			return true;
		if (len > 2 && !strncmp(tag, "W/", 2)) {
			tag += 2;
			len -= 2;
		}
		if (len == etag_len && !memcmp(tag, etag, len))
			return true;
		p += strcspn(p, ",");
	}
	return false;
}

static const srv_web_asset *find_asset(const char *name)
{
	for (size_t i = 0; i < srv_web_nassets; i++)
		if (!strcmp(srv_web_assets[i].name, name))
			return &srv_web_assets[i];
	return NULL;
}

enum MHD_Result srv_h_web_get(struct MHD_Connection *conn, srv_request *req)
{
	const char *file = srv_req_param(req, 0);
	/* index.html is the page at /, not a file of its own under /web/. */
	const srv_web_asset *asset = NULL;
	if (!file)
		asset = find_asset("index.html");
	else if (strcmp(file, "index.html") != 0)
		asset = find_asset(file);
	if (!asset)
		return srv_reply_error(conn, ERR_NOT_FOUND, "no such dashboard file");
	char etag[24];
	snprintf(etag, sizeof etag, "\"%016" PRIx64 "\"",
		 (uint64_t)XXH3_64bits(asset->data, asset->len));
	const char *headers[] = {MHD_HTTP_HEADER_CONTENT_TYPE,
				 content_type(asset->name),
				 MHD_HTTP_HEADER_ETAG,
				 etag,
				 MHD_HTTP_HEADER_CACHE_CONTROL,
				 "no-cache",
				 "Content-Security-Policy",
				 CSP,
				 "Referrer-Policy",
				 "no-referrer",
				 NULL};
	const char *seen =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
	if (seen && etag_matches(seen, etag))
		return srv_reply_static(conn, MHD_HTTP_NOT_MODIFIED, NULL, 0, headers);
	return srv_reply_static(conn, MHD_HTTP_OK, asset->data, asset->len, headers);
}
