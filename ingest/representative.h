/*
 * representative.h — the stack a report is grouped by (SPEC §4.4).
 */
#ifndef STALLSCOPE_INGEST_REPRESENTATIVE_H
#define STALLSCOPE_INGEST_REPRESENTATIVE_H

#include "ingest/report.h"

typedef enum ing_rep_source {
	ING_REP_NONE = 0,  /* the report has no stack at all */
	ING_REP_SAMPLES,   /* heaviest stack of samples */
	ING_REP_MAIN,      /* the thread marked main */
	ING_REP_FIRST,     /* the first thread */
} ing_rep_source;

/*
 * The representative stack of R: the heaviest stack of R->samples (Matrix:
 * samples whose innermost frame has the same address are the same stack;
 * the most repeated wins; on a tie the most recent — greatest t_ms, then
 * latest in the array — and the returned stack is that most recent sample
 * of the winning group), else the first thread marked main, else the first
 * thread. Samples with no frames are ignored. Allocates O(samples)
 * scratch (freed before returning); if that fails, samples are skipped.
 * Returns a pointer into R (valid as long as R's arena), or NULL when R has
 * no thread and no usable sample. OUT_SOURCE (may be NULL) says which rule
 * chose it.
 */
const ing_stack *ing_representative(const ing_report *r,
				    ing_rep_source *out_source);

#endif
