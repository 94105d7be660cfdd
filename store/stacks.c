/*
 * stacks.c — a report's documents as storage keeps them (schema/018,
 * docs/STORAGE.md "Stacks"): each stack of a document (a span the server
 * marks: images, threads) is kept once per app in `stacks`, keyed by a
 * 128-bit hash of its text, and the report keeps the rest of the text, a
 * 0x01 byte where each stack was, and the stacks' hashes in order.
 * PostgreSQL's unstack() puts the text back together.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "store/internal.h"
#include "store/reports.h"

/* The byte standing for a stack in a skeleton: JSON text escapes every
 * control character inside strings, so none occurs in our documents. */
#define STACK_MARK '\x01'

/* The 128-bit hash a stack of TEXT (LEN bytes) is kept under, as a UUID's
 * text. */
static void stack_hash(const char *text, size_t len, char out[37])
{
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits(text, len));
	static const char digits[] = "0123456789abcdef";
	size_t k = 0;
	for (size_t i = 0; i < sizeof c.digest; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[k++] = '-';
		out[k++] = digits[c.digest[i] >> 4];
		out[k++] = digits[c.digest[i] & 15];
	}
	out[k] = '\0';
}

int st_document_split(const st_document *doc, char **out_skeleton, char **out_stacks)
{
	cm_buf skel = {0}, list = {0};
	size_t from = 0;
	cm_buf_put(&list, "{", 1);
	for (size_t i = 0; i < doc->nstacks; i++) {
		const cm_span *s = &doc->stacks[i];
		if (s->at < from || s->at > doc->len || s->len > doc->len - s->at) {
			skel.failed = true;
			break;
		}
		char hash[37];
		stack_hash(doc->text + s->at, s->len, hash);
		cm_buf_put(&skel, doc->text + from, s->at - from);
		cm_buf_put(&skel, &(char){STACK_MARK}, 1);
		if (i)
			cm_buf_put(&list, ",", 1);
		cm_buf_put(&list, hash, 36);
		from = s->at + s->len;
	}
	if (from <= doc->len)
		cm_buf_put(&skel, doc->text + from, doc->len - from);
	cm_buf_put(&skel, "", 1);
	cm_buf_put(&list, "}", 2);
	*out_skeleton = skel.data;
	*out_stacks = list.data;
	if (skel.failed || list.failed) {
		free(skel.data);
		free(list.data);
		*out_skeleton = *out_stacks = NULL;
		return -1;
	}
	return 0;
}

/* One stack of a batch: its hash and text. */
typedef struct stack_ref {
	char hash[37];
	const char *text;
	size_t len;
} stack_ref;

static int cmp_hash(const void *a, const void *b)
{
	return strcmp(((const stack_ref *)a)->hash, ((const stack_ref *)b)->hash);
}

/* Every stack of DOCS[0..N) (NULL entries skipped) into a malloc'ed
 * array sorted by hash, duplicates removed; its length in *OUT_N. */
static stack_ref *distinct_stacks(const st_document *const *docs, size_t n, size_t *out_n)
{
	size_t total = 0;
	for (size_t d = 0; d < n; d++)
		total += docs[d] ? docs[d]->nstacks : 0;
	stack_ref *v = calloc(total ? total : 1, sizeof *v);
	if (!v)
		return NULL;
	size_t k = 0;
	for (size_t d = 0; d < n; d++)
		for (size_t i = 0; docs[d] && i < docs[d]->nstacks; i++) {
			const cm_span *s = &docs[d]->stacks[i];
			v[k].text = docs[d]->text + s->at;
			v[k].len = s->len;
			stack_hash(v[k].text, v[k].len, v[k].hash);
			k++;
		}
	qsort(v, k, sizeof *v, cmp_hash);
	size_t m = 0;
	for (size_t i = 0; i < k; i++)
		if (m == 0 || strcmp(v[m - 1].hash, v[i].hash) != 0)
			v[m++] = v[i];
	*out_n = m;
	return v;
}

int st_stacks_encode(const st_document *const *docs, size_t n, cm_buf *hashes, cm_buf *bodies)
{
	size_t m = 0;
	stack_ref *v = distinct_stacks(docs, n, &m);
	const char **items = calloc(m ? m : 1, sizeof *items);
	size_t *lens = calloc(m ? m : 1, sizeof *lens);
	int rc = v && items && lens ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < m; i++)
		items[i] = v[i].hash;
	if (rc == 0)
		st_wire_text_array(hashes, items, NULL, m);
	for (size_t i = 0; rc == 0 && i < m; i++) {
		items[i] = v[i].text;
		lens[i] = v[i].len;
	}
	if (rc == 0)
		st_wire_text_array(bodies, items, lens, m);
	free(v);
	free(items);
	free(lens);
	return rc == 0 && !hashes->failed && !bodies->failed ? 0 : -1;
}
