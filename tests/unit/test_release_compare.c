/* test_release_compare.c — the release comparison's statistics (SPEC §10.3):
 * the two-proportion test against a p-value integrated here from the
 * normal density, and each verdict at and beside its thresholds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "server/service/release_compare.h"

/* 2 * P(Z > |z|) by Simpson's rule over the standard normal density from
 * |z| to |z| + 12 (the rest is below 1e-30). */
static double two_sided_tail(double z)
{
	const int n = 200000;
	double a = fabs(z), b = a + 12.0, h = (b - a) / n, sum = 0.0;
	for (int i = 0; i <= n; i++) {
		double x = a + i * h;
		double f = exp(-x * x / 2.0) / sqrt(2.0 * M_PI);
		sum += f * (i == 0 || i == n ? 1.0 : (i % 2 ? 4.0 : 2.0));
	}
	return 2.0 * sum * h / 3.0;
}

/* The pooled z statistic, written out from the textbook formula. */
static double pooled_z(double x1, double n1, double x2, double n2)
{
	double p = (x1 + x2) / (n1 + n2);
	return (x1 / n1 - x2 / n2) / sqrt(p * (1 - p) * (1 / n1 + 1 / n2));
}

static srv_release_compare_proportion prop(int64_t affected, int64_t sampled)
{
	return (srv_release_compare_proportion){affected, sampled};
}

static void test_p_value(void **state)
{
	(void)state;
	const int64_t cases[][4] = {{30, 1000, 60, 1000},
				    {5, 400, 2, 100},
				    {120, 5000, 100, 5000},
				    {1, 20, 0, 30},
				    {700, 900, 10, 50}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const int64_t *c = cases[i];
		double want = two_sided_tail(
			pooled_z((double)c[0], (double)c[1], (double)c[2], (double)c[3]));
		double got = srv_release_compare_p(prop(c[0], c[1]), prop(c[2], c[3]));
		assert_true(fabs(got - want) <= 1e-9 + 1e-7 * want);
		/* Two-sided: the order of the sides does not matter. */
		assert_true(fabs(srv_release_compare_p(prop(c[2], c[3]), prop(c[0], c[1])) - got) <
			    1e-12);
	}
	/* z = 1.959964 is the 5% point of the two-sided test. */
	assert_true(fabs(two_sided_tail(1.959964) - 0.05) < 1e-6);
	/* Nothing to test: an empty side, or both sides all 0 or all 1. */
	assert_true(srv_release_compare_p(prop(0, 0), prop(5, 10)) == 1.0);
	assert_true(srv_release_compare_p(prop(0, 100), prop(0, 50)) == 1.0);
	assert_true(srv_release_compare_p(prop(100, 100), prop(50, 50)) == 1.0);
	assert_true(srv_release_compare_p(prop(10, 100), prop(10, 100)) == 1.0);
}

/* The 95% Wald interval of target − base, written out from the textbook
 * formula with the 97.5th percentile found here by bisection on the tail
 * integral above; none without sampled user-days on a side. */
static void test_diff_ci(void **state)
{
	(void)state;
	double lo = 1.0, hi = 3.0;
	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2.0;
		(two_sided_tail(mid) > 0.05 ? &lo : &hi)[0] = mid;
	}
	const double z = (lo + hi) / 2.0;
	const int64_t cases[][4] = {{30, 1000, 60, 1000}, {5, 400, 2, 100}, {0, 50, 7, 80}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const int64_t *c = cases[i];
		double pb = (double)c[0] / (double)c[1], pt = (double)c[2] / (double)c[3];
		double se = sqrt(pb * (1 - pb) / (double)c[1] + pt * (1 - pt) / (double)c[3]);
		double ci[2];
		assert_true(srv_release_compare_diff_ci(prop(c[0], c[1]), prop(c[2], c[3]), ci));
		assert_true(fabs(ci[0] - (pt - pb - z * se)) < 1e-7);
		assert_true(fabs(ci[1] - (pt - pb + z * se)) < 1e-7);
	}
	double untouched[2] = {7.0, 7.0};
	assert_false(srv_release_compare_diff_ci(prop(0, 0), prop(3, 10), untouched));
	assert_false(srv_release_compare_diff_ci(prop(3, 10), prop(0, 0), untouched));
	assert_true(untouched[0] == 7.0 && untouched[1] == 7.0);
}

static void test_verdicts(void **state)
{
	(void)state;
	/* Same rate, large samples. */
	assert_int_equal(srv_release_compare(40, prop(40, 1000), prop(80, 2000)),
			 SRV_RELEASE_COMPARE_SAME);
	/* Three times as frequent with enough users. */
	assert_int_equal(srv_release_compare(20, prop(20, 1000), prop(60, 1000)),
			 SRV_RELEASE_COMPARE_WORSE);
	assert_int_equal(srv_release_compare(60, prop(60, 1000), prop(20, 1000)),
			 SRV_RELEASE_COMPARE_BETTER);
	/* Rare in both: a ratio of 3 that the test cannot tell from chance. */
	assert_true(srv_release_compare_p(prop(1, 1000), prop(3, 1000)) >= 0.01);
	assert_int_equal(srv_release_compare(1, prop(1, 1000), prop(3, 1000)),
			 SRV_RELEASE_COMPARE_SAME);
	/* Significant but a ratio under 1.5: same. */
	assert_true(srv_release_compare_p(prop(1000, 10000), prop(1300, 10000)) < 0.01);
	assert_int_equal(srv_release_compare(1000, prop(1000, 10000), prop(1300, 10000)),
			 SRV_RELEASE_COMPARE_SAME);
	assert_int_equal(srv_release_compare(1000, prop(1000, 10000), prop(1500, 10000)),
			 SRV_RELEASE_COMPARE_WORSE);
	assert_int_equal(srv_release_compare(1500, prop(1500, 10000), prop(1000, 10000)),
			 SRV_RELEASE_COMPARE_BETTER);
	/* New: no report in the base and 5 affected user-days in the target;
	 * 4 are not enough, nor is a base with reports only from
	 * whitelisted users (affected 0, reports 3). */
	assert_int_equal(srv_release_compare(0, prop(0, 1000), prop(5, 1000)),
			 SRV_RELEASE_COMPARE_NEW);
	assert_int_equal(srv_release_compare(0, prop(0, 1000), prop(4, 1000)),
			 SRV_RELEASE_COMPARE_SAME);
	assert_int_equal(srv_release_compare(3, prop(0, 1000), prop(5, 1000)),
			 SRV_RELEASE_COMPARE_SAME);
	/* A base rate of 0 with a significant target is worse (no division). */
	assert_int_equal(srv_release_compare(3, prop(0, 1000), prop(40, 1000)),
			 SRV_RELEASE_COMPARE_WORSE);
	assert_string_equal(srv_release_compare_verdict_name(SRV_RELEASE_COMPARE_NEW), "new");
	assert_string_equal(srv_release_compare_verdict_name(SRV_RELEASE_COMPARE_WORSE), "worse");
	assert_string_equal(srv_release_compare_verdict_name(SRV_RELEASE_COMPARE_BETTER), "better");
	assert_string_equal(srv_release_compare_verdict_name(SRV_RELEASE_COMPARE_SAME), "same");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_p_value),
		cmocka_unit_test(test_diff_ci),
		cmocka_unit_test(test_verdicts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
