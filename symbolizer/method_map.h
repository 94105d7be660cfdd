/*
 * method_map.h — Android method ids to names: Matrix TraceCanary's
 * methodMapping.txt (../shared/tracecanary/FORMATS.md §6, SPEC §13) turned
 * into a compact table that is mmap'ed and read in place, like a symcache
 * for method ids. Layout and version history: method_map_format.h.
 *
 * The text: one method per line, `<id>,<access>,<class> <method>[ <desc>]`
 * (access flags in decimal, dotted names, descriptor with dots). A line is
 * split on its first two commas; the class runs to the first space; the
 * descriptor is the text after the last space when it starts with `(`; the
 * method name is the rest (a Kotlin back-ticked name may hold spaces).
 * Blank lines and lines starting with `#` are ignored; a CR before the LF
 * is dropped. Skipped (and counted): a malformed line, an id of 1048575 or
 * more (Matrix ignores those at run time), a repeated id (the first line
 * wins), a line over SYM_METHODS_MAX_LINE bytes, a name or descriptor that
 * is not UTF-8 or holds a control character, and a last line without its
 * newline unless its descriptor is whole — Matrix ends every line with one,
 * so such a line was cut short; a native method's line (no descriptor)
 * cannot show that it is whole, and is skipped there. Ids may come in any
 * order.
 *
 * Memory: sym_methods_open maps the file and sym_methods_close unmaps it;
 * sym_methods_from_memory borrows the caller's bytes, which must outlive
 * the table. The strings of a sym_method point into the table and stay
 * valid until sym_methods_close. sym_methods_build's buffer is the caller's
 * to free(). Lookups and rendering allocate nothing and are thread-safe on
 * a shared table.
 */
#ifndef STALLSCOPE_SYMBOLIZER_METHOD_MAP_H
#define STALLSCOPE_SYMBOLIZER_METHOD_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/symbolizer.h"

/* Matrix's id of android.os.Handler.dispatchMessage, the root of every
 * looper-based stack: known even when a mapping lacks its line. */
#define SYM_METHODS_DISPATCH_ID 1048574u
/* The table format's version: what debug_files.symcache_version says of a
 * mapping's table, so a server never serves one of another format. */
#define SYM_METHODS_VERSION 1u
/* Longer lines are skipped. */
#define SYM_METHODS_MAX_LINE 65535u
/* Limits on what one mapping may cost: decompressed text (a 1,000,000-line
 * mapping is about 100 MiB) and distinct string bytes in the table. */
#define SYM_METHODS_MAX_TEXT	(1ull << 30)
#define SYM_METHODS_MAX_STRINGS (256u << 20)

typedef struct sym_methods sym_methods;

typedef struct sym_method {
	uint32_t id, access; /* access flags as in the file */
	/* "sample.MainActivity$2": points into the table, not NUL-terminated */
	const char *class_name;
	size_t class_len;
	const char *name; /* "onClick"; Kotlin back-ticked names may contain spaces */
	size_t name_len;
	/* "(Landroid.view.View;)V"; length 0 = none (native methods) */
	const char *descriptor;
	size_t descriptor_len;
} sym_method;

typedef struct sym_methods_stats {
	size_t lines;	/* every line read, comments and blank ones included */
	size_t methods; /* lines that became a method */
	size_t skipped; /* malformed, duplicate or out-of-range lines */
	uint32_t max_id;
	uint8_t content_hash[16]; /* XXH3_128 (canonical bytes) of the decompressed text */
} sym_methods_stats;

/*
 * Reads the mapping at IN_PATH (plain or gzip: zlib's gzread reads both),
 * streaming: besides the table being built, memory stays bounded by one
 * chunk and one line. Writes the table to OUT_PATH atomically (a temporary
 * beside it, mode 0600, fsync, rename). STATS (may be NULL) is filled
 * whatever the outcome. Returns 0, or a negative SYM_ERR_* code with ERR
 * filled in: SYM_ERR_FORMAT for input with no valid line or a corrupt gzip
 * stream, SYM_ERR_NOMEM for memory or a SYM_METHODS_MAX_* limit,
 * SYM_ERR_IO for the files.
 */
int sym_methods_convert(const char *in_path, const char *out_path, sym_methods_stats *stats,
			sym_error *err);

/*
 * The same from the LEN bytes of mapping TEXT in memory (already
 * decompressed): on success *OUT_BUF (malloc'ed, the caller frees) holds the
 * *OUT_LEN bytes of the table. Returns as sym_methods_convert.
 */
int sym_methods_build(const char *text, size_t len, uint8_t **out_buf, size_t *out_len,
		      sym_methods_stats *stats, sym_error *err);

/*
 * Maps the table at PATH read-only and validates it once: header, checksum
 * and every offset, so a corrupt table is refused (SYM_ERR_FORMAT) and an
 * open one is never read out of bounds. SYM_ERR_UNSUPPORTED for another
 * version. *OUT is freed with sym_methods_close.
 */
int sym_methods_open(const char *path, sym_methods **out, sym_error *err);

/* The same over the caller's LEN bytes at DATA, 8-byte aligned (as malloc
 * and mmap give), borrowed until sym_methods_close. */
int sym_methods_from_memory(const uint8_t *data, size_t len, sym_methods **out, sym_error *err);

void sym_methods_close(sym_methods *m);

/* How many methods the table holds (the built-in dispatch id not counted
 * unless the file had its line). */
size_t sym_methods_count(const sym_methods *m);

/*
 * Fills *OUT with the method of ID; false when the table has none. Id
 * SYM_METHODS_DISPATCH_ID is android.os.Handler dispatchMessage
 * (Landroid.os.Message;)V, access 1, even when the file lacks its line.
 * Allocation-free.
 */
bool sym_methods_lookup(const sym_methods *m, uint32_t id, sym_method *out);

/*
 * The Java-readable name: "pkg.Class.method(android.os.Bundle, int,
 * long[])" — the descriptor's parameter types spelled as Java does, the
 * return type dropped; no descriptor → "pkg.Class.method"; a malformed
 * descriptor is shown as given ("pkg.Class.method(Lbroken"). Writes at most
 * CAP bytes into BUF, NUL included (nothing when CAP is 0), and returns the
 * length of the whole name, like snprintf: the output was cut when the
 * return value is ≥ CAP.
 */
size_t sym_method_readable(const sym_method *m, char *buf, size_t cap);

/*
 * The identity form "pkg.Class.method(Landroid.os.Bundle;I[J)V": the
 * descriptor as in the file; none → "pkg.Class.method". Same return
 * convention as sym_method_readable.
 */
size_t sym_method_linkage(const sym_method *m, char *buf, size_t cap);

#endif
