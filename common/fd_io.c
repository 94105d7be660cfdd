/*
 * fd_io.c — see fd_io.h.
 */
#include "common/fd_io.h"

#include <errno.h>
#include <unistd.h>

int cm_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}
