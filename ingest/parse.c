/*
 * parse.c — one entry point for every format: the dispatcher to the five
 * parsers, kept apart from the helpers they share (field.c) so that the
 * parsers depend on field.c and nothing there depends on them. See parse.h.
 */
#include "ingest/parse.h"

const char *ing_format_name(ing_format format)
{
	switch (format) {
	case ING_FORMAT_NATIVE: return "native";
	case ING_FORMAT_METRICKIT: return "metrickit";
	case ING_FORMAT_KSCRASH: return "kscrash";
	case ING_FORMAT_IPS: return "ips";
	case ING_FORMAT_MATRIX: return "matrix";
	}
	return "unknown";
}

static int parse_format(ing_format format, const char *body, size_t len, const ing_limits *limits,
			const char *user_id, ing_batch **out_batch, ing_error *err)
{
	switch (format) {
	case ING_FORMAT_NATIVE: return ing_parse_native(body, len, limits, user_id, out_batch, err);
	case ING_FORMAT_METRICKIT:
		return ing_parse_metrickit(body, len, limits, user_id, out_batch, err);
	case ING_FORMAT_KSCRASH:
		return ing_parse_kscrash(body, len, limits, user_id, out_batch, err);
	case ING_FORMAT_IPS: return ing_parse_ips(body, len, limits, user_id, out_batch, err);
	case ING_FORMAT_MATRIX: return ing_parse_matrix(body, len, limits, user_id, out_batch, err);
	}
	*out_batch = NULL;
	return ing_error_set(err, ERR_INTERNAL, "unknown format");
}

int ing_parse(ing_format format, const char *body, size_t len, const ing_limits *limits,
	      const char *user_id, ing_batch **out_batch, ing_error *err)
{
	int rc = parse_format(format, body, len, limits, user_id, out_batch, err);
	/* A duration no stall can have (KSCrash's nanosecond clocks, a
	 * MetricKit or .ips text) is a measurement gone wrong, not what the
	 * report is about: kept as unknown, as each parser keeps one it
	 * cannot read. */
	for (size_t i = 0; rc == 0 && i < (*out_batch)->nentries; i++) {
		ing_report *r = (*out_batch)->entries[i].report;
		if (r && r->duration_ms > ING_DURATION_MAX_MS)
			r->duration_ms = -1;
	}
	return rc;
}
