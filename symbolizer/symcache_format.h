/*
 * symcache_format.h — internal to symbolizer/: the on-disk symcache layout
 * shared by symcache_write.c and symcache_read.c. docs/SYMCACHE.md is the
 * prose version.
 *
 * Version history:
 *   1  first format: header, string blob, function records, source
 *      locations with an inlined_into chain, range starts + range
 *      locations.
 *
 * All integers are little-endian; the format is only read on little-endian
 * hosts (asserted below), which lets the reader use the mapping in place.
 * Every section starts at a multiple of 8. All addresses are u32 offsets
 * from base_address (the slice's __TEXT vmaddr), so a file does not depend
 * on where it is mapped or where the image was loaded.
 */
#ifndef STALLSCOPE_SYMBOLIZER_SYMCACHE_FORMAT_H
#define STALLSCOPE_SYMBOLIZER_SYMCACHE_FORMAT_H

#include <stdint.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "symcaches are read in place on little-endian hosts");

#define SYMC_MAGIC "SSYMCACH"
#define SYMC_NONE UINT32_MAX

enum {
	SYMC_FLAG_HAS_DWARF = 1u << 0,
	SYMC_FLAG_HAS_UUID = 1u << 1,
};

typedef struct symc_header {
	char magic[8];
	uint32_t version;
	uint32_t flags;
	uint32_t cputype, cpusubtype;
	uint8_t uuid[16];
	uint64_t base_address;
	uint64_t text_size;
	uint64_t file_size;       /* the whole file, header included */
	uint32_t strings_off, strings_len;
	uint32_t functions_off, nfunctions;
	uint32_t locations_off, nlocations;
	uint32_t ranges_off, nranges; /* u32 starts[n], then u32 locations[n] */
	uint32_t nfiles;          /* distinct source files (informative) */
	uint32_t reserved;
} symc_header;

_Static_assert(sizeof(symc_header) == 104, "header layout");

/* A function: its shown name, its linkage symbol, its entry point. */
typedef struct symc_function {
	uint32_t name;   /* string offset: demangled display name */
	uint32_t symbol; /* string offset: raw symbol, Mach-O form */
	uint32_t entry;  /* offset from base_address, SYMC_NONE if unknown */
} symc_function;

/*
 * A source location: one frame. A lookup starts at the range's location and
 * follows inlined_into outwards. Writers emit a location after the one it is
 * inlined into, so inlined_into < own index always holds: chains end.
 */
typedef struct symc_location {
	uint32_t function;     /* index into functions */
	uint32_t file;         /* string offset, SYMC_NONE when unknown */
	uint32_t line;         /* 0 when unknown */
	uint32_t column;       /* 0 when unknown */
	uint32_t inlined_into; /* location index, SYMC_NONE for the outermost */
} symc_location;

#endif
