/*
 * symcache_format.h — internal to symbolizer/: the on-disk symcache layout
 * shared by symcache_write.c and symcache_read.c. docs/SYMCACHE.md is the
 * prose version.
 *
 * Version history:
 *   1  header; string blob; files; functions; scopes (frame nodes, ULEB128
 *      records with a backwards parent link); scope ranges (u32 starts and
 *      u32 scope offsets, binary-searched); line entries (ULEB128 deltas in
 *      blocks of SYMC_LINES_PER_BLOCK, with a block index).
 *   2  the same layout; a function's display name is Swift's short form
 *      (SPEC §3.6) where its symbol is a Swift name, which version 1 kept
 *      mangled. Version 1 files are rebuilt from their kept debug files,
 *      since their names would group Swift frames under other keys.
 *   3  a page directory over the text: for each page of 2^page_shift bytes,
 *      the first scope range and the first line block that start in it, so
 *      a lookup searches one page's few entries instead of the whole
 *      tables (two or three cache misses instead of ~17 per search). Range
 *      starts are u16 offsets within their page, stored page by page next
 *      to their scopes; line entries open with an op byte holding the
 *      address step and a small line delta. Version 2
 *      files are rebuilt from their kept debug files like version 1's.
 *
 * All integers are little-endian; the format is read in place, on
 * little-endian hosts only (asserted below). Sections start at multiples of
 * 8. Addresses are u32 offsets from base_address (the slice's __TEXT
 * vmaddr): a file depends neither on where it is mapped nor on where the
 * image was loaded.
 */
#ifndef STALLSCOPE_SYMBOLIZER_SYMCACHE_FORMAT_H
#define STALLSCOPE_SYMBOLIZER_SYMCACHE_FORMAT_H

#include <stdint.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "symcaches are read in place on little-endian hosts");

#define SYMC_MAGIC "SSYMCACH"
#define SYMC_NONE UINT32_MAX
#define SYMC_LINES_PER_BLOCK 16u

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
	uint64_t file_size;     /* the whole file, header included */
	uint32_t strings_off, strings_len;
	uint32_t files_off, nfiles;         /* u32 string offsets */
	uint32_t functions_off, nfunctions; /* symc_function */
	uint32_t scopes_off, scopes_len;    /* ULEB128 scope records */
	uint32_t nscopes;
	uint32_t ranges_off, nranges;	    /* per page: u16 starts, u32 scopes */
	uint32_t lines_off, lines_len;      /* ULEB128 line entries */
	uint32_t blocks_off, nblocks;       /* symc_line_block */
	uint32_t nlines;
	uint32_t pages_off, npages; /* symc_page[npages + 1] */
	uint32_t page_shift;	    /* SYMC_MIN_PAGE_SHIFT.. 16 */
	uint32_t line_shift;	    /* 0 or 2: line op address unit */
} symc_header;

_Static_assert(sizeof(symc_header) == 144, "header layout");

#define SYMC_MIN_PAGE_SHIFT 6u
#define SYMC_MAX_PAGE_SHIFT 16u
/* The writer picks the largest page holding at most this many ranges on
 * average: their u16 starts then fill about one cache line. */
#define SYMC_RANGES_PER_PAGE 32u
/* Line op bytes (below): 5 line classes times 51 address steps, after 0. */
#define SYMC_LINE_CLASSES   5u
#define SYMC_LINE_ESCAPE    4u
#define SYMC_LINE_MAX_STEPS 51u
#define SYMC_MAX_LINE_SHIFT 2u

/* A function as shown: display name and linkage symbol (string offsets). */
typedef struct symc_function {
	uint32_t name;
	uint32_t symbol;
} symc_function;

/*
 * Scope record (a frame node), at a byte offset in the scopes blob — the
 * offset is its id. Six ULEB128 fields:
 *   function         index into functions
 *   entry + 1        start address (offset from base) + 1, 0 = unknown
 *   parent delta     own offset - parent's offset, 0 = outermost
 *   call file + 1    file index + 1, 0 = none: where this frame was inlined,
 *   call line        shown on the parent frame
 *   call column
 * A parent is written before its children, so delta > 0 and chains end.
 *
 * Scope ranges: range i runs from its start (strictly increasing, the first
 * at 0) to the next one's (or the end of the address space) and belongs to
 * scope scopes[i]; SYMC_NONE = no frames. A start is stored as its offset
 * within its page, the page being the one whose directory entry covers i:
 * pages[p].range <= i < pages[p + 1].range. The table is a chunk per page,
 * the n ranges of page p at byte 6 * pages[p].range: u16 starts[n], then
 * u32 scopes[n] (2-byte aligned); so the last scope of the chunks before
 * page p is the 4 bytes before its chunk.
 *
 * Line entries, in blocks of SYMC_LINES_PER_BLOCK; each block restarts
 * from line 0 and "no file". A block's first entry starts at the block's
 * start and is
 *   zigzag(line delta) << 1 | file_changed
 *   file + 1         only when file_changed; 0 = no line information
 *   column
 * Each later entry starts with an op byte: 0, then the address delta from
 * the previous entry (ULEB128), then the fields above; or 1 + (steps - 1) *
 * SYMC_LINE_CLASSES + class, the address delta being steps << line_shift
 * (steps 1..SYMC_LINE_MAX_STEPS) and the class the line delta + 1 (0..3,
 * same file) or SYMC_LINE_ESCAPE (the fields above follow); the column
 * closes every entry. Most entries are then two bytes: the op and the
 * column.
 */
typedef struct symc_line_block {
	uint32_t start;  /* offset from base of the block's first entry */
	uint32_t offset; /* byte offset of the block in the lines blob */
} symc_line_block;

/*
 * Page directory entry p: the first range and the first line block whose
 * start is at or after p << page_shift. Entry npages closes the last page
 * (nranges, nblocks); addresses past it belong to the last range and block.
 */
typedef struct symc_page {
	uint32_t range;
	uint32_t block;
} symc_page;

#endif
