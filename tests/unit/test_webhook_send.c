/* test_webhook_send.c — the webhook sender: signatures against RFC 4231,
 * the public-address check at both sides of every range, URL checks, the
 * response cap and error wording, and real sends that are refused or find
 * no listener (no HTTP receiver here: the integration tests have one). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Included to reach the callbacks and the error wording directly. */
#include "server/service/webhook_send.c"

static void test_signature_rfc4231(void **state)
{
	(void)state;
	char sig[SRV_WEBHOOK_SIGNATURE_LEN];
	const char *data = "what do ya want for nothing?";
	srv_webhook_signature("Jefe", data, strlen(data), sig);
	assert_string_equal(
		sig, "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

	/* Case 6: a 131-byte key, longer than SHA-256's 64-byte block. */
	char key[132];
	memset(key, 0xaa, 131);
	key[131] = '\0';
	data = "Test Using Larger Than Block-Size Key - Hash Key First";
	srv_webhook_signature(key, data, strlen(data), sig);
	assert_string_equal(
		sig, "sha256=60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");

	/* An empty body; NULL is the empty secret. */
	char a[SRV_WEBHOOK_SIGNATURE_LEN], b[SRV_WEBHOOK_SIGNATURE_LEN];
	srv_webhook_signature(NULL, NULL, 0, a);
	srv_webhook_signature("", "", 0, b);
	assert_string_equal(a, b);
	assert_string_equal(
		a, "sha256=b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

static bool refused(const char *ip)
{
	/* Storage of the largest size, as a caller holding either family has. */
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, ip, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
	} else {
		assert_int_equal(inet_pton(AF_INET6, ip, &sin6->sin6_addr), 1);
		sin6->sin6_family = AF_INET6;
	}
	return srv_webhook_address_refused((const struct sockaddr *)&ss);
}

static void test_address_refused(void **state)
{
	(void)state;
	/* Each range's first and last address, and the neighbours outside. */
	static const char *refused_ips[] = {
		"0.0.0.0", "0.255.255.255", "10.0.0.0", "10.255.255.255", "100.64.0.0",
		"100.127.255.255", "127.0.0.0", "127.0.0.1", "127.255.255.255", "169.254.0.0",
		"169.254.169.254", "169.254.255.255", "172.16.0.0", "172.31.255.255", "192.0.0.0",
		"192.0.0.255", "192.168.0.0", "192.168.255.255", "198.18.0.0", "198.19.255.255",
		"224.0.0.0", "239.255.255.255", "240.0.0.0", "255.255.255.255",
		/* IPv6 */
		"::", "::1", "::2", "fe80::", "fe80::1", "febf:ffff::1", "fec0::1", "feff::1",
		"fc00::", "fd12:3456::1", "fdff:ffff::1", "ff00::", "ff02::1", "ffff::1",
		/* IPv6 forms of IPv4 addresses are judged as those addresses. */
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::127.0.0.1",
		"::192.168.1.1", "::ffff:0:127.0.0.1", "64:ff9b::127.0.0.1", "64:ff9b::10.1.2.3",
		"64:ff9b:1::8.8.8.8", "2002:7f00:1::", "2002:c0a8:101::1"};
	static const char *allowed_ips[] = {
		"1.0.0.0", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
		"126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255",
		"172.32.0.0", "191.255.255.255", "192.0.1.0", "192.167.255.255", "192.169.0.0",
		"198.17.255.255", "198.20.0.0", "223.255.255.255", "8.8.8.8", "1.1.1.1",
		"93.184.216.34",
		/* IPv6 */
		"2001:4860::8888", "2606:4700::1111", "fe7f:ffff::1", "fbff:ffff::1", "2001:db8::1",
		"::ffff:8.8.8.8", "::ffff:172.15.255.255", "::8.8.8.8", "::ffff:0:8.8.8.8",
		"64:ff9b::8.8.8.8", "64:ff9a::8.8.8.8", "2002:808:808::1"};
	for (size_t i = 0; i < sizeof refused_ips / sizeof refused_ips[0]; i++)
		if (!refused(refused_ips[i]))
			fail_msg("%s allowed", refused_ips[i]);
	for (size_t i = 0; i < sizeof allowed_ips / sizeof allowed_ips[0]; i++)
		if (refused(allowed_ips[i]))
			fail_msg("%s refused", allowed_ips[i]);
	/* Neither IPv4 nor IPv6, or nothing: no public destination either. */
	struct sockaddr sa = {.sa_family = AF_UNIX};
	assert_true(srv_webhook_address_refused(&sa));
	assert_true(srv_webhook_address_refused(NULL));
}

static void test_url_check(void **state)
{
	(void)state;
	char err[128];
	const char *good[] = {
		"http://example.com",	      "https://example.com/hooks/stallscope?x=1",
		"HTTPS://Example.COM:8443/a", "http://127.0.0.1:9000/",
		"http://[2001:db8::1]/x",     NULL};
	for (size_t i = 0; good[i]; i++)
		if (srv_webhook_url_check(good[i], err, sizeof err) != 0)
			fail_msg("%s refused: %s", good[i], err);

	const char *bad[] = {"ftp://example.com/x",
			     "file:///etc/passwd",
			     "gopher://example.com/",
			     "dict://example.com/",
			     "notaurl",
			     "/relative/path",
			     "//example.com/x",
			     "http://user:pw@host/",
			     "http://user@host/",
			     "http:///nohost",
			     "http:/host/x",
			     "http://",
			     "http://:80/",
			     "http://@host/",
			     "http://host:99999/",
			     " http://host/",
			     "http://exa mple.com/",
			     "",
			     NULL};
	for (size_t i = 0; bad[i]; i++) {
		err[0] = '\0';
		if (srv_webhook_url_check(bad[i], err, sizeof err) != -1)
			fail_msg("%s accepted", bad[i]);
		assert_true(err[0] != '\0');
		assert_null(strchr(err, '\n'));
	}
	assert_int_equal(srv_webhook_url_check(NULL, err, sizeof err), -1);
	assert_int_equal(srv_webhook_url_check("ftp://x/", NULL, 0), -1);
	srv_webhook_url_check("ftp://x/", err, sizeof err);
	assert_string_equal(err, "only http and https URLs are allowed");
	srv_webhook_url_check("http://user:pw@host/", err, sizeof err);
	assert_null(strstr(err, "pw"));

	/* 2048 bytes pass, 2049 do not. */
	static char url[SRV_WEBHOOK_URL_MAX + 2];
	const char *prefix = "https://example.com/";
	size_t plen = strlen(prefix);
	memcpy(url, prefix, plen);
	memset(url + plen, 'a', SRV_WEBHOOK_URL_MAX - plen);
	url[SRV_WEBHOOK_URL_MAX] = '\0';
	assert_int_equal(srv_webhook_url_check(url, err, sizeof err), 0);
	url[SRV_WEBHOOK_URL_MAX] = 'a';
	url[SRV_WEBHOOK_URL_MAX + 1] = '\0';
	assert_int_equal(srv_webhook_url_check(url, err, sizeof err), -1);
}

/* open_socket as libcurl calls it, with an address of either family. */
static curl_socket_t open_for(send_ctx *ctx, const char *ip)
{
	union {
		struct curl_sockaddr cs;
		char room[sizeof(struct curl_sockaddr) + sizeof(struct sockaddr_in6)];
	} u;
	memset(&u, 0, sizeof u);
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};
	u.cs.socktype = SOCK_STREAM;
	u.cs.protocol = IPPROTO_TCP;
	if (inet_pton(AF_INET, ip, &sin.sin_addr) == 1) {
		u.cs.family = AF_INET;
		u.cs.addrlen = sizeof sin;
		memcpy(&u.cs.addr, &sin, sizeof sin);
	} else {
		assert_int_equal(inet_pton(AF_INET6, ip, &sin6.sin6_addr), 1);
		u.cs.family = AF_INET6;
		u.cs.addrlen = sizeof sin6;
		memcpy((char *)&u + offsetof(struct curl_sockaddr, addr), &sin6, sizeof sin6);
	}
	return open_socket(ctx, CURLSOCKTYPE_IPCXN, &u.cs);
}

static void test_open_socket(void **state)
{
	(void)state;
	send_ctx ctx = {.allow_private = false};
	assert_int_equal(open_for(&ctx, "10.1.2.3"), CURL_SOCKET_BAD);
	assert_string_equal(ctx.refused, "10.1.2.3");
	assert_int_equal(open_for(&ctx, "fd00::7"), CURL_SOCKET_BAD);
	assert_string_equal(ctx.refused, "fd00::7");
	/* A public address gets a socket (not connected here). */
	curl_socket_t s = open_for(&ctx, "8.8.8.8");
	assert_true(s != CURL_SOCKET_BAD);
	close(s);
	ctx.allow_private = true;
	s = open_for(&ctx, "127.0.0.1");
	assert_true(s != CURL_SOCKET_BAD);
	close(s);
	/* Only the connection's own socket, never an FTP-style accept. */
	struct curl_sockaddr cs = {.family = AF_INET, .socktype = SOCK_STREAM};
	assert_int_equal(open_socket(&ctx, CURLSOCKTYPE_ACCEPT, &cs), CURL_SOCKET_BAD);
}

static void test_response_cap(void **state)
{
	(void)state;
	static char chunk[16 * 1024];
	memset(chunk, 'x', sizeof chunk);
	memcpy(chunk, "Internal\r\n\r\n  Error", 19);
	send_ctx ctx = {0};
	/* 64 KiB exactly is read; one byte more aborts. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(on_body(chunk, 1, sizeof chunk, &ctx), sizeof chunk);
	assert_false(ctx.too_large);
	assert_int_equal(ctx.head_len, BODY_KEEP);
	assert_memory_equal(ctx.head, chunk, BODY_KEEP);
	assert_int_equal(on_body(chunk, 1, 1, &ctx), 0);
	assert_true(ctx.too_large);

	send_ctx h = {0};
	assert_int_equal(on_header(chunk, 1, sizeof chunk, &h), sizeof chunk);
	for (int i = 0; i < 3; i++)
		on_header(chunk, 1, sizeof chunk, &h);
	assert_int_equal(on_header(chunk, 1, 1, &h), 0);
}

static void test_result_wording(void **state)
{
	(void)state;
	srv_webhook_result r;
	send_ctx ctx = {0};

	/* A 2xx is delivered even when the cap then cut the body short. */
	ctx.too_large = true;
	finish(&ctx, CURLE_WRITE_ERROR, 200, "Failure writing output", &r);
	assert_true(r.delivered);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.error, "");
	finish(&ctx, CURLE_OK, 204, "", &r);
	assert_true(r.delivered);

	memset(&ctx, 0, sizeof ctx);
	finish(&ctx, CURLE_OK, 302, "", &r);
	assert_false(r.delivered);
	assert_string_equal(r.error, "redirect not followed (HTTP 302)");

	const char *page = "\r\n<html>\n\t<body>Bad\x01gateway \xc3\xa9</body>\n</html>\n";
	on_body((char *)page, 1, strlen(page), &ctx);
	finish(&ctx, CURLE_OK, 502, "", &r);
	assert_string_equal(r.error, "HTTP 502: <html> <body>Bad gateway \?\?</body> </html>");

	/* A long body is quoted only as far as the error holds. */
	memset(&ctx, 0, sizeof ctx);
	memset(ctx.head, 'y', sizeof ctx.head);
	ctx.head_len = sizeof ctx.head;
	finish(&ctx, CURLE_OK, 500, "", &r);
	assert_int_equal(strncmp(r.error, "HTTP 500: yyy", 13), 0);
	assert_true(strlen(r.error) < sizeof r.error);

	memset(&ctx, 0, sizeof ctx);
	finish(&ctx, CURLE_OK, 404, "", &r);
	assert_string_equal(r.error, "HTTP 404");
	finish(&ctx, CURLE_OPERATION_TIMEDOUT, 0, "Operation timed out after 10001 ms", &r);
	assert_string_equal(r.error, "timeout");
	finish(&ctx, CURLE_COULDNT_RESOLVE_HOST, 0, "Could not resolve host: nx.invalid\n", &r);
	assert_string_equal(r.error, "Could not resolve host: nx.invalid");
	finish(&ctx, CURLE_SEND_ERROR, 0, "", &r);
	assert_string_equal(r.error, curl_easy_strerror(CURLE_SEND_ERROR));
	snprintf(ctx.refused, sizeof ctx.refused, "::1");
	finish(&ctx, CURLE_COULDNT_CONNECT, 0, "", &r);
	assert_string_equal(r.error, "refused: ::1 is not a public address");
}

