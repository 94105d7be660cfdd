/*
 * sampling.h — the Matrix upload policy as pure decisions (SPEC §5): who is
 * sampled on a UTC day, and whether one more report may be stored given
 * the whitelist and the quota already used. Counting reports is the
 * store's job; nothing here touches a database or keeps state.
 */
#ifndef STALLSCOPE_INGEST_SAMPLING_H
#define STALLSCOPE_INGEST_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Length of "YYYY-MM-DD" plus NUL. */
#define ING_DAY_LEN 11

/* Writes T's UTC day as "YYYY-MM-DD" to OUT. Returns 0, or -1 (OUT empty)
 * when T is outside years 1900…9999. */
int ing_utc_day(time_t t, char out[ING_DAY_LEN]);

/*
 * True iff XXH3_64bits(APP "\0" USER "\0" DAY) / 2^64 < RATE, compared
 * exactly in integers (see sampling.c). RATE ≤ 0 or NaN: never; ≥ 1:
 * always. APP is the bundle id, DAY "YYYY-MM-DD"; NULL strings count as "".
 */
bool ing_sampled(const char *app, const char *user, const char *day,
		 double rate);

typedef enum ing_sample_reason {
	ING_REASON_SAMPLED = 0,
	ING_REASON_WHITELISTED,
	ING_REASON_NOT_SAMPLED,
	ING_REASON_QUOTA_EXHAUSTED,
} ing_sample_reason;

/* "sampled", "whitelisted", "not_sampled", "quota_exhausted". */
const char *ing_sample_reason_name(ing_sample_reason reason);

typedef struct ing_sampling_input {
	bool sampled;            /* ing_sampled() for this app/user/day */
	bool whitelisted;        /* the user has a whitelist row */
	bool whitelist_expires;  /* the row has an expiry … */
	time_t whitelist_expiry; /* … at this instant (exclusive) */
	time_t now;
	uint32_t daily_quota;    /* reports per user per day (20) */
	uint32_t used_today;     /* reports already stored today */
} ing_sampling_input;

typedef struct ing_sampling_decision {
	bool upload;
	ing_sample_reason reason;
	/* Reports still allowed today after the ones already stored; -1 for
	 * a whitelisted user (no quota). 0 when not sampled. */
	int64_t quota_remaining;
} ing_sampling_decision;

/*
 * The decision for one more report: a whitelisted user whose row has not
 * expired (now < expiry) always uploads; else a user not sampled does not;
 * else the quota decides (used_today < daily_quota: the first
 * daily_quota reports of the day win).
 */
ing_sampling_decision ing_sampling_decide(const ing_sampling_input *in);

#endif
