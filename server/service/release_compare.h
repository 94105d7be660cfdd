/*
 * release_compare.h — the verdict of a release comparison for one group
 * (SPEC §10.3; docs/TRIAGE.md): whether its rate of affected user-days
 * changed between a base and a target version beyond chance, by the pooled
 * two-proportion z-test. Pure arithmetic, no allocation.
 */
#ifndef STALLSCOPE_SERVER_RELEASE_COMPARE_H
#define STALLSCOPE_SERVER_RELEASE_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

/* A version's side of a comparison: the group's affected user-days out of
 * the version's sampled user-days. */
typedef struct srv_release_compare_proportion {
	int64_t affected, sampled;
} srv_release_compare_proportion;

typedef enum srv_release_compare_verdict {
	SRV_RELEASE_COMPARE_SAME,
	SRV_RELEASE_COMPARE_NEW,
	SRV_RELEASE_COMPARE_WORSE,
	SRV_RELEASE_COMPARE_BETTER,
} srv_release_compare_verdict;

/* The two-sided p-value of the pooled two-proportion z-test of A against
 * B: 1 when either has no sampled user-day or the pooled proportion is 0
 * or 1 (nothing to tell apart). */
double srv_release_compare_p(srv_release_compare_proportion a, srv_release_compare_proportion b);

/* The 95% Wald interval of TARGET's rate minus BASE's into OUT[0] (low)
 * and OUT[1] (high): the difference ± 1.96 standard errors, each side's
 * variance p (1 − p) / n. False (OUT untouched) when either side has no
 * sampled user-day. */
bool srv_release_compare_diff_ci(srv_release_compare_proportion base,
				 srv_release_compare_proportion target, double out[2]);

/*
 * The verdict for a group with BASE_REPORTS stored reports in the base
 * version (whitelisted users' included) and the proportions BASE and
 * TARGET: new when BASE_REPORTS is 0 and TARGET has at least 5 affected
 * user-days; worse (better) when the test's p < 0.01 and the target's rate
 * is at least 1.5 times (at most 1/1.5 times) the base's; else same.
 */
srv_release_compare_verdict srv_release_compare(int64_t base_reports,
						srv_release_compare_proportion base,
						srv_release_compare_proportion target);

/* "same", "new", "worse", "better". */
const char *srv_release_compare_verdict_name(srv_release_compare_verdict v);

#endif
