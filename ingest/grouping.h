/*
 * grouping.h — Matrix two-level grouping identities and keys (SPEC §6),
 * as a pure function of a symbolized stack. The caller (ingest at report
 * time, reprocessing later) symbolizes and passes one ing_gframe per stack
 * frame; nothing here looks anything up.
 */
#ifndef STALLSCOPE_INGEST_GROUPING_H
#define STALLSCOPE_INGEST_GROUPING_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/report.h"

#define ING_GROUP_L1_DEPTH 2 /* identities keyed at level 1 */
#define ING_GROUP_L2_DEPTH 4 /* identities keyed at level 2 */
#define ING_GROUP_KEY_LEN 17 /* 16 lowercase hex digits + NUL */

/* One stack frame, innermost first in the array given to ing_group. */
typedef struct ing_gframe {
	/* The image's name or path as the report gives it; NULL when the
	 * frame lies in no listed image. */
	const char *image;
	/* The symbolized inline chain, innermost first (sym_frame.function
	 * of a lookup); NFUNCTIONS 0 when there are no symbols for it. */
	const char *const *functions;
	size_t nfunctions;
	const char *hint;  /* on-device symbol name, or NULL */
	uint64_t offset;   /* address - image load address (in an image) */
	uint64_t address;  /* absolute address (used in no image) */
} ing_gframe;

/* Optional per-app skip rules, applied to identities before keying. */
typedef struct ing_group_rules {
	const char *const *skip_images;   /* image basename equals … */
	size_t nskip_images;
	const char *const *skip_prefixes; /* function (or hint) starts with … */
	size_t nskip_prefixes;
} ing_group_rules;

typedef struct ing_grouping {
	char key1[ING_GROUP_KEY_LEN]; /* over identities[0 … min(2,n)) */
	char key2[ING_GROUP_KEY_LEN]; /* over identities[0 … min(4,n)) */
	/* The innermost identities after skipping, innermost first (the
	 * group's frames); arena-owned. */
	const char *identities[ING_GROUP_L2_DEPTH];
	size_t nidentities;
	/* Every frame was skipped: the identities are taken without the
	 * rules so such stacks do not all fall into one group. */
	bool rules_ignored;
} ing_grouping;

/*
 * Expands FRAMES (innermost first) into identities — "image!function" per
 * inline-chain entry, else "image!hint" (hint not "<redacted>"), else
 * "image+0xoffset", and "?+0xaddress" for frames in no image; image is the
 * basename of the name or path, hex is lowercase, control bytes become
 * '?' — drops those the RULES (NULL = none) skip, and keys the innermost 2
 * and 4: XXH3_64bits of the identities joined by "\n", as 16 lowercase hex
 * digits. An empty stack keys the empty string.
 * Strings go into ARENA. Returns 0, or -1 when the arena is exhausted.
 */
int ing_group(const ing_gframe *frames, size_t nframes,
	      const ing_group_rules *rules, ing_arena *arena,
	      ing_grouping *out);

/* How many identities frame F stands for: one per entry of its inline
 * chain, else one. */
size_t ing_frame_depth(const ing_gframe *f);

/* Identity K of F (0 = innermost, K < ing_frame_depth(F)) as ing_group
 * makes it, no rules applied; in ARENA, NULL when it is exhausted. */
const char *ing_frame_identity(const ing_gframe *f, size_t k, ing_arena *arena);

/* XXH3_64bits of LEN bytes of TEXT as 16 lowercase hex digits. */
void ing_group_key(const char *text, size_t len,
		   char out[ING_GROUP_KEY_LEN]);

#endif
