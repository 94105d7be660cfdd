/*
 * check.h — contracts the code states, checked (SQLite's ALWAYS/NEVER).
 *
 * ALWAYS(x) says x holds, NEVER(x) says it does not; both are expressions
 * worth x, written where a broken contract still has a defensive branch:
 *
 *	if (NEVER(queue_head == NULL))
 *		return 0;
 *
 * Checked (the default; off when NDEBUG is defined, as for assert): a
 * broken contract logs file:line and the expression, then aborts, so the
 * unit, integration, sanitizer and fuzz builds stop at the bug. Unchecked:
 * ALWAYS(x) and NEVER(x) are x, and the defensive branch is taken. Keep them
 * off per-frame and per-row paths unless the test is free.
 */
#ifndef STALLSCOPE_COMMON_CHECK_H
#define STALLSCOPE_COMMON_CHECK_H

#ifndef NDEBUG
#define CM_CHECKED 1
_Noreturn void cm_check_failed(const char *file, int line, const char *expr);
#define ALWAYS(x) ((x) ? 1 : (cm_check_failed(__FILE__, __LINE__, "ALWAYS(" #x ")"), 0))
#define NEVER(x)  ((x) ? (cm_check_failed(__FILE__, __LINE__, "NEVER(" #x ")"), 1) : 0)
#else
#define CM_CHECKED 0
#define ALWAYS(x)  (!!(x))
#define NEVER(x)   (!!(x))
#endif

#endif
