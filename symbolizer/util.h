/*
 * util.h — internal to symbolizer/: unaligned little/big-endian reads
 * (callers have checked bounds; these only decode), error reporting,
 * read-only file mapping and atomic file writing shared by the modules.
 */
#ifndef STALLSCOPE_SYMBOLIZER_UTIL_H
#define STALLSCOPE_SYMBOLIZER_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "symbolizer/symbolizer.h"

/* Fills ERR (may be NULL) with the formatted message; returns CODE. */
int sym_fail(sym_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Maps the regular file PATH read-only. Files shorter than MIN_SIZE are
 * refused with SYM_ERR_FORMAT and WHAT in the message ("truncated WHAT").
 * On success OUT_DATA and OUT_LEN describe the mapping (munmap releases it).
 */
int sym_map_file(const char *path, size_t min_size, const char *what,
		 const uint8_t **out_data, size_t *out_len, sym_error *err);

/*
 * Writes the NPARTS pieces of PARTS, in order, to PATH atomically: a
 * temporary file beside PATH (so the rename cannot cross file systems and
 * nobody ever opens a half-written file), MODE whatever the umask, fsync,
 * rename. The temporary is removed on failure.
 */
int sym_write_atomic(const char *path, mode_t mode, const struct iovec *parts, size_t nparts,
		     sym_error *err);

static inline uint16_t sym_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t sym_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t sym_rd64(const uint8_t *p)
{
	return (uint64_t)sym_rd32(p) | (uint64_t)sym_rd32(p + 4) << 32;
}

static inline uint32_t sym_rd32be(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
	       (uint32_t)p[3];
}

static inline uint64_t sym_rd64be(const uint8_t *p)
{
	return (uint64_t)sym_rd32be(p) << 32 | (uint64_t)sym_rd32be(p + 4);
}

#endif
