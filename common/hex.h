/*
 * hex.h — one hex digit's value, for the parsers that read hex text:
 * addresses in reports, UUIDs, bytea from PostgreSQL, %HH in URL paths.
 *
 * Memory: nothing is allocated.
 */
#ifndef STALLSCOPE_COMMON_HEX_H
#define STALLSCOPE_COMMON_HEX_H

/* 0–15 for '0'–'9', 'a'–'f', 'A'–'F'; -1 for anything else (C is a
 * character as an unsigned char value, or EOF). */
int cm_hex_digit(int c);

#endif
