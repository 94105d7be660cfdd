/*
 * stored_form.c — see stored_form.h and docs/STORAGE.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "ingest/report_json.h"
#include "server/service/stored_form.h"

/* ---- grouping rules ------------------------------------------------------- */

static int copy_strings(const json_t *arr, ing_arena *arena, const char *const **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return 0;
	const char **v = ing_arena_calloc(arena, json_array_size(arr), sizeof *v);
	if (!v)
		return -1;
	size_t k = 0, i;
	json_t *s;
	json_array_foreach(arr, i, s)
	{
		if (!json_is_string(s))
			continue;
		if (!(v[k++] = ing_arena_strdup(arena, json_string_value(s))))
			return -1;
	}
	*out = v;
	*n = k;
	return 0;
}

int srv_grouping_rules(const char *json, ing_arena *arena, ing_group_rules *out)
{
	memset(out, 0, sizeof *out);
	json_t *root = json ? json_loads(json, 0, NULL) : NULL;
	int rc = 0;
	if (root) {
		rc = copy_strings(json_object_get(root, "skip_images"), arena, &out->skip_images,
				  &out->nskip_images);
		if (rc == 0)
			rc = copy_strings(json_object_get(root, "skip_prefixes"), arena,
					  &out->skip_prefixes, &out->nskip_prefixes);
	}
	json_decref(root);
	return rc;
}

/* ---- the stored form of a report ------------------------------------------ */

static char *identities_json(const ing_grouping *g, size_t n)
{
	cm_jw w = {0};
	cm_jw_array(&w);
	for (size_t i = 0; i < n && i < g->nidentities; i++)
		cm_jw_string(&w, g->identities[i]);
	cm_jw_array_end(&w);
	return cm_jw_finish(&w, NULL);
}

/* {"frame","function","file","line"} of C, or NULL when it has no frame. */
static char *culprit_json(const ing_culprit *c)
{
	if (!c->frame)
		return NULL;
	cm_jw w = {0};
	cm_jw_object(&w);
	cm_jw_key(&w, "frame");
	cm_jw_string(&w, c->frame);
	cm_jw_key(&w, "function");
	cm_jw_string(&w, c->function);
	cm_jw_key(&w, "file");
	cm_jw_string(&w, c->file);
	cm_jw_key(&w, "line");
	if (c->line)
		cm_jw_int(&w, c->line);
	else
		cm_jw_null(&w);
	cm_jw_object_end(&w);
	return cm_jw_finish(&w, NULL);
}

void srv_stored_form_clear(srv_stored_form *f)
{
	free(f->raw);
	free(f->culprit);
	free(f->symbolized);
	free(f->frames1);
	free(f->frames2);
	free(f->waits);
	ing_symbolized_clear(&f->s);
	memset(f, 0, sizeof *f);
}

/* Why the report waits for a better debug file of image I, or NULL. A
 * system image waits apart (system_*), for the instance's system symbols,
 * and never for DWARF, which Apple does not publish. */
static const char *wait_reason(const srv_stored_form *f, size_t i)
{
	bool sys = f->s.image_system[i];
	switch (f->images[i].status) {
	case ING_IMAGE_MISSING: return sys ? "system_missing" : "missing";
	case ING_IMAGE_MALFORMED: return sys ? "system_malformed" : "malformed";
	case ING_IMAGE_FOUND:
		/* DWARF may still come and name inlined frames and lines. */
		return f->images[i].from_symbol_table && !sys ? "symbol_table" : NULL;
	}
	return NULL;
}

