/*
 * log.h — one-line log records on stderr: "2026-11-22T10:00:00Z level msg".
 * Two kinds of trouble are kept apart (Taler's GNUNET_break vs _op):
 * CM_BUG is a defect of ours, CM_CLIENT bad input from a client.
 * Thread-safe: each record is written with a single write(2).
 */
#ifndef STALLSCOPE_COMMON_LOG_H
#define STALLSCOPE_COMMON_LOG_H

typedef enum cm_log_level {
	CM_DEBUG,
	CM_INFO,
	CM_WARN,
	CM_ERROR,
	CM_BUG,    /* our own defect: should never happen */
	CM_CLIENT, /* a client sent something we refuse */
} cm_log_level;

/* Records below LEVEL are dropped (default CM_INFO). */
void cm_log_set_level(cm_log_level level);

void cm_log(cm_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
