/* test_config.c — STALLSCOPE_* parsing: sizes, listen addresses, defaults
 * and the messages that name a bad variable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "server/service/config.h"

/* A fake environment: NULL-terminated name/value pairs. */
static const char *const *fake_env;

static const char *get(const char *name)
{
	for (size_t i = 0; fake_env[i]; i += 2)
		if (!strcmp(fake_env[i], name))
			return fake_env[i + 1];
	return NULL;
}

static void test_sizes(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(srv_config_parse_size("1048576", &v), 0);
	assert_int_equal(v, 1048576);
	assert_int_equal(srv_config_parse_size("16M", &v), 0);
	assert_int_equal(v, 16u << 20);
	assert_int_equal(srv_config_parse_size("4GiB", &v), 0);
	assert_int_equal(v, UINT64_C(4) << 30);
	assert_int_equal(srv_config_parse_size("512k", &v), 0);
	assert_int_equal(v, 512u << 10);
	assert_int_equal(srv_config_parse_size("2TB", &v), 0);
	assert_int_equal(v, UINT64_C(2) << 40);
	assert_int_equal(srv_config_parse_size("10B", &v), 0);
	assert_int_equal(v, 10);
	const char *bad[] = {"", "M", "-1", "1.5M", "16 M", "16X", "16MiBs",
			     "99999999999999999999", "20000000T", NULL};
	for (size_t i = 0; bad[i]; i++)
		assert_int_equal(srv_config_parse_size(bad[i], &v), -1);
}

static void test_listen(void **state)
{
	(void)state;
	char host[64];
	uint16_t port;
	assert_int_equal(srv_config_parse_listen("127.0.0.1:8080", host,
						 sizeof host, &port), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 8080);
	assert_int_equal(srv_config_parse_listen("[::1]:9", host, sizeof host,
						 &port), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 9);
	assert_int_equal(srv_config_parse_listen(":80", host, sizeof host,
						 &port), 0);
	assert_string_equal(host, "0.0.0.0");
	assert_int_equal(srv_config_parse_listen("localhost:0", host,
						 sizeof host, &port), 0);
	assert_int_equal(port, 0);
	const char *bad[] = {"localhost", "1.2.3.4:", "1.2.3.4:65536",
			     "::1:80", "[::1]80", "host:8o", NULL};
	for (size_t i = 0; bad[i]; i++)
		assert_int_equal(srv_config_parse_listen(bad[i], host,
							 sizeof host, &port),
				 -1);
	assert_int_equal(srv_config_parse_listen("averyveryverylonghost:1",
						 host, 8, &port), -1);
}

static void test_defaults(void **state)
{
	(void)state;
	static const char *const env[] = {"STALLSCOPE_DATABASE_URL",
					  "postgresql:///x", NULL};
	fake_env = env;
	srv_config cfg;
	char err[256];
	assert_int_equal(srv_config_load(&cfg, get, err, sizeof err), 0);
	assert_string_equal(cfg.database_url, "postgresql:///x");
	assert_string_equal(cfg.listen_host, "127.0.0.1");
	assert_int_equal(cfg.listen_port, 8080);
	assert_string_equal(cfg.data_dir, "var/");
	assert_true(cfg.db_connections >= 8 && cfg.db_connections <= 64);
	assert_int_equal(cfg.workers, 2);
	assert_int_equal(cfg.max_body, 16u << 20);
	assert_int_equal(cfg.max_upload, UINT64_C(4) << 30);
	assert_int_equal(cfg.max_unzipped, UINT64_C(8) << 30);
	assert_int_equal(cfg.max_zip_entries, 10000);
	assert_int_equal(cfg.log_level, CM_INFO);
	assert_int_equal(cfg.access_log, 1); /* make run sets 0 */
	/* Webhooks: no private destinations, a first retry after 10 s, links
	 * to the listen address. */
	assert_int_equal(cfg.webhook_allow_private, 0);
	assert_int_equal(cfg.webhook_retry, 10);
	assert_string_equal(cfg.public_url, "");
	/* /metrics: loopback only, 127.0.0.1/32 and ::1/128. */
	assert_int_equal(cfg.metrics_allow.n, 2);
	assert_int_equal(cfg.metrics_allow.v[0].ipv6, 0);
	assert_memory_equal(cfg.metrics_allow.v[0].addr, "\x7f\0\0\x01", 4);
	assert_int_equal(cfg.metrics_allow.v[0].prefix, 32);
	assert_int_equal(cfg.metrics_allow.v[1].ipv6, 1);
	assert_int_equal(cfg.metrics_allow.v[1].addr[15], 1);
	assert_int_equal(cfg.metrics_allow.v[1].prefix, 128);
	/* No proxy is trusted: X-Forwarded-For is nobody's word. */
	assert_int_equal(cfg.trusted_proxies.n, 0);
}