static char *waits_json(const ing_report *r, const srv_stored_form *f)
{
	cm_jw w = {0};
	cm_jw_array(&w);
	for (size_t i = 0; i < r->nimages; i++) {
		const ing_image *img = &r->images[i];
		const char *reason = wait_reason(f, i);
		if (!img->has_uuid || !f->s.image_used[i] || !reason)
			continue;
		char uuid[37];
		sym_uuid_format(img->uuid, uuid);
		cm_jw_object(&w);
		cm_jw_key(&w, "uuid");
		cm_jw_string(&w, uuid);
		cm_jw_key(&w, "image_name");
		cm_jw_string(&w, img->name ? img->name : "?");
		cm_jw_key(&w, "arch");
		cm_jw_string(&w, img->arch == SYM_ARCH_UNKNOWN ? NULL : sym_arch_name(img->arch));
		cm_jw_key(&w, "reason");
		cm_jw_string(&w, reason);
		cm_jw_object_end(&w);
	}
	cm_jw_array_end(&w);
	return cm_jw_finish(&w, NULL);
}

/* The symbolized document stored with the report (see srv_stored_form),
 * with its stacks' spans in F. Its group keys, pending flag and group
 * frames are the row's columns and its level-2 group's frames: the report's
 * view puts them back (st_report_json). */
static char *symbolized_json(srv_stored_form *f)
{
	const ing_symbolized *s = &f->s;
	cm_jw w = {0};
	cm_jw_object(&w);
	cm_jw_key(&w, "images");
	f->symbolized_stacks[0] = (cm_span){w.buf.len, s->images_len};
	cm_jw_raw(&w, s->images, s->images_len);
	cm_jw_key(&w, "threads");
	size_t threads_at = w.buf.len;
	cm_jw_raw(&w, s->threads, s->threads_len);
	for (size_t t = 0; t + 1 < f->nstacks; t++)
		f->symbolized_stacks[1 + t] =
			(cm_span){threads_at + s->thread_spans[t].at, s->thread_spans[t].len};
	cm_jw_key(&w, "stack");
	cm_jw_raw(&w, s->stack, s->stack_len);
	cm_jw_object_end(&w);
	return cm_jw_finish(&w, &f->symbolized_len);
}

int srv_stored_form_make(srv_symbol_set *set, const ing_report *r, const ing_group_rules *rules,
			 ing_memo *memo, ing_arena *arena, srv_stored_form *out)
{
	memset(out, 0, sizeof *out);
	out->images = ing_arena_calloc(arena, r->nimages ? r->nimages : 1, sizeof *out->images);
	if (!out->images)
		return -1;
	srv_symbol_set_images(set, r, out->images);
	if (ing_symbolicate(r, out->images, rules, memo, arena, &out->s) != 0)
		return -1;
	/* Only the app's own images make it wait: its team can upload them. */
	for (size_t i = 0; i < r->nimages; i++)
		if (out->s.image_used[i] && !out->s.image_system[i] &&
		    out->images[i].status != ING_IMAGE_FOUND)
			out->pending = true;
	out->nstacks = 1 + r->nthreads;
	out->raw_stacks = ing_arena_calloc(arena, out->nstacks, sizeof *out->raw_stacks);
	out->symbolized_stacks =
		ing_arena_calloc(arena, out->nstacks, sizeof *out->symbolized_stacks);
	if (!out->raw_stacks || !out->symbolized_stacks) {
		srv_stored_form_clear(out);
		return -1;
	}
	out->raw = ing_report_to_native(r, ING_NATIVE_STACKS, &out->raw_len, out->raw_stacks);
	out->symbolized = symbolized_json(out);
	out->frames1 = identities_json(&out->s.grouping, ING_GROUP_L1_DEPTH);
	out->frames2 = identities_json(&out->s.grouping, ING_GROUP_L2_DEPTH);
	out->waits = waits_json(r, out);
	out->culprit = culprit_json(&out->s.culprit);
	if (!out->raw || !out->symbolized || !out->frames1 || !out->frames2 || !out->waits ||
	    (out->s.culprit.frame && !out->culprit)) {
		srv_stored_form_clear(out);
		return -1;
	}
	return 0;
}

st_document srv_stored_raw(const srv_stored_form *f)
{
	return (st_document){f->raw, f->raw_len, f->raw_stacks, f->nstacks};
}

st_document srv_stored_symbolized(const srv_stored_form *f)
{
	return (st_document){f->symbolized, f->symbolized_len, f->symbolized_stacks, f->nstacks};
}
