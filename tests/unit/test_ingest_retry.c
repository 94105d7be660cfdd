/* test_ingest_retry.c — the ingest handler's stale-policy retry: a commit
 * made under a cached policy version older than the database's config
 * version is refused as stale, and the report is made again under the
 * refreshed policy, a bounded number of times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/api/ingest/ingest.h"
#include "store/store.h"

static void test_decision(void **state)
{
	(void)state;
	assert_true(srv_ingest_retry_stale(0, ST_INGEST_STALE, 1));
	assert_true(srv_ingest_retry_stale(0, ST_INGEST_STALE, 2));
	/* The last attempt's staleness is the answer (503), not a retry. */
	assert_false(srv_ingest_retry_stale(0, ST_INGEST_STALE, 3));
	assert_false(srv_ingest_retry_stale(0, ST_INGEST_STALE, 4));
	/* Anything but staleness ends it at once. */
	const st_ingest_outcome final[] = {ST_INGEST_STORED, ST_INGEST_DUPLICATE,
					   ST_INGEST_NOT_SAMPLED, ST_INGEST_QUOTA};
	for (size_t i = 0; i < sizeof final / sizeof final[0]; i++)
		assert_false(srv_ingest_retry_stale(0, final[i], 1));
	/* So does a store failure, whatever the outcome says. */
	assert_false(srv_ingest_retry_stale(ST_SOFT_ERROR, ST_INGEST_STALE, 1));
	assert_false(srv_ingest_retry_stale(ST_HARD_ERROR, ST_INGEST_STALE, 1));
}

/*
 * A database whose config version is bumped CHANGES times, once right after
 * each read of the policy (the worst race): each commit under the cached
 * version sees the database move on. The handler's loop, driven by the
 * decision, stores the report once the changes stop, within the bound.
 */
static void test_racing_policy_changes(void **state)
{
	(void)state;
	for (int changes = 0; changes <= 5; changes++) {
		int64_t db_version = 1, cached = 1;
		int left = changes, commits = 0, refreshes = 0;
		st_ingest_outcome outcome;
		for (int attempt = 1;; attempt++) {
			if (left > 0) {
				db_version++;
				left--;
			}
			commits++;
			outcome = cached == db_version ? ST_INGEST_STORED : ST_INGEST_STALE;
			if (!srv_ingest_retry_stale(0, outcome, attempt))
				break;
			cached = db_version;
			refreshes++;
		}
		int expect_commits = changes + 1 < 3 ? changes + 1 : 3;
		assert_int_equal(commits, expect_commits);
		assert_int_equal(refreshes, expect_commits - 1);
		assert_int_equal(outcome, changes < 3 ? ST_INGEST_STORED : ST_INGEST_STALE);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decision),
		cmocka_unit_test(test_racing_policy_changes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
