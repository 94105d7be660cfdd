/*
 * measure_commit.h — an Android app's startup or frames measurement
 * (Matrix's Trace_StartUp, Trace_FPS; SPEC §13) counted into its day's
 * aggregates (store/measures.h), under the app's upload policy: a user
 * the day's sample does not hold and the whitelist does not list is
 * refused as for a report. Measurements do not count against the daily
 * report quota — an app starts many times a day, and Trace_FPS reports
 * every scene every ten seconds; the quota keeps stalls from one user
 * from crowding out the others', which these cannot do (docs/ANDROID.md).
 */
#ifndef STALLSCOPE_SERVER_MEASURE_COMMIT_H
#define STALLSCOPE_SERVER_MEASURE_COMMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "ingest/parse.h"

typedef enum srv_measure_outcome {
	SRV_MEASURE_STORED,
	SRV_MEASURE_DUPLICATE,	 /* its key was counted before */
	SRV_MEASURE_NOT_SAMPLED, /* the user is neither sampled nor listed */
} srv_measure_outcome;

/*
 * Counts M of APP_ID, received on DAY at AT (RFC 3339), SAMPLED telling
 * whether the day's sample holds its user, in one transaction. 1 with
 * *OUT, or a negative st_status.
 */
int srv_measure_commit(int64_t app_id, const char *day, const char *at, bool sampled,
		       const ing_measure *m, srv_measure_outcome *out);

#endif