static srv_webhook_request request(const char *url, bool allow_private)
{
	static const char body[] = "{\"event_id\":\"e-1\",\"type\":\"test\"}";
	return (srv_webhook_request){.url = url,
				     .secret = "s3cret-never-shown",
				     .event_id = "e-1",
				     .event_type = "test",
				     .body = body,
				     .body_len = sizeof body - 1,
				     .allow_private = allow_private,
				     .timeout_ms = 5000};
}

static void test_send_refused(void **state)
{
	(void)state;
	const char *urls[] = {"http://127.0.0.1:1/",  "http://[::1]:1/",
			      "http://localhost:1/",  "http://[::ffff:127.0.0.1]:1/",
			      "http://2130706433:1/", NULL};
	for (size_t i = 0; urls[i]; i++) {
		srv_webhook_request req = request(urls[i], false);
		srv_webhook_result r;
		srv_webhook_send(&req, &r);
		assert_false(r.delivered);
		assert_int_equal(r.status, 0);
		if (strncmp(r.error, "refused: ", 9) != 0 ||
		    !strstr(r.error, "is not a public address"))
			fail_msg("%s: %s", urls[i], r.error);
		assert_null(strstr(r.error, req.secret));
	}
	srv_webhook_request req = request("http://127.0.0.1:1/", false);
	srv_webhook_result r;
	srv_webhook_send(&req, &r);
	assert_string_equal(r.error, "refused: 127.0.0.1 is not a public address");
}

