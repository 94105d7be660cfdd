/* pages.c — see pages.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/http/pages.h"

const char *srv_query(struct MHD_Connection *conn, const char *name)
{
	return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
}

static bool parse_int64(const char *text, int64_t *out)
{
	if (!text || !*text || ((text[0] < '0' || text[0] > '9') && text[0] != '-'))
		return false;
	errno = 0;
	char *end;
	long long v = strtoll(text, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

srv_rc srv_query_limit(struct MHD_Connection *conn, int64_t def, int64_t max, int64_t *out)
{
	const char *text = srv_query(conn, "limit");
	*out = def;
	if (!text)
		return SRV_OK;
	if (!parse_int64(text, out) || *out < 1 || *out > max)
		return srv_replied(srv_reply_error(conn, ERR_BAD_QUERY,
						   "limit: expected 1 to %lld", (long long)max));
	return SRV_OK;
}

bool srv_cursor_parse(const char *text, bool key_hex, int64_t *value, char *key, size_t keycap)
{
	const char *dot = text ? strrchr(text, '.') : NULL;
	if (!dot)
		return false;
	char num[24];
	size_t n = (size_t)(dot - text);
	if (n == 0 || n >= sizeof num)
		return false;
	memcpy(num, text, n);
	num[n] = '\0';
	if (!parse_int64(num, value))
		return false;
	size_t k = strlen(dot + 1);
	if (k == 0 || k > 64 || k >= keycap)
		return false;
	for (const char *p = dot + 1; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (key_hex && *p >= 'a' && *p <= 'f')))
			return false;
	memcpy(key, dot + 1, k + 1);
	return true;
}

bool srv_day_valid(const char *text)
{
	int y, m, d;
	char tail;
	if (!text || strlen(text) != 10 ||
	    sscanf(text, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || text[4] != '-' ||
	    text[7] != '-' || y < 1970 || y > 9999 || m < 1 || m > 12 || d < 1)
		return false;
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int max = days[m - 1] + (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
	return d <= max;
}

json_t *srv_page_json(const char *name, char *page_json, int64_t limit)
{
	json_t *items = page_json ? json_loads(page_json, 0, NULL) : json_array();
	free(page_json);
	if (!json_is_array(items)) {
		json_decref(items);
		return NULL;
	}
	json_t *next = json_null();
	if ((int64_t)json_array_size(items) > limit) {
		json_t *last = json_array_get(items, (size_t)limit - 1);
		json_decref(next);
		next = json_incref(json_object_get(last, "cursor"));
		while ((int64_t)json_array_size(items) > limit)
			json_array_remove(items, json_array_size(items) - 1);
	}
	size_t i;
	json_t *item;
	json_array_foreach(items, i, item)
		json_object_del(item, "cursor");
	return json_pack("{s:o,s:o}", name, items, "next_cursor", next ? next : json_null());
}

enum MHD_Result srv_reply_page(struct MHD_Connection *conn, const char *name, char *page_json,
			       int64_t limit)
{
	json_t *body = srv_page_json(name, page_json, limit);
	if (!body)
		return srv_reply_error(conn, ERR_INTERNAL, NULL);
	return srv_reply_json(conn, 200, body);
}
