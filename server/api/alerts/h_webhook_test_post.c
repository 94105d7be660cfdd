/*
 * h_webhook_test_post.c — POST /api/v1/apps/{app}/webhooks/{name}/test
 * (admin token): sends a "test" event to the webhook at once, as an alert
 * would go (signed, checked, same timeout), logs the attempt with its
 * deliveries, and answers {"delivered","status","error"?}:
 * 200 whether or not the receiver took it, 404 when there is no such
 * webhook.
 */
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "server/service/alert_delivery.h"

enum MHD_Result srv_h_webhook_test_post(struct MHD_Connection *conn, srv_request *req)
{
	const char *name = srv_req_param(req, 1);
	srv_webhook_result res;
	int rc = srv_alert_test_send(srv_req_config(req), srv_req_app(req)->id, name, &res);
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	if (rc == 0)
		return srv_reply_error(conn, ERR_NOT_FOUND, "no webhook %.64s", name);
	json_t *reply = json_pack("{s:b, s:I}", "delivered", res.delivered, "status",
				  (json_int_t)res.status);
	if (reply && !res.delivered)
		json_object_set_new(reply, "error", json_string(res.error));
	return srv_reply_json(conn, 200, reply);
}
