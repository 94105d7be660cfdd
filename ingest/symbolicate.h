/*
 * symbolicate.h — a report's stacks turned into symbolized frames, the
 * per-image and per-frame statuses, and its two group keys (SPEC §3.3,
 * §4.4, §6). Pure: the caller says, per image, which symcache serves it (or
 * that none does); nothing here touches the database or the disk.
 *
 * Used at ingest and again when reprocessing a report whose symbols
 * arrived later, so both give the same answer for the same inputs.
 *
 * The symbolized form is written as JSON text directly (common/jsonw.h):
 * it is stored as text, and building jansson trees for it cost the ingest
 * server more than everything else it does per report.
 *
 * Memory: the texts in ing_symbolized are malloc'ed and owned by the caller
 * (ing_symbolized_clear frees them); strings of the grouping live in the
 * arena passed in. Symcaches are borrowed for the call only.
 */
#ifndef STALLSCOPE_INGEST_SYMBOLICATE_H
#define STALLSCOPE_INGEST_SYMBOLICATE_H

#include <stdbool.h>

#include "common/jsonw.h"
#include "ingest/grouping.h"
#include "ingest/report.h"
#include "ingest/representative.h"
#include "symbolizer/method_map.h"
#include "symbolizer/symbolizer.h"

typedef enum ing_image_status {
	ING_IMAGE_FOUND = 0, /* a debug file serves it */
	ING_IMAGE_MISSING,   /* none uploaded (yet) */
	ING_IMAGE_MALFORMED, /* one exists but could not be read */
} ing_image_status;

/* "found", "missing", "malformed". */
const char *ing_image_status_name(ing_image_status s);

/* What the caller found for one image of the report. */
typedef struct ing_image_symbols {
	ing_image_status status;
	const sym_cache *cache; /* FOUND only; borrowed */
	bool from_symbol_table; /* the cache has no DWARF */
	/* FOUND for an Android report's image 0, instead of CACHE: the method
	 * mapping of its build; borrowed. */
	const sym_methods *methods;
} ing_image_symbols;

/* The culprit of a report (SPEC §10.5): the innermost frame of its
 * representative stack that lies in one of the app's own images (not
 * ing_image_is_system), as its innermost inline entry. Arena-owned. */
typedef struct ing_culprit {
	const char *frame;    /* its identity (ing_frame_identity); NULL: no such frame */
	const char *function; /* NULL when the frame has no symbols */
	const char *file;     /* NULL when unknown */
	uint32_t line;	      /* 0 when unknown */
} ing_culprit;

typedef struct ing_symbolized {
	/* JSON texts, malloc'ed (ing_symbolized_clear frees them):
	 * images  [{"name","uuid","arch","load_address","size","status","needed",
	 *           "system"}]
	 * threads [{"name","main","frames":[frame…]}] where a frame is
	 *   {"address","symbol_hint"?,"image","offset"?,"status","hint_function"?,
	 *    "frames":[…]} (hint_function: a Swift hint demangled, on a frame
	 *   without symbols, where it is the frame's name);
	 *   and its "frames" are the inline chain, innermost first:
	 *   {"function","symbol","symbol_address"?,"file"?,"line"?,"column"?,
	 *    "inlined"} with symbol_address a runtime address;
	 * stack   the representative stack: {"source","thread":T} when it is
	 *   thread T's stack (whose frames are in threads), else
	 *   {"source","frames":[frame…]}; with, for an Android stack whose
	 *   frames have durations, "java_ms" and "java_count" (one per frame,
	 *   innermost first, null for a frame without), kept out of the
	 *   frames so that the stack's text does not depend on them. */
	char *images, *threads, *stack;
	size_t images_len, threads_len, stack_len;
	/* Each thread's object inside threads, in order (arena-owned, one
	 * per thread of the report): what storage keeps once per app. */
	cm_span *thread_spans;
	ing_rep_source source;
	ing_grouping grouping;
	ing_culprit culprit;
	/* Images frames of this report fall in that have no debug file:
	 * flags by image index (arena-owned, nimages entries). */
	bool *image_needed;
	/* Images any frame of this report falls in (arena-owned). */
	bool *image_used;
	/* System images (ingest/image_class.h), by image index (arena-owned):
	 * the report does not wait for their symbols. */
	bool *image_system;
	/* Frames answered from a symbol table only (no DWARF), anywhere. */
	size_t symtab_frames;
	/* Frames in images with status missing or malformed, anywhere. */
	size_t unsymbolized_frames;
} ing_symbolized;

/*
 * Inline chains already looked up, shared by the reports of one request so
 * each distinct (debug file, address, load address) is symbolized once per
 * batch. The caller owns it (ing_memo_free). The function names it keeps
 * live in the arena of the ing_symbolicate call that looked them up and
 * the symcaches are only compared by address: every call sharing a memo
 * must use one arena and the same open symcaches, which outlive the memo.
 */
typedef struct ing_memo ing_memo;

/* NULL when out of memory. */
ing_memo *ing_memo_new(void);
/* Distinct lookups made through M so far. */
size_t ing_memo_size(const ing_memo *m);
void ing_memo_free(ing_memo *m);

/*
 * Symbolizes every thread of R and its representative stack. A frame lies
 * in the image covering its address ([load_address, load_address + size),
 * or up to the next image's load address when the size is unknown); on
 * arm64e reports addresses lose their pointer signatures first; frames
 * after the first of a stack are looked up at address - 1. IMAGES has
 * one entry per R->images[i]. RULES (NULL = none) are the app's grouping
 * skip rules. MEMO (NULL = one for this call only) carries lookups over
 * from earlier calls. Returns 0, or -1 when out of memory (nothing to clear
 * then).
 */
int ing_symbolicate(const ing_report *r, const ing_image_symbols *images,
		    const ing_group_rules *rules, ing_memo *memo, ing_arena *arena,
		    ing_symbolized *out);

void ing_symbolized_clear(ing_symbolized *s);

#endif
