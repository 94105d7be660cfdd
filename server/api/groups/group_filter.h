/*
 * group_filter.h — the query filters the group routes share (the list, a
 * group's detail and its reports) and the day range the dimensions route
 * takes: one parser, so the three group routes accept and refuse the same.
 */
#ifndef STALLSCOPE_SERVER_GROUP_FILTER_H
#define STALLSCOPE_SERVER_GROUP_FILTER_H

#include <microhttpd.h>

#include "server/http/reply.h"
#include "store/groups.h"

/*
 * from= and to= of CONN, each a UTC day YYYY-MM-DD, into *OUT_FROM and
 * *OUT_TO (NULL when absent; they point into CONN's arguments and live as
 * long as the request). SRV_OK, or a 400 bad_query naming the bad one is
 * queued.
 */
srv_rc srv_day_range_parse(struct MHD_Connection *conn, const char **out_from, const char **out_to);

/*
 * The day range and version=, os_version=, device=, kind= of CONN into
 * *OUT (same lifetime as above; an empty value filters on reports without
 * that field). SRV_OK, or a 400 bad_query naming the bad one is queued.
 */
srv_rc srv_group_filter_parse(struct MHD_Connection *conn, st_group_filter *out);

/*
 * A page of a group list or of a group's reports: the filters above into
 * *OUT and limit= (50 by default, at most 500) into *OUT_LIMIT. SRV_OK, or
 * a 400 bad_query naming the bad one is queued.
 */
srv_rc srv_group_page_parse(struct MHD_Connection *conn, st_group_filter *out, int64_t *out_limit);

#endif
