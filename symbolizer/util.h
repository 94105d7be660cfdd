/*
 * util.h — internal to symbolizer/: unaligned little/big-endian reads.
 * Callers have checked bounds; these only decode.
 */
#ifndef STALLSCOPE_SYMBOLIZER_UTIL_H
#define STALLSCOPE_SYMBOLIZER_UTIL_H

#include <stdint.h>
#include <string.h>

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
