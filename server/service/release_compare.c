/* release_compare.c — see release_compare.h. */
#include <math.h>

#include "server/service/release_compare.h"

/* SPEC §10.3's thresholds. */
#define NEW_MIN_AFFECTED 5
#define ALPHA		 0.01
#define RATIO		 1.5

double srv_release_compare_p(srv_release_compare_proportion a, srv_release_compare_proportion b)
{
	if (a.sampled <= 0 || b.sampled <= 0)
		return 1.0;
	double na = (double)a.sampled, nb = (double)b.sampled;
	double pooled = ((double)a.affected + (double)b.affected) / (na + nb);
	double var = pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb);
	if (!(var > 0.0))
		return 1.0;
	double z = ((double)a.affected / na - (double)b.affected / nb) / sqrt(var);
	/* P(|Z| >= |z|) = 2 (1 - Phi(|z|)) = erfc(|z| / sqrt 2), without the
	 * cancellation 1 - Phi would have in the tail. */
	return erfc(fabs(z) / sqrt(2.0));
}

/* The standard normal's 97.5th percentile: a two-sided 95% interval. */
#define Z_95 1.959963984540054

bool srv_release_compare_diff_ci(srv_release_compare_proportion base,
				 srv_release_compare_proportion target, double out[2])
{
	if (base.sampled <= 0 || target.sampled <= 0)
		return false;
	double nb = (double)base.sampled, nt = (double)target.sampled;
	double pb = (double)base.affected / nb, pt = (double)target.affected / nt;
	double se = sqrt(pb * (1.0 - pb) / nb + pt * (1.0 - pt) / nt);
	out[0] = pt - pb - Z_95 * se;
	out[1] = pt - pb + Z_95 * se;
	return true;
}

srv_release_compare_verdict srv_release_compare(int64_t base_reports,
						srv_release_compare_proportion base,
						srv_release_compare_proportion target)
{
	if (base_reports == 0 && target.affected >= NEW_MIN_AFFECTED)
		return SRV_RELEASE_COMPARE_NEW;
	if (srv_release_compare_p(base, target) >= ALPHA)
		return SRV_RELEASE_COMPARE_SAME;
	/* Cross-multiplied, so a base rate of 0 needs no division: the ratio
	 * target/base compared with RATIO and 1/RATIO. */
	double rb = (double)base.affected * (double)target.sampled;
	double rt = (double)target.affected * (double)base.sampled;
	if (rt >= RATIO * rb)
		return SRV_RELEASE_COMPARE_WORSE;
	if (rt * RATIO <= rb)
		return SRV_RELEASE_COMPARE_BETTER;
	return SRV_RELEASE_COMPARE_SAME;
}

const char *srv_release_compare_verdict_name(srv_release_compare_verdict v)
{
	switch (v) {
	case SRV_RELEASE_COMPARE_NEW: return "new";
	case SRV_RELEASE_COMPARE_WORSE: return "worse";
	case SRV_RELEASE_COMPARE_BETTER: return "better";
	case SRV_RELEASE_COMPARE_SAME: break;
	}
	return "same";
}
