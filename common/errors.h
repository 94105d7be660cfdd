/*
 * errors.h — client-visible error codes, generated from errors.def.
 * Pure data: no allocation, no state.
 */
#ifndef STALLSCOPE_COMMON_ERRORS_H
#define STALLSCOPE_COMMON_ERRORS_H

typedef enum cm_err {
#define ERR(e, code, status, msg) e,
#include "common/errors.def"
#undef ERR
	ERR__COUNT
} cm_err;

/* The wire code ("not_sampled"), HTTP status and default message of E. */
const char *cm_err_code(cm_err e);
unsigned cm_err_status(cm_err e);
const char *cm_err_message(cm_err e);
/* ERRNUM of a failed write to the data dir as a client sees it: a full
 * disk (or quota) is 507, which the client may retry once space is freed;
 * anything else is ERR_STORAGE. */
cm_err cm_err_storage(int errnum);

#endif
