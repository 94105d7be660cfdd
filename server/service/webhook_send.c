/* webhook_send.c — one outgoing webhook POST with libcurl; see webhook_send.h. */
#include "server/service/webhook_send.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The start of a refused response kept to quote in the error. */
#define BODY_KEEP 512
/* Response bytes (headers and body apart) read before giving up on it. */
#define RESPONSE_MAX (64 * 1024)
/* Longest event id or type: both are ours, short, and become header lines. */
#define HEADER_VALUE_MAX   128
#define DEFAULT_TIMEOUT_MS 10000L

typedef struct send_ctx {
	bool allow_private;
	char refused[INET6_ADDRSTRLEN]; /* the last address refused, "" if none */
	char head[BODY_KEEP];		/* the body's first bytes, not NUL-ended */
	size_t head_len;
	size_t body_bytes, header_bytes;
	bool too_large;
} send_ctx;

int srv_webhook_global_init(void)
{
	if (sodium_init() < 0)
		return -1;
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void srv_webhook_global_cleanup(void)
{
	curl_global_cleanup();
}

static void set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
}

int srv_webhook_url_check(const char *url, char *err, size_t errlen)
{
	if (!url || !*url) {
		set_err(err, errlen, "the URL is empty");
		return -1;
	}
	if (strlen(url) > SRV_WEBHOOK_URL_MAX) {
		set_err(err, errlen, "the URL is longer than 2048 bytes");
		return -1;
	}
	CURLU *u = curl_url();
	if (!u) {
		set_err(err, errlen, "out of memory");
		return -1;
	}
	int rc = -1;
	char *scheme = NULL, *host = NULL, *part = NULL;
	/* Any scheme parses, so that ftp:// gets the message below rather than
	 * whatever this libcurl build thinks of it. */
	CURLUcode uc = curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME);
	if (uc != CURLUE_OK) {
		if (err && errlen)
			snprintf(err, errlen, "not a valid absolute URL (%s)",
				 curl_url_strerror(uc));
		goto done;
	}
	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		set_err(err, errlen, "only http and https URLs are allowed");
		goto done;
	}
	/* libcurl also takes "http:/host" and "http:///host"; what the user
	 * sees listed should name its host the one way. */
	const char *colon = strchr(url, ':');
	if (!colon || strncmp(colon, "://", 3) != 0 || colon[3] == '/') {
		set_err(err, errlen, "not an absolute URL (scheme://host/...)");
		goto done;
	}
	/* Credentials in the URL would be stored and shown with it, and end up
	 * in error messages; the secret is how a receiver authenticates us. */
	static const CURLUPart cred[] = {CURLUPART_USER, CURLUPART_PASSWORD, CURLUPART_OPTIONS};
	for (size_t i = 0; i < sizeof cred / sizeof cred[0]; i++) {
		if (curl_url_get(u, cred[i], &part, 0) == CURLUE_OK) {
			set_err(err, errlen, "the URL must not contain a user name or password");
			goto done;
		}
	}
	if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host) {
		set_err(err, errlen, "the URL has no host");
		goto done;
	}
	rc = 0;
done:
	curl_free(scheme);
	curl_free(host);
	curl_free(part);
	curl_url_cleanup(u);
	return rc;
}

void srv_webhook_signature(const char *secret, const char *body, size_t len,
			   char out[SRV_WEBHOOK_SIGNATURE_LEN])
{
	crypto_auth_hmacsha256_state st;
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	if (!secret)
		secret = "";
	/* The init/update/final API takes a key of any length; the one-shot
	 * crypto_auth_hmacsha256 wants exactly 32 bytes. */
	crypto_auth_hmacsha256_init(&st, (const unsigned char *)secret, strlen(secret));
	if (len)
		crypto_auth_hmacsha256_update(&st, (const unsigned char *)body, len);
	crypto_auth_hmacsha256_final(&st, mac);
	/* The state holds the key's pads: what would sign anything else. */
	sodium_memzero(&st, sizeof st);
	memcpy(out, "sha256=", 7);
	sodium_bin2hex(out + 7, SRV_WEBHOOK_SIGNATURE_LEN - 7, mac, sizeof mac);
}

static uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A is in host byte order. */
static bool v4_refused(uint32_t a)
{
	static const struct {
		uint32_t net;
		unsigned bits;
	} ranges[] = {
		{0x00000000u, 8},  /* "this network": Linux connects 0.0.0.0 to itself */
		{0x0a000000u, 8},  /* private */
		{0x64400000u, 10}, /* carrier-grade NAT: the provider's inside */
		{0x7f000000u, 8},  /* loopback */
		{0xa9fe0000u, 16}, /* link-local, where cloud metadata services answer */
		{0xac100000u, 12}, /* private */
		{0xc0000000u, 24}, /* IETF protocol assignments, not routed */
		{0xc0a80000u, 16}, /* private */
		{0xc6120000u, 15}, /* benchmarking networks, lab-internal */
		{0xe0000000u, 3},  /* multicast, reserved 240/4, broadcast */
	};
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
		uint32_t mask = ~0u << (32 - ranges[i].bits);
		if ((a & mask) == ranges[i].net)
			return true;
	}
	return false;
}

static bool v6_refused(const uint8_t b[16])
{
	/* Prefixes whose last 32 bits are an IPv4 address that the kernel or
	 * a translator will end up talking to: judge that address instead. */
	static const uint8_t embeds[][12] = {
		{0},						  /* compatible, ::, ::1 */
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff},	  /* mapped */
		{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0},	  /* translated */
		{0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0}, /* NAT64 */
	};
	for (size_t i = 0; i < sizeof embeds / sizeof embeds[0]; i++)
		if (memcmp(b, embeds[i], 12) == 0)
			return v4_refused(load_be32(b + 12));
	/* 6to4 routes to its embedded IPv4 address through a relay. */
	if (b[0] == 0x20 && b[1] == 0x02)
		return v4_refused(load_be32(b + 2));
	/* NAT64 for local use (64:ff9b:1::/48) reaches the operator's inside. */
	if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1)
		return true;
	if (b[0] == 0xff) /* multicast */
		return true;
	if ((b[0] & 0xfe) == 0xfc) /* unique local fc00::/7 */
		return true;
	/* Link-local fe80::/10 and the deprecated site-local fec0::/10. */
	return b[0] == 0xfe && (b[1] & 0x80);
}

bool srv_webhook_address_refused(const struct sockaddr *addr)
{
	if (!addr)
		return true;
	if (addr->sa_family == AF_INET) {
		struct sockaddr_in sin;
		memcpy(&sin, addr, sizeof sin);
		return v4_refused(ntohl(sin.sin_addr.s_addr));
	}
	if (addr->sa_family == AF_INET6) {
		struct sockaddr_in6 sin6;
		memcpy(&sin6, addr, sizeof sin6);
		return v6_refused(sin6.sin6_addr.s6_addr);
	}
	return true;
}

