/*
 * measures_reply.h — what GET …/startup and GET …/frames share (SPEC §13):
 * the day range's default (/stats's too) and the read of the Android measures'
 * aggregates (store/measures.h), which are written at ingest and never
 * wait for the fold, so no as_of.
 *
 * Memory: F's strings are the request's (they live as long as it does).
 */
#ifndef STALLSCOPE_SERVER_MEASURES_REPLY_H
#define STALLSCOPE_SERVER_MEASURES_REPLY_H

#include <microhttpd.h>

#include "ingest/sampling.h"
#include "server/http/http.h"
#include "store/measures.h"

/* The start of a stats route's day range, read on C: *FROM when given,
 * else the oldest day APP_ID's retention keeps, written into BUF and
 * *FROM pointed at it. 0, or a negative st_status. */
int srv_days_from(st_conn *c, int64_t app_id, const char **from, char buf[ING_DAY_LEN]);

/* A store read of the measures: st_startup_read or st_frames_read. */
typedef int (*srv_measures_read)(st_conn *c, int64_t app_id, const st_measures_filter *f,
				 char **out_json);

/*
 * Replies 200 with READ's JSON for REQ's app under F, NAME labelling the
 * transaction. Without F->from the range starts at the oldest day the
 * app's retention keeps, as for /stats. On the read replica when one is set
 * up (the aggregates reach it as every row does), else or when that fails
 * on the primary.
 */
enum MHD_Result srv_measures_reply(struct MHD_Connection *conn, srv_request *req, const char *name,
				   srv_measures_read read, const st_measures_filter *f);

#endif