static void test_overrides(void **state)
{
	(void)state;
	/* Name, value pairs. */
	/* clang-format off */
	static const char *const env[] = {
		"STALLSCOPE_DATABASE_URL", "host=/tmp dbname=s",
		"STALLSCOPE_LISTEN", "[::]:0",
		"STALLSCOPE_DB_CONNECTIONS", "7",
		"STALLSCOPE_MAX_UPLOAD", "2M",
		"STALLSCOPE_LOG_LEVEL", "debug",
		"STALLSCOPE_DATA_DIR", "/srv/data",
		"STALLSCOPE_MAX_URL", "",
		"STALLSCOPE_ACCESS_LOG", "0",
		"STALLSCOPE_TRUSTED_PROXIES", "10.0.0.0/8, fd00::/8",
		NULL};
	/* clang-format on */
	fake_env = env;
	srv_config cfg;
	char err[256];
	assert_int_equal(srv_config_load(&cfg, get, err, sizeof err), 0);
	assert_string_equal(cfg.listen_host, "::");
	assert_int_equal(cfg.listen_port, 0);
	assert_int_equal(cfg.db_connections, 7);
	assert_int_equal(cfg.max_upload, 2u << 20);
	assert_int_equal(cfg.log_level, CM_DEBUG);
	assert_string_equal(cfg.data_dir, "/srv/data");
	assert_int_equal(cfg.max_url, 2048); /* empty means default */
	assert_int_equal(cfg.access_log, 0);
	/* Its own list, not STALLSCOPE_METRICS_ALLOW's. */
	assert_int_equal(cfg.trusted_proxies.n, 2);
	assert_int_equal(cfg.trusted_proxies.v[0].prefix, 8);
	assert_int_equal(cfg.trusted_proxies.v[1].ipv6, 1);
	assert_int_equal(cfg.metrics_allow.n, 2);
}

static void expect_refused(const char *var, const char *value)
{
	const char *env[] = {"STALLSCOPE_DATABASE_URL", "postgresql:///x", var,
			     value, NULL};
	fake_env = env;
	srv_config cfg;
	char err[256] = "";
	assert_int_equal(srv_config_load(&cfg, get, err, sizeof err), -1);
	assert_non_null(strstr(err, var));
}

static void test_refusals_name_the_variable(void **state)
{
	(void)state;
	expect_refused("STALLSCOPE_DB_CONNECTIONS", "1");
	expect_refused("STALLSCOPE_DB_CONNECTIONS", "lots");
	expect_refused("STALLSCOPE_WORKERS", "0");
	expect_refused("STALLSCOPE_MAX_BODY", "100");
	expect_refused("STALLSCOPE_MAX_UNZIPPED", "8Q");
	expect_refused("STALLSCOPE_LISTEN", "8080");
	expect_refused("STALLSCOPE_LOG_LEVEL", "loud");
	expect_refused("STALLSCOPE_METRICS_ALLOW", "10.0.0.1/8");
	expect_refused("STALLSCOPE_TRUSTED_PROXIES", "10.0.0.0/8,proxy");
	expect_refused("STALLSCOPE_WEBHOOK_ALLOW_PRIVATE", "2");
	expect_refused("STALLSCOPE_WEBHOOK_RETRY", "0");
	expect_refused("STALLSCOPE_ACCESS_LOG", "yes");
	static const char *const none[] = {NULL};
	fake_env = none;
	srv_config cfg;
	char err[256];
	assert_int_equal(srv_config_load(&cfg, get, err, sizeof err), -1);
	assert_non_null(strstr(err, "STALLSCOPE_DATABASE_URL is not set"));
	char url[8];
	assert_int_equal(srv_config_database_url(get, url, sizeof url, err,
						 sizeof err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_listen),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_refusals_name_the_variable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
