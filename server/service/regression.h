/*
 * regression.h — the verdict of a release comparison for one group (SPEC
 * §10.3; docs/TRIAGE.md): whether its rate of affected user-days changed
 * between a base and a target version beyond chance. Pure arithmetic, no
 * allocation.
 */
#ifndef STALLSCOPE_SERVER_REGRESSION_H
#define STALLSCOPE_SERVER_REGRESSION_H

#include <stdbool.h>
#include <stdint.h>

/* A version's side of a comparison: the group's affected user-days out of
 * the version's sampled user-days. */
typedef struct srv_proportion {
	int64_t affected, sampled;
} srv_proportion;

typedef enum srv_verdict {
	SRV_VERDICT_SAME,
	SRV_VERDICT_NEW,
	SRV_VERDICT_WORSE,
	SRV_VERDICT_BETTER,
} srv_verdict;

/* The two-sided p-value of the pooled two-proportion z-test of A against
 * B: 1 when either has no sampled user-day or the pooled proportion is 0
 * or 1 (nothing to tell apart). */
double srv_two_proportion_p(srv_proportion a, srv_proportion b);

/*
 * The verdict for a group with BASE_REPORTS stored reports in the base
 * version (whitelisted users' included) and the proportions BASE and
 * TARGET: new when BASE_REPORTS is 0 and TARGET has at least 5 affected
 * user-days; worse (better) when the test's p < 0.01 and the target's rate
 * is at least 1.5 times (at most 1/1.5 times) the base's; else same.
 */
srv_verdict srv_compare_verdict(int64_t base_reports, srv_proportion base, srv_proportion target);

/* "same", "new", "worse", "better". */
const char *srv_verdict_name(srv_verdict v);

#endif
