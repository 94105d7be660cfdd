/*
 * pages.h — what the paginated read endpoints share: query parameters
 * (limit, cursor, days) and turning a store page (items carrying a
 * "cursor" member, one more than the limit when there is a next page)
 * into {"<name>":[…],"next_cursor"}.
 */
#ifndef STALLSCOPE_SERVER_PAGES_H
#define STALLSCOPE_SERVER_PAGES_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/http/reply.h"

/* The query parameter NAME of CONN, or NULL. */
const char *srv_query(struct MHD_Connection *conn, const char *name);

/* limit=: DEF when absent; SRV_OK, or a 400 naming it is queued. */
srv_rc srv_query_limit(struct MHD_Connection *conn, int64_t def, int64_t max,
		       int64_t *out);

/* A cursor "V.KEY": V a decimal int64, KEY 1…64 characters of [0-9a-f]
 * (KEY_HEX) or digits (otherwise). False when malformed. */
bool srv_cursor_parse(const char *text, bool key_hex, int64_t *value, char *key,
		      size_t keycap);

/* True for a real calendar day "YYYY-MM-DD". */
bool srv_day_valid(const char *text);

/*
 * Replies 200 with {NAME: the first LIMIT items of PAGE_JSON (their
 * "cursor" members removed), "next_cursor": the LIMIT-th item's cursor
 * when PAGE_JSON holds more than LIMIT, else null}. Takes PAGE_JSON.
 */
enum MHD_Result srv_reply_page(struct MHD_Connection *conn, const char *name,
			       char *page_json, int64_t limit);

/* srv_reply_page's body, for a reply with more members: NULL when
 * PAGE_JSON is not an array (or out of memory). Takes PAGE_JSON. */
json_t *srv_page_json(const char *name, char *page_json, int64_t limit);

#endif
