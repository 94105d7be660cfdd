/* util.c — see util.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fd_io.h"
#include "symbolizer/util.h"

int sym_fail(sym_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

int sym_map_file(const char *path, size_t min_size, const char *what,
		 const uint8_t **out_data, size_t *out_len, sym_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sym_fail(err, SYM_ERR_IO, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return sym_fail(err, SYM_ERR_IO, "%s: not a readable regular file", path);
	}
	if ((uint64_t)st.st_size < min_size) {
		close(fd);
		return sym_fail(err, SYM_ERR_FORMAT, "%s: truncated %s", path, what);
	}
	size_t len = (size_t)st.st_size;
	void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (map == MAP_FAILED)
		return sym_fail(err, SYM_ERR_IO, "%s: mmap: %s", path, strerror(e));
	*out_data = map;
	*out_len = len;
	return SYM_OK;
}

int sym_write_atomic(const char *path, mode_t mode, const struct iovec *parts, size_t nparts,
		     sym_error *err)
{
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 32);
	if (!tmp)
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	snprintf(tmp, plen + 32, "%s.tmp.XXXXXX", path);
	int rc = SYM_OK;
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = sym_fail(err, SYM_ERR_IO, "%s: %s", tmp, strerror(errno));
	} else {
		bool ok = fchmod(fd, mode) == 0;
		for (size_t i = 0; ok && i < nparts; i++)
			ok = cm_write_all(fd, parts[i].iov_base, parts[i].iov_len) == 0;
		if (!ok || fsync(fd) != 0)
			rc = sym_fail(err, SYM_ERR_IO, "%s: %s", tmp, strerror(errno));
		if (close(fd) != 0 && rc == SYM_OK)
			rc = sym_fail(err, SYM_ERR_IO, "%s: %s", tmp, strerror(errno));
		if (rc == SYM_OK && rename(tmp, path) != 0)
			rc = sym_fail(err, SYM_ERR_IO, "%s: %s", path, strerror(errno));
		if (rc)
			unlink(tmp);
	}
	free(tmp);
	return rc;
}
