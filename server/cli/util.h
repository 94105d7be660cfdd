/*
 * util.h — small helpers shared by the subcommands.
 */
#ifndef STALLSCOPE_SERVER_CLI_UTIL_H
#define STALLSCOPE_SERVER_CLI_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolizer/symbolizer.h"

/* "0x1f" (hex, any case) or "31" (decimal) → *out; false on anything else,
 * including overflow and trailing garbage. */
bool srv_cli_parse_u64(const char *text, uint64_t *out);

/* True when PATH starts with the symcache magic. */
bool srv_cli_is_symcache(const char *path);

/* What the repository ships at REL, found from the binary: <root>/REL when
 * the binary is <root>/build/stallscope and that path exists, else REL as
 * given (relative to the working directory). Written to OUT (CAP bytes). */
void srv_cli_shipped_path(const char *rel, char *out, size_t cap);

/*
 * Opens PATH for lookups: a symcache is mapped; a Mach-O/DWARF file has the
 * slice of ARCH (or its only slice) converted in memory. On success
 * *out_cache is ready and *out_owned is the buffer behind it (free it after
 * sym_cache_close; NULL for a mapped symcache).
 */
int srv_cli_open_cache(const char *path, sym_arch arch, sym_cache **out_cache, uint8_t **out_owned,
		       sym_error *err);

#endif
