/* report_json.c — see report_json.h. Written as text directly
 * (common/jsonw.h): this runs for every ingested report. */
#include <string.h>

#include "common/jsonw.h"
#include "ingest/report_json.h"

static void frames_write(cm_jw *w, const ing_stack *s)
{
	cm_jw_array(w);
	for (size_t i = 0; i < s->nframes; i++) {
		const ing_frame *f = &s->frames[i];
		if (!f->symbol_hint) {
			cm_jw_hex(w, f->address);
			continue;
		}
		cm_jw_object(w);
		cm_jw_key(w, "address");
		cm_jw_hex(w, f->address);
		cm_jw_key(w, "symbol");
		cm_jw_string(w, f->symbol_hint);
		cm_jw_object_end(w);
	}
	cm_jw_array_end(w);
}

static void identity_write(cm_jw *w, const ing_report *r)
{
	cm_jw_key(w, "report_id");
	cm_jw_string(w, r->report_id);
	cm_jw_key(w, "kind");
	cm_jw_string(w, ing_kind_name(r->kind));
	cm_jw_optional_string(w, "app_version", r->app_version);
	cm_jw_optional_string(w, "build", r->build);
	cm_jw_optional_string(w, "os", r->os);
	cm_jw_optional_string(w, "os_version", r->os_version);
	cm_jw_optional_string(w, "os_build", r->os_build);
	cm_jw_optional_string(w, "device", r->device);
	cm_jw_optional_string(w, "user_id", r->user_id);
	if (r->duration_ms >= 0) {
		cm_jw_key(w, "duration_ms");
		cm_jw_int(w, r->duration_ms);
	}
}

char *ing_report_to_native(const ing_report *r, ing_native_part part, size_t *len,
			   cm_span *out_stacks)
{
	cm_jw w = {0};
	cm_jw_object(&w);
	if (part == ING_NATIVE_WHOLE)
		identity_write(&w, r);
	cm_jw_key(&w, "images");
	size_t images_at = w.buf.len;
	cm_jw_array(&w);
	for (size_t i = 0; i < r->nimages; i++) {
		const ing_image *img = &r->images[i];
		cm_jw_object(&w);
		cm_jw_key(&w, "name");
		cm_jw_string(&w, img->name ? img->name : "?");
		cm_jw_key(&w, "load_address");
		cm_jw_hex(&w, img->load_address);
		cm_jw_key(&w, "size");
		cm_jw_int(&w, (int64_t)img->size);
		if (img->has_uuid) {
			char uuid[37];
			sym_uuid_format(img->uuid, uuid);
			cm_jw_key(&w, "uuid");
			cm_jw_string(&w, uuid);
		}
		if (img->arch != SYM_ARCH_UNKNOWN)
			cm_jw_optional_string(&w, "arch", sym_arch_name(img->arch));
		cm_jw_object_end(&w);
	}
	cm_jw_array_end(&w);
	if (out_stacks)
		out_stacks[0] = (cm_span){images_at, w.buf.len - images_at};
	cm_jw_key(&w, "threads");
	cm_jw_array(&w);
	for (size_t t = 0; t < r->nthreads; t++) {
		const ing_thread *th = &r->threads[t];
		cm_jw_object(&w);
		size_t thread_at = w.buf.len - 1;
		cm_jw_key(&w, "main");
		cm_jw_bool(&w, th->main);
		cm_jw_key(&w, "frames");
		frames_write(&w, &th->stack);
		cm_jw_optional_string(&w, "name", th->name);
		cm_jw_object_end(&w);
		if (out_stacks)
			out_stacks[1 + t] = (cm_span){thread_at, w.buf.len - thread_at};
	}
	cm_jw_array_end(&w);
	if (r->nsamples) {
		cm_jw_key(&w, "samples");
		cm_jw_array(&w);
		for (size_t s = 0; s < r->nsamples; s++) {
			cm_jw_object(&w);
			cm_jw_key(&w, "t_ms");
			cm_jw_int(&w, r->samples[s].t_ms);
			cm_jw_key(&w, "frames");
			frames_write(&w, &r->samples[s].stack);
			cm_jw_object_end(&w);
		}
		cm_jw_array_end(&w);
	}
	if (r->matrix_content) {
		/* An Android report is made again from its Matrix element
		 * (reprocessing, ingest/matrix.h); its frames above are what
		 * storage shares between reports. */
		cm_jw_key(&w, "matrix");
		cm_jw_raw(&w, r->matrix_content, strlen(r->matrix_content));
	}
	cm_jw_object_end(&w);
	return cm_jw_finish(&w, len);
}
