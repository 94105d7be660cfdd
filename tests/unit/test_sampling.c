/* test_sampling.c — SPEC §5: the daily sample, the exact threshold, UTC
 * days and the upload decision (whitelist, quota). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "ingest/sampling.h"

#define APP "com.example.app"
#define NUSERS 100000

/* The hash computed here from the exact byte string of SPEC §5. */
static uint64_t spec_hash(const char *app, const char *user, const char *day)
{
	char buf[256];
	size_t la = strlen(app), lu = strlen(user), ld = strlen(day);
	assert_true(la + lu + ld + 2 <= sizeof buf);
	memcpy(buf, app, la);
	buf[la] = '\0';
	memcpy(buf + la + 1, user, lu);
	buf[la + 1 + lu] = '\0';
	memcpy(buf + la + 2 + lu, day, ld);
	return XXH3_64bits(buf, la + lu + ld + 2);
}

static void test_share_and_stability(void **state)
{
	(void)state;
	static bool day1[NUSERS];
	size_t n1 = 0, n2 = 0, both = 0;
	char user[32];
	for (int i = 0; i < NUSERS; i++) {
		snprintf(user, sizeof user, "user-%d", i);
		day1[i] = ing_sampled(APP, user, "2026-11-22", 0.05);
		n1 += day1[i];
		/* Same answer all day. */
		assert_int_equal(ing_sampled(APP, user, "2026-11-22", 0.05),
				 day1[i]);
		/* And the same as the spec's formula computed here. */
		bool expect = ldexp((double)spec_hash(APP, user, "2026-11-22"),
				    -64) < 0.05;
		assert_int_equal(day1[i], expect);
		bool d2 = ing_sampled(APP, user, "2026-11-23", 0.05);
		n2 += d2;
		both += d2 && day1[i];
	}
	double share1 = (double)n1 / NUSERS, share2 = (double)n2 / NUSERS;
	printf("share day1 %.4f day2 %.4f overlap %zu of %zu\n", share1,
	       share2, both, n1);
	assert_true(share1 >= 0.045 && share1 <= 0.055);
	assert_true(share2 >= 0.045 && share2 <= 0.055);
	/* A different set the next day: about 5% of yesterday's sample. */
	double overlap = (double)both / (double)n1;
	assert_true(overlap >= 0.03 && overlap <= 0.07);
	/* Another app samples other users. */
	size_t other = 0;
	for (int i = 0; i < NUSERS; i++) {
		snprintf(user, sizeof user, "user-%d", i);
		other += day1[i] && ing_sampled("com.other.app", user,
						"2026-11-22", 0.05);
	}
	assert_true(other < n1 / 5);
}

static void test_rate_edges(void **state)
{
	(void)state;
	assert_false(ing_sampled(APP, "u", "2026-11-22", 0));
	assert_false(ing_sampled(APP, "u", "2026-11-22", -1));
	assert_false(ing_sampled(APP, "u", "2026-11-22", NAN));
	assert_true(ing_sampled(APP, "u", "2026-11-22", 1));
	assert_true(ing_sampled(APP, "u", "2026-11-22", 2));
	size_t all = 0;
	char user[32];
	for (int i = 0; i < 1000; i++) {
		snprintf(user, sizeof user, "u%d", i);
		all += ing_sampled(APP, user, "2026-11-22", 0.999999);
	}
	assert_true(all >= 995);
}

/* The threshold is compared exactly: find a user whose hash h ≥ 2^63 has
 * low bits above half a double ulp (2048), so (double)h rounds up to
 * T = the next multiple of 2048. With rate = T / 2^64, h < T must be
 * sampled (a float comparison would say h == T); with rate = the multiple
 * below h it must not be. */
