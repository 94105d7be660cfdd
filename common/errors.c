/* errors.c — the table behind errors.h, expanded from errors.def. */
#include "common/errors.h"

#include <errno.h>

static const struct {
	const char *code;
	unsigned status;
	const char *message;
} err_table[ERR__COUNT] = {
#define ERR(e, c, s, m) [e] = {c, s, m},
#include "common/errors.def"
#undef ERR
};

const char *cm_err_code(cm_err e)
{
	return (unsigned)e < ERR__COUNT ? err_table[e].code : "internal";
}

unsigned cm_err_status(cm_err e)
{
	return (unsigned)e < ERR__COUNT ? err_table[e].status : 500;
}

const char *cm_err_message(cm_err e)
{
	return (unsigned)e < ERR__COUNT ? err_table[e].message : "internal error";
}

cm_err cm_err_storage(int errnum)
{
	return errnum == ENOSPC || errnum == EDQUOT ? ERR_INSUFFICIENT_STORAGE : ERR_STORAGE;
}
