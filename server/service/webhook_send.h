/*
 * webhook_send.h — one outgoing webhook POST (SPEC §11.2): checking the URL
 * a user submits, signing the body, and sending it so that it reaches only
 * public addresses (the address is checked when curl connects, after DNS,
 * so a rebinding name cannot point a delivery at the server's own network).
 * The outbox, retries and the deliveries log are the caller's.
 *
 * Memory: nothing here allocates anything the caller frees. Every string a
 * request points to stays the caller's and needs to live only for the call;
 * results are written into caller-owned fixed-size buffers.
 */
#ifndef STALLSCOPE_SERVER_WEBHOOK_SEND_H
#define STALLSCOPE_SERVER_WEBHOOK_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Longest URL srv_webhook_url_check accepts, in bytes. */
#define SRV_WEBHOOK_URL_MAX 2048

/*
 * Once per process, before any thread sends: libcurl's global state is not
 * safe to set up from several threads at once. Returns 0, or -1.
 */
int srv_webhook_global_init(void);

/* After the last send has returned, once per successful global_init. */
void srv_webhook_global_cleanup(void);

/*
 * Checks a webhook URL a user submits: absolute, scheme http or https, a
 * host, no userinfo (user:pass@), at most SRV_WEBHOOK_URL_MAX bytes, parsed
 * by libcurl's URL API so it accepts what the sender will. Returns 0, or -1
 * with a one-line reason in ERR (ERRLEN bytes, may be 0) that does not
 * quote the URL. Whether the host is public is known only at send time.
 */
int srv_webhook_url_check(const char *url, char *err, size_t errlen);

/* "sha256=" + 64 hex digits + NUL. */
#define SRV_WEBHOOK_SIGNATURE_LEN (7 + 64 + 1)

/*
 * "sha256=" + lowercase hex HMAC-SHA256(SECRET, BODY[0..LEN)) into OUT, the
 * value of X-Stallscope-Signature. A secret of any length (longer than 64
 * bytes is hashed first, as RFC 2104 says); NULL is the empty secret, and
 * BODY may be NULL when LEN is 0.
 */
void srv_webhook_signature(const char *secret, const char *body, size_t len,
			   char out[SRV_WEBHOOK_SIGNATURE_LEN]);

/*
 * True when ADDR is not a public unicast destination: IPv4 0/8, 10/8,
 * 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24, 192.168/16,
 * 198.18/15, 224/4 and above; IPv6 ::, ::1, fe80::/10, fec0::/10
 * (deprecated site-local), fc00::/7, ff00::/8, local-use NAT64
 * 64:ff9b:1::/48; IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96,
 * IPv4-translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96 and 6to4 2002::/16 by
 * the IPv4 address they embed. Any other family, and NULL, is refused. For
 * AF_INET6 ADDR must point to a whole sockaddr_in6.
 */
bool srv_webhook_address_refused(const struct sockaddr *addr);

typedef struct srv_webhook_request {
	const char *url;	/* checked again with srv_webhook_url_check */
	const char *secret;	/* signs the body; never logged nor reported */
	const char *event_id;	/* sent as X-Stallscope-Event-Id */
	const char *event_type; /* sent as X-Stallscope-Event */
	const char *body;	/* JSON, BODY_LEN bytes; never logged */
	size_t body_len;
	bool allow_private; /* STALLSCOPE_WEBHOOK_ALLOW_PRIVATE=1 */
	long timeout_ms;    /* the whole transfer; <= 0 means 10000 */
} srv_webhook_request;

typedef struct srv_webhook_result {
	long status;	 /* the final HTTP status received, 0 when none */
	bool delivered;	 /* a 2xx status arrived */
	char error[256]; /* "" when delivered, else one printable line */
} srv_webhook_result;

/*
 * POSTs REQ's body with Content-Type: application/json, User-Agent:
 * stallscope-webhook/1, X-Stallscope-Signature, X-Stallscope-Event and
 * X-Stallscope-Event-Id, and fills OUT. Blocks up to REQ->timeout_ms.
 * Nothing is sent, and OUT->error is "invalid URL: <why>" or "invalid
 * request", when the URL fails srv_webhook_url_check, or the event id or
 * type is not 1 to 128 printable ASCII characters (a line break would add
 * a header), or BODY is NULL with a BODY_LEN.
 *
 * Delivered means a 2xx status arrived, even if reading the rest of the
 * response then failed or was cut short: the receiver has accepted the
 * event, and it deduplicates by event id anyway. Otherwise OUT->error says
 * why, e.g. "HTTP 500: <start of the response body>", "redirect not
 * followed (HTTP 302)", "refused: 10.0.0.7 is not a public address",
 * "timeout", or libcurl's message; it never contains the secret or the
 * request body. Redirects are not followed, no proxy is used, the response
 * is read up to 64 KiB, and no connection is reused, so every send
 * resolves the name again and checks the address it connects to.
 *
 * Thread-safe after srv_webhook_global_init (a libcurl handle per call).
 */
void srv_webhook_send(const srv_webhook_request *req, srv_webhook_result *out);

#endif
