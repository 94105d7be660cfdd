/* test_netmask.c — CIDR lists (STALLSCOPE_METRICS_ALLOW): parsing, refusals
 * and matching of IPv4, IPv6 and IPv4-mapped peers; the client behind
 * trusted proxies (STALLSCOPE_TRUSTED_PROXIES, X-Forwarded-For). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "server/service/netmask.h"

static int match4(const srv_netmask_list *l, const char *ip)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	assert_int_equal(inet_pton(AF_INET, ip, &sa.sin_addr), 1);
	return srv_netmask_match(l, (const struct sockaddr *)&sa);
}

static int match6(const srv_netmask_list *l, const char *ip)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6};
	assert_int_equal(inet_pton(AF_INET6, ip, &sa.sin6_addr), 1);
	return srv_netmask_match(l, (const struct sockaddr *)&sa);
}

static void test_parse_and_match(void **state)
{
	(void)state;
	srv_netmask_list l;
	assert_int_equal(
		srv_netmask_parse_list("127.0.0.1/32, 10.0.0.0/8 ,192.168.4.0/22,fd00::/8,::1", &l),
		0);
	assert_int_equal(l.n, 5);
	assert_true(match4(&l, "127.0.0.1"));
	assert_false(match4(&l, "127.0.0.2"));
	assert_true(match4(&l, "10.255.1.2"));
	assert_false(match4(&l, "11.0.0.1"));
	/* /22: 192.168.4.0 to 192.168.7.255. */
	assert_true(match4(&l, "192.168.7.255"));
	assert_false(match4(&l, "192.168.8.0"));
	assert_false(match4(&l, "192.168.3.255"));
	assert_true(match6(&l, "::1"));
	assert_false(match6(&l, "::2"));
	assert_true(match6(&l, "fdab::1"));
	assert_false(match6(&l, "fe80::1"));
	/* A dual-stack socket's IPv4 peer is its IPv4 address. */
	assert_true(match6(&l, "::ffff:10.1.2.3"));
	assert_false(match6(&l, "::ffff:11.1.2.3"));
	/* IPv4 ranges never match IPv6 peers that merely share bytes. */
	assert_false(match6(&l, "a00::1"));
	assert_false(srv_netmask_match(&l, NULL));

	assert_int_equal(srv_netmask_parse_list("0.0.0.0/0,::/0", &l), 0);
	assert_true(match4(&l, "203.0.113.9"));
	assert_true(match6(&l, "2001:db8::1"));
}

static void test_refused(void **state)
{
	(void)state;
	srv_netmask_list l;
	const char *bad[] = {"",
			     ",",
			     "10.0.0.0/8,",
			     "10.0.0.1/8",
			     "10.0.0.0/33",
			     "::1/129",
			     "10.0.0.0/",
			     "10.0.0.0/-1",
			     "10.0.0.0/8x",
			     "10.0.0",
			     "example.com",
			     "fe80::1%eth0",
			     "1.2.3.4/0032",
			     NULL};
	for (size_t i = 0; bad[i]; i++)
		assert_int_equal(srv_netmask_parse_list(bad[i], &l), -1);
	char many[SRV_NETMASK_MAX * 16 + 16] = "";
	for (int i = 0; i <= SRV_NETMASK_MAX; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "%s10.0.%d.0/24",
			 i ? "," : "", i);
	assert_int_equal(srv_netmask_parse_list(many, &l), -1);
}

/* The client srv_netmask_client names, as text ("-" when unknown). */
static const char *client_of(const srv_netmask_list *trusted, const char *peer,
			     const char *const *xff, size_t n)
{
	static char text[INET6_ADDRSTRLEN];
	struct sockaddr_in sa = {.sin_family = AF_INET};
	assert_int_equal(inet_pton(AF_INET, peer, &sa.sin_addr), 1);
	struct sockaddr_storage out;
	srv_netmask_client(trusted, (const struct sockaddr *)&sa, xff, n, &out);
	if (out.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)&out)->sin_addr, text,
			  sizeof text);
	else if (out.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)(void *)&out)->sin6_addr, text,
			  sizeof text);
	else
		snprintf(text, sizeof text, "-");
	return text;
}

static void test_client_behind_proxies(void **state)
{
	(void)state;
	srv_netmask_list proxies, none = {.n = 0};
	assert_int_equal(srv_netmask_parse_list("10.0.0.0/8,fd00::/8", &proxies), 0);
	const char *one[] = {"198.51.100.7"};
	/* An untrusted peer's header is ignored, as is everyone's by default. */
	assert_string_equal(client_of(&proxies, "203.0.113.1", one, 1), "203.0.113.1");
	assert_string_equal(client_of(&none, "10.0.0.1", one, 1), "10.0.0.1");
	/* A trusted peer without the header is the client. */
	assert_string_equal(client_of(&proxies, "10.0.0.1", NULL, 0), "10.0.0.1");
	assert_string_equal(client_of(&proxies, "10.0.0.1", one, 1), "198.51.100.7");
	/* What the client wrote itself (left of the proxy's entry) is not
	 * believed, malformed or not; proxies in the chain are skipped. */
	const char *chain[] = {"127.0.0.1, 198.51.100.7 ,10.2.3.4", "10.9.9.9"};
	assert_string_equal(client_of(&proxies, "10.0.0.1", chain, 2), "198.51.100.7");
	const char *spoof[] = {"not-an-address,\t2001:db8::5\t"};
	assert_string_equal(client_of(&proxies, "10.0.0.1", spoof, 1), "2001:db8::5");
	/* Only proxies: the left-most. */
	const char *inner[] = {"10.1.1.1,fd00::2", "10.0.0.2"};
	assert_string_equal(client_of(&proxies, "10.0.0.1", inner, 2), "10.1.1.1");
	/* A malformed entry where the client should be: unknown, in no range. */
	const char *bad[][1] = {{"198.51.100.7, junk"},
				{"198.51.100.7,,10.0.0.3"},
				{""},
				{"198.51.100.7:443"},
				{"[2001:db8::5]"}};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_string_equal(client_of(&proxies, "10.0.0.1", bad[i], 1), "-");
	const char *many[SRV_FORWARDED_MAX + 1];
	for (size_t i = 0; i <= SRV_FORWARDED_MAX; i++)
		many[i] = "198.51.100.7";
	assert_string_equal(client_of(&proxies, "10.0.0.1", many, SRV_FORWARDED_MAX),
			    "198.51.100.7");
	assert_string_equal(client_of(&proxies, "10.0.0.1", many, SRV_FORWARDED_MAX + 1), "-");
	struct sockaddr_storage out;
	srv_netmask_client(&proxies, NULL, one, 1, &out);
	assert_int_equal(out.ss_family, AF_UNSPEC);
	assert_false(srv_netmask_match(&proxies, (const struct sockaddr *)&out));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_match),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_client_behind_proxies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
