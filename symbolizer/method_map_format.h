/*
 * method_map_format.h — internal to symbolizer/: the on-disk layout of a
 * method table (method_map.h), shared by method_map_convert.c (writer) and
 * method_map.c (reader), and the descriptor check both use.
 *
 * Version history:
 *   1  header; direct records; sparse ids; their records; strings.
 *
 * All integers are little-endian; the table is read in place from an
 * 8-byte aligned buffer, on little-endian hosts only. Sections follow each
 * other in this order with no gap (each starts at a multiple of 4), so
 * their offsets are checked for equality, not merely for fitting in the
 * file:
 *
 *   header    symm_header (88 bytes)
 *   direct    symm_record[ndirect]: the method of id i < ndirect at index
 *             i; all zero (class_len 0) when there is none
 *   sparse    u32[nsparse]: ids ≥ ndirect, strictly increasing
 *   records   symm_record[nsparse]: the method of sparse[k] at index k
 *   strings   strings_len bytes: each distinct class, method name and
 *             descriptor once (followed by a NUL the reader does not need)
 *
 * Why two id sections: Matrix's ids are dense from 1, which a direct array
 * answers with one memory access (lookups of random ids in a 1,000,000-
 * method table are bound by cache misses, so a separate array of slots
 * would cost one more), but every file also names the dispatch id 1048574
 * (and a hand-made file may name any id), which would stretch the array to
 * 24 MiB for a small app. The writer keeps in the direct array the longest
 * prefix of ids that fills at least half of it, and binary-searches the
 * rest, which are then few by construction (< 2^20 / 2).
 *
 * checksum is XXH3_64 of the whole file with the checksum field zeroed: a
 * table damaged on disk is refused at open even where its offsets still
 * fit. The reader checks every bound as well, so a table forged with a
 * right checksum cannot make it read outside the file either.
 */
#ifndef STALLSCOPE_SYMBOLIZER_METHOD_MAP_FORMAT_H
#define STALLSCOPE_SYMBOLIZER_METHOD_MAP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "method tables are read in place on little-endian hosts");

#define SYMM_MAGIC   "SSMETHOD"
#define SYMM_VERSION 1u
/* Matrix ignores ids from METHOD_ID_MAX = 0xFFFFF on (FORMATS.md §6). */
#define SYMM_ID_LIMIT 1048575u

typedef struct symm_header {
	char magic[8];
	uint32_t version;
	uint32_t flags; /* 0 */
	uint64_t file_size;
	uint64_t checksum;
	uint8_t content_hash[16]; /* XXH3_128 (canonical) of the source text */
	uint32_t nrecords, ndirect, nsparse;
	uint32_t max_id; /* the largest id with a record */
	uint32_t direct_off, sparse_off, records_off, strings_off;
	uint32_t strings_len;
	uint32_t pad; /* 0 */
} symm_header;

_Static_assert(sizeof(symm_header) == 88, "header layout");

/* A method: offsets into the strings section; desc_len 0 = no descriptor
 * (then desc_off is 0). A method's class is never empty: class_len 0
 * marks an empty direct slot. */
typedef struct symm_record {
	uint32_t access;
	uint32_t class_off, name_off, desc_off;
	uint16_t class_len, name_len, desc_len;
	uint16_t pad; /* 0 */
} symm_record;

_Static_assert(sizeof(symm_record) == 24, "record layout");

/* Whether the LEN bytes at D are a whole JVM method descriptor:
 * "(" parameter types ")" return type, nothing after. */
bool symm_descriptor_valid(const char *d, size_t len);

#endif
