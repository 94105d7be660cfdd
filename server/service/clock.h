/*
 * clock.h — the time the server considers "now": the UTC day a report is
 * received decides sampling, quota, partitions and retention.
 *
 * STALLSCOPE_FAKE_NOW (a UNIX time), when set, replaces the real clock for
 * the whole process; it exists so tests can receive reports "yesterday"
 * and "next week" against a real server, and is documented as test-only.
 */
#ifndef STALLSCOPE_SERVER_CLOCK_H
#define STALLSCOPE_SERVER_CLOCK_H

#include <stddef.h>
#include <time.h>

time_t srv_now(void);

/* NOW as "YYYY-MM-DDTHH:MM:SSZ" into OUT (CAP ≥ 21). */
void srv_format_time(time_t now, char *out, size_t cap);

#endif
