/*
 * sampling.c — SPEC §5 decisions: deterministic per (app, user, UTC day).
 *
 * The sampling test h / 2^64 < rate is decided without floating-point
 * rounding: rate * 2^64 is an exact double (scaling by a power of two), so
 * with T = rate * 2^64 and L = floor(T) (exact, T < 2^64),
 *   h < T  ⟺  h < L      when T is an integer,
 *          ⟺  h ≤ L      otherwise,
 * which is a comparison of 64-bit integers. Converting h to double instead
 * would round hashes near the threshold and make the answer depend on it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ingest/sampling.h"

int ing_utc_day(time_t t, char out[ING_DAY_LEN])
{
	struct tm tm;
	out[0] = '\0';
	if (!gmtime_r(&t, &tm) || tm.tm_year > 9999 - 1900)
		return -1;
	if (tm.tm_year < 0) /* strftime's %Y would not pad to 4 digits */
		return -1;
	if (strftime(out, ING_DAY_LEN, "%Y-%m-%d", &tm) != ING_DAY_LEN - 1) {
		out[0] = '\0';
		return -1;
	}
	return 0;
}

bool ing_sampled(const char *app, const char *user, const char *day,
		 double rate)
{
	if (!(rate > 0))
		return false; /* also NaN */
	if (rate >= 1)
		return true;
	static const char nul = '\0';
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	if (app)
		XXH3_64bits_update(&st, app, strlen(app));
	XXH3_64bits_update(&st, &nul, 1);
	if (user)
		XXH3_64bits_update(&st, user, strlen(user));
	XXH3_64bits_update(&st, &nul, 1);
	if (day)
		XXH3_64bits_update(&st, day, strlen(day));
	uint64_t h = XXH3_64bits_digest(&st);

	double t = ldexp(rate, 64); /* exact: 0 < t < 2^64 */
	uint64_t l = (uint64_t)t;
	return (double)l == t ? h < l : h <= l;
}

const char *ing_sample_reason_name(ing_sample_reason reason)
{
	switch (reason) {
	case ING_REASON_SAMPLED: return "sampled";
	case ING_REASON_WHITELISTED: return "whitelisted";
	case ING_REASON_NOT_SAMPLED: return "not_sampled";
	case ING_REASON_QUOTA_EXHAUSTED: return "quota_exhausted";
	}
	return "unknown";
}

ing_sampling_decision ing_sampling_decide(const ing_sampling_input *in)
{
	ing_sampling_decision d = {0};
	if (in->whitelisted &&
	    (!in->whitelist_expires || in->now < in->whitelist_expiry)) {
		d.upload = true;
		d.reason = ING_REASON_WHITELISTED;
		d.quota_remaining = -1;
		return d;
	}
	if (!in->sampled) {
		d.reason = ING_REASON_NOT_SAMPLED;
		return d;
	}
	if (in->used_today >= in->daily_quota) {
		d.reason = ING_REASON_QUOTA_EXHAUSTED;
		return d;
	}
	d.upload = true;
	d.reason = ING_REASON_SAMPLED;
	d.quota_remaining = (int64_t)in->daily_quota - in->used_today;
	return d;
}