static void test_send_connection_error(void **state)
{
	(void)state;
	/* Allowed, but nothing listens on port 1: a connection error. */
	srv_webhook_request req = request("http://127.0.0.1:1/", true);
	srv_webhook_result r;
	srv_webhook_send(&req, &r);
	assert_false(r.delivered);
	assert_int_equal(r.status, 0);
	assert_true(r.error[0] != '\0');
	assert_null(strstr(r.error, "refused:"));
	assert_null(strstr(r.error, req.secret));
	assert_null(strchr(r.error, '\n'));
}

static void test_send_bad_request(void **state)
{
	(void)state;
	srv_webhook_result r;
	srv_webhook_request req = request("ftp://example.com/", true);
	srv_webhook_send(&req, &r);
	assert_false(r.delivered);
	assert_string_equal(r.error, "invalid URL: only http and https URLs are allowed");

	/* A line break in a header value would add a header of the caller's. */
	req = request("http://127.0.0.1:1/", true);
	req.event_type = "test\r\nX-Injected: 1";
	srv_webhook_send(&req, &r);
	assert_string_equal(r.error, "invalid request");
	req = request("http://127.0.0.1:1/", true);
	req.event_id = "";
	srv_webhook_send(&req, &r);
	assert_string_equal(r.error, "invalid request");
}

int main(void)
{
	if (srv_webhook_global_init() != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signature_rfc4231),
		cmocka_unit_test(test_address_refused),
		cmocka_unit_test(test_url_check),
		cmocka_unit_test(test_open_socket),
		cmocka_unit_test(test_response_cap),
		cmocka_unit_test(test_result_wording),
		cmocka_unit_test(test_send_refused),
		cmocka_unit_test(test_send_connection_error),
		cmocka_unit_test(test_send_bad_request),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	srv_webhook_global_cleanup();
	return failed;
}
