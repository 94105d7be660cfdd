/*
 * fuzz_common.h — shared by the ingest fuzz targets: a format's parser on
 * arbitrary bytes with the default limits, then every accepted report
 * through the representative-stack and grouping code the server runs next,
 * so the fuzzer checks those too; the batch is freed each run.
 */
#ifndef STALLSCOPE_FUZZ_COMMON_H
#define STALLSCOPE_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_target.h"
#include "ingest/grouping.h"
#include "ingest/parse.h"
#include "ingest/representative.h"

static inline void fuzz_exercise(ing_batch *b)
{
	for (size_t e = 0; e < b->nentries; e++) {
		const ing_report *r = b->entries[e].report;
		const ing_measure *m = b->entries[e].measure;
		if (m) {
			/* A Matrix measure: accepted, keyed, no report. */
			if (r || b->entries[e].error.code != ERR_NONE || !m->key ||
			    m->key != b->entries[e].report_id)
				abort();
			continue;
		}
		if (!r) {
			/* A rejection always names its failure. */
			if (b->entries[e].error.code == ERR_NONE ||
			    !b->entries[e].error.message[0])
				abort();
			continue;
		}
		if (!r->report_id)
			abort();
		const ing_stack *st = ing_representative(r, NULL);
		if (!st)
			continue;
		size_t n = st->nframes < 8 ? st->nframes : 8;
		ing_gframe g[8];
		for (size_t i = 0; i < n; i++) {
			const ing_frame *f = &st->frames[i];
			g[i] = (ing_gframe){.hint = f->symbol_hint,
					    .address = f->address};
			for (size_t k = 0; k < r->nimages; k++) {
				const ing_image *im = &r->images[k];
				if (f->address >= im->load_address &&
				    (im->size == 0 ||
				     f->address - im->load_address < im->size)) {
					g[i].image = im->name;
					g[i].offset = f->address - im->load_address;
					break;
				}
			}
		}
		ing_grouping gr;
		if (ing_group(g, n, NULL, b->arena, &gr) == 0 &&
		    (strlen(gr.key1) != 16 || strlen(gr.key2) != 16 ||
		     gr.nidentities > n * SYM_MAX_FRAMES))
			abort();
	}
}

typedef int (*fuzz_parse_fn)(const char *body, size_t len, const ing_limits *limits,
			     const char *user_id, ing_batch **out_batch, ing_error *err);

static inline int fuzz_parse(fuzz_parse_fn parse, const uint8_t *data, size_t size)
{
	ing_batch *b = NULL;
	ing_error err;
	if (parse((const char *)data, size, NULL, "fuzz-user", &b, &err) == 0) {
		fuzz_exercise(b);
		ing_batch_free(b);
	} else if (b || err.code == ERR_NONE) {
		abort(); /* a failure leaves no batch and names its code */
	}
	return 0;
}

#endif
