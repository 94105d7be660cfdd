/* report_json.c — see report_json.h. */
#include <inttypes.h>
#include <stdio.h>

#include "ingest/report_json.h"

static json_t *hex(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%" PRIx64, v);
	return json_string(buf);
}

static json_t *frames_json(const ing_stack *s)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < s->nframes; i++) {
		const ing_frame *f = &s->frames[i];
		json_t *j = f->symbol_hint ? json_pack("{s:o,s:s}", "address", hex(f->address),
						       "symbol", f->symbol_hint)
					   : hex(f->address);
		if (!j || json_array_append_new(arr, j) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static int set_opt(json_t *o, const char *key, const char *value)
{
	return value ? json_object_set_new(o, key, json_string(value)) : 0;
}

json_t *ing_report_to_native(const ing_report *r)
{
	json_t *o = json_object(), *images = json_array(), *threads = json_array();
	if (!o || !images || !threads)
		goto fail;
	json_object_set_new(o, "report_id", json_string(r->report_id));
	json_object_set_new(o, "kind", json_string(ing_kind_name(r->kind)));
	set_opt(o, "app_version", r->app_version);
	set_opt(o, "build", r->build);
	set_opt(o, "os", r->os);
	set_opt(o, "os_version", r->os_version);
	set_opt(o, "os_build", r->os_build);
	set_opt(o, "device", r->device);
	set_opt(o, "user_id", r->user_id);
	if (r->duration_ms >= 0)
		json_object_set_new(o, "duration_ms", json_integer(r->duration_ms));
	for (size_t i = 0; i < r->nimages; i++) {
		const ing_image *img = &r->images[i];
		json_t *j = json_pack("{s:s,s:o,s:I}", "name", img->name ? img->name : "?",
				      "load_address", hex(img->load_address), "size",
				      (json_int_t)img->size);
		if (!j || json_array_append_new(images, j) != 0)
			goto fail;
		if (img->has_uuid) {
			char uuid[37];
			sym_uuid_format(img->uuid, uuid);
			json_object_set_new(j, "uuid", json_string(uuid));
		}
		if (img->arch != SYM_ARCH_UNKNOWN)
			json_object_set_new(j, "arch", json_string(sym_arch_name(img->arch)));
	}
	for (size_t t = 0; t < r->nthreads; t++) {
		const ing_thread *th = &r->threads[t];
		json_t *frames = frames_json(&th->stack);
		json_t *j = frames ? json_pack("{s:b,s:o}", "main", th->main, "frames", frames) : NULL;
		if (!j || json_array_append_new(threads, j) != 0)
			goto fail;
		set_opt(j, "name", th->name);
	}
	json_object_set_new(o, "images", images);
	json_object_set_new(o, "threads", threads);
	images = threads = NULL;
	if (r->nsamples) {
		json_t *samples = json_array();
		if (!samples || json_object_set_new(o, "samples", samples) != 0)
			goto fail;
		for (size_t s = 0; s < r->nsamples; s++) {
			json_t *frames = frames_json(&r->samples[s].stack);
			json_t *j = frames ? json_pack("{s:I,s:o}", "t_ms", (json_int_t)r->samples[s].t_ms,
						       "frames", frames)
					   : NULL;
			if (!j || json_array_append_new(samples, j) != 0)
				goto fail;
		}
	}
	return o;
fail:
	json_decref(images);
	json_decref(threads);
	json_decref(o);
	return NULL;
}
