/*
 * strtab.h — internal to symbolizer/: an interning string table. Each
 * distinct string is stored once, NUL-terminated, in one growing blob; its
 * id is its byte offset there, which is also its offset in the symcache's
 * string table.
 *
 * Memory: the table owns the blob and its index; sym_strtab_free releases
 * both. Pointers from sym_strtab_get are invalidated by the next intern.
 */
#ifndef STALLSCOPE_SYMBOLIZER_STRTAB_H
#define STALLSCOPE_SYMBOLIZER_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#define SYM_NO_STR UINT32_MAX

typedef struct sym_strtab {
	char *blob;
	size_t len, cap;
	uint32_t *slots; /* open addressing: offset + 1, 0 = empty */
	size_t nslots, count;
} sym_strtab;

/* An empty table whose first string (id 0) is "". Returns 0 or -1 (ENOMEM). */
int sym_strtab_init(sym_strtab *t);
void sym_strtab_free(sym_strtab *t);

/*
 * The id of the LEN bytes at S (which need not be NUL-terminated and must
 * not contain NUL), adding them if new. SYM_NO_STR when out of memory or
 * when the blob would pass 4 GiB.
 */
uint32_t sym_strtab_intern(sym_strtab *t, const char *s, size_t len);

static inline const char *sym_strtab_get(const sym_strtab *t, uint32_t id)
{
	return t->blob + id;
}

#endif
