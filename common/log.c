/* log.c — see log.h. */
#include "common/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static atomic_int min_level = CM_INFO;

void cm_log_set_level(cm_log_level level)
{
	atomic_store(&min_level, (int)level);
}

static const char *level_name(cm_log_level level)
{
	switch (level) {
	case CM_DEBUG: return "debug";
	case CM_INFO: return "info";
	case CM_WARN: return "warn";
	case CM_ERROR: return "error";
	case CM_BUG: return "BUG";
	case CM_CLIENT: return "client";
	}
	return "?";
}

void cm_log(cm_log_level level, const char *fmt, ...)
{
	if ((int)level < atomic_load(&min_level))
		return;
	char line[2048];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	size_t n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%SZ ", &tm);
	int k = snprintf(line + n, sizeof line - n, "%s ", level_name(level));
	if (k > 0)
		n += (size_t)k;
	va_list ap;
	va_start(ap, fmt);
	k = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
	va_end(ap);
	if (k > 0)
		n = n + (size_t)k < sizeof line - 1 ? n + (size_t)k : sizeof line - 2;
	line[n++] = '\n';
	/* One write per record so concurrent threads never interleave lines. */
	ssize_t w = write(STDERR_FILENO, line, n);
	(void)w;
}