static void format_addr(const struct sockaddr_storage *ss, char *out, size_t outlen)
{
	const void *a = NULL;
	if (ss->ss_family == AF_INET)
		a = &((const struct sockaddr_in *)ss)->sin_addr;
	else if (ss->ss_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	if (!a || !inet_ntop(ss->ss_family, a, out, (socklen_t)outlen))
		snprintf(out, outlen, "an address of family %d", (int)ss->ss_family);
}

/*
 * libcurl calls this with each address it is about to connect to, after
 * resolving: the only point where the check sees what is really dialled,
 * whatever the name resolved to a moment before (DNS rebinding).
 */
static curl_socket_t open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
	send_ctx *ctx = clientp;
	if (purpose != CURLSOCKTYPE_IPCXN)
		return CURL_SOCKET_BAD;
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	size_t n = a->addrlen < sizeof ss ? a->addrlen : sizeof ss;
	memcpy(&ss, &a->addr, n);
	if (!ctx->allow_private && srv_webhook_address_refused((const struct sockaddr *)&ss)) {
		format_addr(&ss, ctx->refused, sizeof ctx->refused);
		return CURL_SOCKET_BAD;
	}
	/* Not inherited by anything the server may start. */
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *clientp)
{
	send_ctx *ctx = clientp;
	size_t len = size * nmemb;
	size_t keep = BODY_KEEP - ctx->head_len;
	if (keep > len)
		keep = len;
	memcpy(ctx->head + ctx->head_len, data, keep);
	ctx->head_len += keep;
	ctx->body_bytes += len;
	/* A short count makes libcurl abort: a receiver cannot keep a sender
	 * thread reading for the whole timeout, nor fill its memory. */
	if (ctx->body_bytes > RESPONSE_MAX) {
		ctx->too_large = true;
		return 0;
	}
	return len;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *clientp)
{
	(void)data;
	send_ctx *ctx = clientp;
	size_t len = size * nmemb;
	ctx->header_bytes += len;
	if (ctx->header_bytes > RESPONSE_MAX) {
		ctx->too_large = true;
		return 0;
	}
	return len;
}

/* Printable ASCII without CR/LF, so it cannot add a header line. */
static bool header_value_ok(const char *s)
{
	if (!s || !*s || strlen(s) > HEADER_VALUE_MAX)
		return false;
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

static bool add_header(struct curl_slist **list, const char *line)
{
	struct curl_slist *l = curl_slist_append(*list, line);
	if (!l)
		return false;
	*list = l;
	return true;
}

/* NULL when out of memory; the caller frees it with curl_slist_free_all. */
static struct curl_slist *build_headers(const srv_webhook_request *req)
{
	char sig[SRV_WEBHOOK_SIGNATURE_LEN];
	char line[64 + SRV_WEBHOOK_SIGNATURE_LEN + HEADER_VALUE_MAX];
	struct curl_slist *list = NULL;
	bool ok = add_header(&list, "Content-Type: application/json");
	/* libcurl waits up to a second for "100 Continue" on bodies over 1 KiB,
	 * which receivers rarely send. */
	ok = ok && add_header(&list, "Expect:");
	srv_webhook_signature(req->secret, req->body, req->body_len, sig);
	snprintf(line, sizeof line, "X-Stallscope-Signature: %s", sig);
	ok = ok && add_header(&list, line);
	snprintf(line, sizeof line, "X-Stallscope-Event: %s", req->event_type);
	ok = ok && add_header(&list, line);
	snprintf(line, sizeof line, "X-Stallscope-Event-Id: %s", req->event_id);
	ok = ok && add_header(&list, line);
	if (!ok) {
		curl_slist_free_all(list);
		return NULL;
	}
	return list;
}

/* 0, or -1 when libcurl refused an option: then nothing must be sent, as
 * the refused one may be a safeguard (an older libcurl without _STR). */
static int configure(CURL *c, const srv_webhook_request *req, send_ctx *ctx,
		     struct curl_slist *headers, char *errbuf)
{
	long timeout = req->timeout_ms > 0 ? req->timeout_ms : DEFAULT_TIMEOUT_MS;
	int bad = 0;
	bad |= curl_easy_setopt(c, CURLOPT_URL, req->url) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") != CURLE_OK;
	/* A redirect would lead the signed body somewhere the user never
	 * entered; a 3xx is reported instead. */
	bad |= curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
	/* A proxy from the environment would connect for us, past open_socket. */
	bad |= curl_easy_setopt(c, CURLOPT_PROXY, "") != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, ctx) != CURLE_OK;
	/* Each send resolves and is checked afresh. */
	bad |= curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_POST, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body ? req->body : "") != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len) !=
	       CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_USERAGENT, "stallscope-webhook/1") != CURLE_OK;
	/* The cap counts bytes as they arrive, never what they would inflate to. */
	bad |= curl_easy_setopt(c, CURLOPT_HTTP_CONTENT_DECODING, 0L) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_WRITEDATA, ctx) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_HEADERDATA, ctx) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout) != CURLE_OK;
	/* Timeouts by signal are process-wide; several threads send. */
	bad |= curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(c, CURLOPT_VERBOSE, 0L) != CURLE_OK;
	return bad ? -1 : 0;
}

