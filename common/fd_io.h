/*
 * fd_io.h — writing a whole buffer to a file descriptor, for the three
 * places that stream bytes to disk: an upload's body (server/http), a
 * zip's members (server/service/unzip) and a symcache written atomically
 * (symbolizer).
 *
 * Memory: nothing is allocated; the caller owns BUF.
 */
#ifndef STALLSCOPE_COMMON_FD_IO_H
#define STALLSCOPE_COMMON_FD_IO_H

#include <stddef.h>

/* Writes LEN bytes of BUF to FD, again after a short write or EINTR.
 * Returns 0, or -1 with errno set by the failing write (ENOSPC, EIO…). */
int cm_write_all(int fd, const void *buf, size_t len);

#endif
