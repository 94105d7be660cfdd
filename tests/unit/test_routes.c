/* test_routes.c — route matching: literals, {params}, {app}, 404 vs 405,
 * params decoded after the split, and the server's own table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "server/api/route_table.h"

static enum MHD_Result dummy(struct MHD_Connection *conn, srv_request *req)
{
	(void)conn;
	(void)req;
	return MHD_YES;
}

static const srv_route table[] = {
	{"GET", "/healthz", dummy, 0, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/dsyms", dummy, 2, SRV_BODY_NONE},
	{"POST", "/api/v1/apps/{app}/dsyms", dummy, 2, SRV_BODY_FILE},
	{"DELETE", "/api/v1/apps/{app}/dsyms/{uuid}", dummy, 6, SRV_BODY_NONE},
	{"GET", "/api/v1/reports/{id}", dummy, 4, SRV_BODY_NONE},
	{"GET", "/", dummy, 0, SRV_BODY_NONE},
};
#define N (sizeof table / sizeof table[0])

static cm_err find(const char *method, const char *path, srv_route_match *m,
		   char *buf)
{
	strcpy(buf, path);
	return srv_route_find(table, N, method, buf, m);
}

static void test_literal_and_params(void **state)
{
	(void)state;
	char buf[256];
	srv_route_match m;
	assert_int_equal(find("GET", "/healthz", &m, buf), ERR_NONE);
	assert_ptr_equal(m.route, &table[0]);
	assert_int_equal(m.nparams, 0);
	assert_int_equal(m.app_param, -1);

	assert_int_equal(find("DELETE", "/api/v1/apps/com.x/dsyms/ABC", &m, buf),
			 ERR_NONE);
	assert_ptr_equal(m.route, &table[3]);
	assert_int_equal(m.nparams, 2);
	assert_string_equal(m.params[0], "com.x");
	assert_string_equal(m.params[1], "ABC");
	assert_int_equal(m.app_param, 0);

	assert_int_equal(find("GET", "/api/v1/reports/42", &m, buf), ERR_NONE);
	assert_int_equal(m.app_param, -1);
	assert_string_equal(m.params[0], "42");
	assert_int_equal(find("GET", "/", &m, buf), ERR_NONE);
	assert_ptr_equal(m.route, &table[5]);
}

static void test_method_picks_the_route(void **state)
{
	(void)state;
	char buf[256];
	srv_route_match m;
	assert_int_equal(find("POST", "/api/v1/apps/a/dsyms", &m, buf),
			 ERR_NONE);
	assert_ptr_equal(m.route, &table[2]);
	assert_int_equal(find("GET", "/api/v1/apps/a/dsyms", &m, buf), ERR_NONE);
	assert_ptr_equal(m.route, &table[1]);
}

static void test_404_and_405(void **state)
{
	(void)state;
	char buf[256];
	srv_route_match m;
	const char *missing[] = {"/healthz/", "/healthzz", "/api/v1/apps//dsyms",
				 "/api/v1/apps/a/dsyms/u/extra", "healthz",
				 "//", "/api/v1/apps/a", NULL};
	for (size_t i = 0; missing[i]; i++)
		assert_int_equal(find("GET", missing[i], &m, buf), ERR_NO_ROUTE);
	assert_int_equal(find("PUT", "/api/v1/apps/a/dsyms", &m, buf),
			 ERR_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET, POST");
	assert_int_equal(find("POST", "/healthz", &m, buf),
			 ERR_METHOD_NOT_ALLOWED);
	assert_string_equal(m.allow, "GET");
	/* More segments than any pattern could have. */
	char deep[200] = "";
	for (int i = 0; i < 40; i++)
		strcat(deep, "/a");
	assert_int_equal(find("GET", deep, &m, buf), ERR_NO_ROUTE);
}

static void test_params_decode_after_the_split(void **state)
{
	(void)state;
	char buf[256];
	srv_route_match m;
	/* An encoded '/' stays inside its param; literals are matched as sent. */
	assert_int_equal(find("DELETE", "/api/v1/apps/com%2Ex/dsyms/team%2Falice", &m, buf),
			 ERR_NONE);
	assert_true(srv_route_decode_params(&m));
	assert_string_equal(m.params[0], "com.x");
	assert_string_equal(m.params[1], "team/alice");
	/* Malformed escapes stay as sent; %25 decodes once, not twice. */
	assert_int_equal(find("GET", "/api/v1/reports/%zz%4%2541", &m, buf), ERR_NONE);
	assert_true(srv_route_decode_params(&m));
	assert_string_equal(m.params[0], "%zz%4%41");
	assert_int_equal(find("GET", "/api/v1/reports/a%00b", &m, buf), ERR_NONE);
	assert_false(srv_route_decode_params(&m));
	assert_int_equal(find("GET", "/api/v1/%72eports/1", &m, buf), ERR_NO_ROUTE);
}

static void test_server_table(void **state)
{
	(void)state;
	size_t n;
	const srv_route *routes = srv_routes(&n);
	assert_true(n >= 5);
	char buf[256];
	srv_route_match m;
	for (size_t i = 0; i < n; i++) {
		assert_non_null(routes[i].handler);
		/* A route scoped by {app} takes credentials. */
		strcpy(buf, routes[i].pattern);
		if (strstr(routes[i].pattern, "{app}"))
			assert_true(routes[i].auth != 0);
		/* Every pattern matches itself with its own method. */
		assert_int_equal(srv_route_find(routes, n, routes[i].method, buf,
						&m),
				 ERR_NONE);
		assert_ptr_equal(m.route, &routes[i]);
	}
	strcpy(buf, "/api/v1/apps/com.example.app/dsyms");
	assert_int_equal(srv_route_find(routes, n, "POST", buf, &m), ERR_NONE);
	assert_int_equal(m.route->body, SRV_BODY_FILE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literal_and_params),
		cmocka_unit_test(test_method_picks_the_route),
		cmocka_unit_test(test_404_and_405),
		cmocka_unit_test(test_params_decode_after_the_split),
		cmocka_unit_test(test_server_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
