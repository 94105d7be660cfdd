/* clock.c — see clock.h. */
#include <errno.h>
#include <stdlib.h>

#include "server/service/clock.h"

time_t srv_now(void)
{
	const char *fake = getenv("STALLSCOPE_FAKE_NOW");
	if (fake && *fake) {
		errno = 0;
		char *end;
		long long v = strtoll(fake, &end, 10);
		if (!errno && *end == '\0' && v >= 0)
			return (time_t)v;
	}
	return time(NULL);
}

void srv_format_time(time_t now, char *out, size_t cap)
{
	struct tm tm;
	gmtime_r(&now, &tm);
	if (strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0 && cap)
		out[0] = '\0';
}