/* SRC as one printable line of at most CAP - 1 bytes: runs of spaces and
 * control bytes become one space (an HTML error page is mostly newlines and
 * indentation), anything not ASCII a '?'. */
static void one_line(char *dst, size_t cap, const char *src, size_t len)
{
	size_t n = 0;
	bool space = true; /* drops leading whitespace */
	for (size_t i = 0; i < len && n + 1 < cap; i++) {
		unsigned char ch = (unsigned char)src[i];
		if (ch <= 0x20 || ch == 0x7f) {
			if (!space)
				dst[n++] = ' ';
			space = true;
			continue;
		}
		dst[n++] = ch > 0x7e ? '?' : (char)ch;
		space = false;
	}
	while (n && dst[n - 1] == ' ')
		n--;
	dst[n] = '\0';
}

static void finish(const send_ctx *ctx, CURLcode rc, long status, const char *curl_msg,
		   srv_webhook_result *out)
{
	char text[sizeof out->error - 32];
	out->status = status;
	out->delivered = status >= 200 && status <= 299;
	out->error[0] = '\0';
	if (out->delivered)
		return;
	if (status == 0 && ctx->refused[0]) {
		snprintf(out->error, sizeof out->error, "refused: %s is not a public address",
			 ctx->refused);
	} else if (status >= 300 && status <= 399) {
		snprintf(out->error, sizeof out->error, "redirect not followed (HTTP %ld)", status);
	} else if (status > 0) {
		one_line(text, sizeof text, ctx->head, ctx->head_len);
		if (text[0])
			snprintf(out->error, sizeof out->error, "HTTP %ld: %s", status, text);
		else
			snprintf(out->error, sizeof out->error, "HTTP %ld", status);
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		snprintf(out->error, sizeof out->error, "timeout");
	} else if (rc == CURLE_OK || ctx->too_large) {
		snprintf(out->error, sizeof out->error, "no HTTP status received");
	} else {
		const char *msg = curl_msg && curl_msg[0] ? curl_msg : curl_easy_strerror(rc);
		one_line(out->error, sizeof out->error, msg, strlen(msg));
	}
}

void srv_webhook_send(const srv_webhook_request *req, srv_webhook_result *out)
{
	send_ctx ctx;
	char why[128], errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL;
	CURL *c = NULL;
	CURLcode rc;
	long status = 0;
	memset(out, 0, sizeof *out);
	memset(&ctx, 0, sizeof ctx);
	ctx.allow_private = req->allow_private;
	if (srv_webhook_url_check(req->url, why, sizeof why) != 0) {
		snprintf(out->error, sizeof out->error, "invalid URL: %s", why);
		return;
	}
	if (!header_value_ok(req->event_id) || !header_value_ok(req->event_type) ||
	    (req->body_len && !req->body)) {
		snprintf(out->error, sizeof out->error, "invalid request");
		return;
	}
	headers = build_headers(req);
	c = curl_easy_init();
	if (!headers || !c) {
		snprintf(out->error, sizeof out->error, "out of memory");
		goto done;
	}
	if (configure(c, req, &ctx, headers, errbuf) != 0) {
		snprintf(out->error, sizeof out->error, "libcurl refused an option");
		goto done;
	}
	rc = curl_easy_perform(c);
	if (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
		status = 0;
	finish(&ctx, rc, status, errbuf, out);
done:
	curl_easy_cleanup(c);
	curl_slist_free_all(headers);
}
