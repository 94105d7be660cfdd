/*
 * swift_demangle.h — Swift symbol names as people read them, in C, from
 * Swift's docs/ABI/Mangling.rst (copy in ../shared/swift/). Pure: no
 * libdwarf, no server types, no global state; thread-safe.
 *
 * Reads the Swift 5+ mangling ($s, _$s, $e, _$e), Swift 4.2 ($S, _$S) and
 * Swift 4 (_T0). The parser builds the node tree Swift's own demangler
 * builds; two printers walk it:
 *   SYM_SWIFT_FULL   exactly what `swift demangle` prints (oracle:
 *                    ../shared/swift/manglings.txt);
 *   SYM_SWIFT_SHORT  what a frame shows (SPEC §3.6): Swift's
 *                    SimplifiedUIDemangleOptions with argument types shown
 *                    and return types hidden — no module names, no return
 *                    types, e.g. "closure #1 in FeedViewController.reload()".
 *
 * A name that does not parse completely, nests deeper than
 * SYM_SWIFT_MAX_DEPTH or prints longer than SYM_SWIFT_MAX_OUTPUT is refused
 * whole (never a partial string), in time and memory bounded by the input's
 * length.
 */
#ifndef STALLSCOPE_SYMBOLIZER_SWIFT_DEMANGLE_H
#define STALLSCOPE_SYMBOLIZER_SWIFT_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum sym_swift_style {
	SYM_SWIFT_FULL,
	SYM_SWIFT_SHORT,
} sym_swift_style;

/* Past these a name is refused (returned unchanged by callers). */
#define SYM_SWIFT_MAX_DEPTH  256
#define SYM_SWIFT_MAX_OUTPUT 4096

/* True when NAME starts with a prefix this demangler reads (a cheap gate:
 * it says nothing of whether the rest parses). */
bool sym_swift_is_mangled(const char *name);

/*
 * The demangled form of NAME in STYLE, malloc'ed (caller frees), or NULL when
 * NAME is not a Swift name this demangler reads, does not parse completely,
 * exceeds a limit above, or memory ran out.
 */
char *sym_swift_demangle(const char *name, sym_swift_style style);

#endif
