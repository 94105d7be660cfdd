/*
 * utf8.h — UTF-8 validity of bytes that reach us outside JSON (headers,
 * URL paths and query arguments, which HTTP leaves as raw bytes; jansson
 * checks what comes inside JSON). PostgreSQL refuses text that is not
 * UTF-8, and our JSON writers assume it, so such bytes are refused at the
 * door with a 400 rather than failing deeper down.
 *
 * Memory: nothing is allocated; the functions only read their arguments.
 */
#ifndef STALLSCOPE_COMMON_UTF8_H
#define STALLSCOPE_COMMON_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at S (1–4), or 0 when S starts an
 * invalid one: a stray continuation byte, an overlong form, a surrogate,
 * a code point past U+10FFFF, or a sequence cut short (S is read up to the
 * byte that breaks it, so a NUL-terminated string is never overrun). */
size_t cm_utf8_len(const unsigned char *s);

/* Whether the NUL-terminated S is valid UTF-8. */
bool cm_utf8_valid(const char *s);

#endif
