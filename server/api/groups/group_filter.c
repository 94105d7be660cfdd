/* group_filter.c — see group_filter.h. */
#include <string.h>

#include "ingest/report.h"
#include "server/api/groups/group_filter.h"
#include "server/http/pages.h"

srv_rc srv_day_range_parse(struct MHD_Connection *conn, const char **out_from, const char **out_to)
{
	*out_from = srv_query(conn, "from");
	*out_to = srv_query(conn, "to");
	bool from_ok = !*out_from || srv_day_valid(*out_from);
	if (!from_ok || (*out_to && !srv_day_valid(*out_to)))
		return srv_replied(srv_reply_error(conn, ERR_BAD_QUERY,
						   "%s: expected a day YYYY-MM-DD",
						   from_ok ? "to" : "from"));
	return SRV_OK;
}

srv_rc srv_group_filter_parse(struct MHD_Connection *conn, st_group_filter *out)
{
	memset(out, 0, sizeof *out);
	srv_rc rc = srv_day_range_parse(conn, &out->from, &out->to);
	if (rc != SRV_OK)
		return rc;
	out->version = srv_query(conn, "version");
	out->os_version = srv_query(conn, "os_version");
	out->device = srv_query(conn, "device");
	out->kind = srv_query(conn, "kind");
	if (out->kind && !ing_kind_parse(out->kind, NULL))
		return srv_replied(srv_reply_error(
			conn, ERR_BAD_QUERY,
			"kind: expected stall, hang, cpu or crash (iOS), or slow_method, anr, lag, "
			"slow_startup or thread_policy (Android)"));
	return SRV_OK;
}

srv_rc srv_group_page_parse(struct MHD_Connection *conn, st_group_filter *out, int64_t *out_limit)
{
	srv_rc rc = srv_group_filter_parse(conn, out);
	return rc != SRV_OK ? rc : srv_query_limit(conn, 50, 500, out_limit);
}
