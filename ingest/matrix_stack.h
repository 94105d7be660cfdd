/*
 * matrix_stack.h — Matrix TraceCanary's two stack texts (SPEC §13;
 * ../shared/tracecanary/FORMATS.md §4 and §7): the method-id `stack` tree
 * (`depth,methodId,count,durMs` lines, a pre-order walk) and the Java
 * `threadStack` text.
 *
 * Memory: every node, frame and string these functions make lives in the
 * caller's ing_arena and goes with it; nothing points into the input text.
 */
#ifndef STALLSCOPE_INGEST_MATRIX_STACK_H
#define STALLSCOPE_INGEST_MATRIX_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/report.h"

/* Method ids are 20 bits; 0xFFFFF itself is never emitted (AppMethodBeat
 * ignores ids at or above it) and 0xFFFFE is Handler.dispatchMessage. */
#define ING_METHOD_ID_MAX      1048575u
#define ING_METHOD_ID_DISPATCH 1048574u
/* Matrix trims a stack to 30 lines; more than this is not Matrix. */
#define ING_MSTACK_MAX_LINES 4096u
/* A line's duration beyond an hour (or negative) is Matrix's own
 * nanoseconds-as-milliseconds bug (FORMATS §4, quirks): counted as 0. */
#define ING_MSTACK_MS_MAX INT64_C(3600000)

/* One `stack` line. Links are line indices, -1 for none. */
typedef struct ing_mnode {
	uint32_t depth; /* as sent */
	uint32_t method_id;
	uint32_t count; /* merged consecutive calls */
	int64_t ms;	/* summed duration, 0 when it was garbage */
	int32_t parent; /* nearest preceding line of smaller depth */
	int32_t first_child, next_sibling;
} ing_mnode;

typedef struct ing_mtree {
	ing_mnode *nodes; /* in line order */
	size_t n;
	int32_t first_top; /* first line without a parent; -1 when empty */
} ing_mtree;

enum { ING_MSTACK_BAD = -1, ING_MSTACK_NOMEM = -2 };

/*
 * Parses the LEN bytes of TEXT (split on "\n", a "\r" before it tolerated,
 * empty lines skipped) into *OUT, nodes in ARENA. Lines without a
 * shallower line before them (0.4.x starts deeper than 0) are the top
 * level. Returns 0; ING_MSTACK_BAD with WHY ("line 3: …", WHYLEN bytes)
 * for a malformed line, an id ≥ ING_METHOD_ID_MAX or more than
 * ING_MSTACK_MAX_LINES lines; ING_MSTACK_NOMEM when the arena refuses.
 */
int ing_mtree_parse(ing_arena *arena, const char *text, size_t len, ing_mtree *out, char *why,
		    size_t whylen);

/*
 * The heaviest path of T: from the top level, at each level the node with
 * the most ms (ties: the first), down to a leaf. Writes its node indices,
 * outermost first, to OUT (room for MAX) and returns how many; -1 when the
 * path is longer than MAX.
 */
ptrdiff_t ing_mtree_heaviest(const ing_mtree *t, size_t *out, size_t max);

/*
 * The frames of a threadStack TEXT (LEN bytes), innermost first as Java
 * prints them, into OUT (frames and java in ARENA; both NULL when none):
 * Matrix's `[prefix]at pkg.Class:method(12)` and
 * StackTraceElement.toString()'s `pkg.Class.method(File.java:12)`,
 * `(Native Method)` (line -2), `(Unknown Source[:12])`. Lines that are
 * neither, or whose name or file is longer than MAX_STRING, are skipped;
 * frames past MAX_FRAMES are dropped (the innermost are kept). Each
 * frame's address is 0, its java name "pkg.Class.method". Returns 0, or
 * ING_MSTACK_NOMEM.
 */
int ing_thread_stack_parse(ing_arena *arena, const char *text, size_t len, size_t max_frames,
			   size_t max_string, ing_stack *out);

#endif