static void test_exact_threshold(void **state)
{
	(void)state;
	char user[32];
	for (int i = 0;; i++) {
		assert_true(i < 1000000);
		snprintf(user, sizeof user, "edge-%d", i);
		uint64_t h = spec_hash(APP, user, "2026-11-22");
		if (h < (1ULL << 63) || (h & 0x7ff) <= 1024 ||
		    h > UINT64_MAX - 4096)
			continue;
		uint64_t above = (h | 0x7ff) + 1, below = h & ~0x7ffULL;
		assert_true((double)h == (double)above); /* rounds up */
		double rate_above = ldexp((double)above, -64);
		double rate_below = ldexp((double)below, -64);
		assert_true(ing_sampled(APP, user, "2026-11-22", rate_above));
		assert_false(ing_sampled(APP, user, "2026-11-22", rate_below));
		break;
	}
	/* A user whose hash is exactly representable: equal is not less. */
	for (int i = 0;; i++) {
		assert_true(i < 10000000);
		snprintf(user, sizeof user, "eq-%d", i);
		uint64_t h = spec_hash(APP, user, "2026-11-22");
		if (h < (1ULL << 63) || (h & 0x7ff) != 0)
			continue;
		double rate = ldexp((double)h, -64);
		assert_false(ing_sampled(APP, user, "2026-11-22", rate));
		assert_true(ing_sampled(APP, user, "2026-11-22",
					nextafter(rate, 1.0)));
		break;
	}
}

static void test_utc_day(void **state)
{
	(void)state;
	char day[ING_DAY_LEN];
	assert_int_equal(ing_utc_day(0, day), 0);
	assert_string_equal(day, "1970-01-01");
	assert_int_equal(ing_utc_day(1795305600, day), 0); /* 2026-11-22 */
	assert_string_equal(day, "2026-11-22");
	assert_int_equal(ing_utc_day(1795305600 - 1, day), 0);
	assert_string_equal(day, "2026-11-21");
	assert_int_equal(ing_utc_day(1795305600 + 86399, day), 0);
	assert_string_equal(day, "2026-11-22");
	assert_int_equal(ing_utc_day(951782400, day), 0);
	assert_string_equal(day, "2000-02-29");
	assert_int_equal(ing_utc_day((time_t)400000000000LL, day), -1);
	assert_string_equal(day, "");
}

static void test_decision(void **state)
{
	(void)state;
	ing_sampling_input in = {.sampled = true, .daily_quota = 20,
				 .now = 1000};
	ing_sampling_decision d;
	in.used_today = 0;
	d = ing_sampling_decide(&in);
	assert_true(d.upload);
	assert_int_equal(d.reason, ING_REASON_SAMPLED);
	assert_int_equal(d.quota_remaining, 20);
	/* The 20th report is allowed, the 21st is not. */
	in.used_today = 19;
	d = ing_sampling_decide(&in);
	assert_true(d.upload);
	assert_int_equal(d.quota_remaining, 1);
	in.used_today = 20;
	d = ing_sampling_decide(&in);
	assert_false(d.upload);
	assert_int_equal(d.reason, ING_REASON_QUOTA_EXHAUSTED);
	assert_int_equal(d.quota_remaining, 0);
	assert_string_equal(ing_sample_reason_name(d.reason), "quota_exhausted");
	/* Not sampled. */
	in.sampled = false;
	in.used_today = 0;
	d = ing_sampling_decide(&in);
	assert_false(d.upload);
	assert_int_equal(d.reason, ING_REASON_NOT_SAMPLED);
	assert_string_equal(ing_sample_reason_name(d.reason), "not_sampled");
	/* Whitelisted: always, no quota, even when not sampled and over. */
	in.whitelisted = true;
	in.used_today = 500;
	d = ing_sampling_decide(&in);
	assert_true(d.upload);
	assert_int_equal(d.reason, ING_REASON_WHITELISTED);
	assert_int_equal(d.quota_remaining, -1);
	assert_string_equal(ing_sample_reason_name(d.reason), "whitelisted");
	/* Expiry: valid before, not at or after. */
	in.whitelist_expires = true;
	in.whitelist_expiry = 1001;
	assert_int_equal(ing_sampling_decide(&in).reason,
			 ING_REASON_WHITELISTED);
	in.whitelist_expiry = 1000;
	assert_int_equal(ing_sampling_decide(&in).reason,
			 ING_REASON_NOT_SAMPLED);
	in.sampled = true;
	assert_int_equal(ing_sampling_decide(&in).reason,
			 ING_REASON_QUOTA_EXHAUSTED);
	assert_string_equal(ing_sample_reason_name(ING_REASON_SAMPLED),
			    "sampled");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_share_and_stability),
		cmocka_unit_test(test_rate_edges),
		cmocka_unit_test(test_exact_threshold),
		cmocka_unit_test(test_utc_day),
		cmocka_unit_test(test_decision),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
