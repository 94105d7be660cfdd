/* check.c — see check.h. */
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"

#ifndef NDEBUG
void cm_check_failed(const char *file, int line, const char *expr)
{
	/* stderr directly: the log may be what broke. */
	fprintf(stderr, "%s:%d: contract broken: %s\n", file, line, expr);
	fflush(stderr);
	abort();
}
#endif
