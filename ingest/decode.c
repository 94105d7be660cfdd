/*
 * decode.c — gzip/deflate request bodies through zlib, bounded.
 *
 * The output buffer grows geometrically but never past MAX_OUT + 1 bytes:
 * producing that one extra byte proves the body too large, so a bomb costs
 * at most MAX_OUT of memory and the time to inflate it.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "ingest/decode.h"

typedef enum { ENC_IDENTITY, ENC_GZIP, ENC_DEFLATE } encoding;

static int parse_encoding(const char *ce, encoding *out)
{
	if (!ce) {
		*out = ENC_IDENTITY;
		return 0;
	}
	while (*ce == ' ' || *ce == '\t')
		ce++;
	size_t n = strlen(ce);
	while (n && (ce[n - 1] == ' ' || ce[n - 1] == '\t'))
		n--;
	static const struct {
		const char *name;
		encoding enc;
	} names[] = {{"", ENC_IDENTITY},    {"identity", ENC_IDENTITY},
		     {"gzip", ENC_GZIP},     {"x-gzip", ENC_GZIP},
		     {"deflate", ENC_DEFLATE}};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i].name) == n &&
		    !strncasecmp(names[i].name, ce, n)) {
			*out = names[i].enc;
			return 0;
		}
	return -1;
}

/* A zlib stream starts with CMF/FLG where CM = 8 and the pair is a
 * multiple of 31; anything else sent as "deflate" is taken as raw. */
static bool zlib_header(const uint8_t *in, size_t len)
{
	return len >= 2 && (in[0] & 0x0f) == 8 && (in[0] >> 4) <= 7 &&
	       ((unsigned)in[0] << 8 | in[1]) % 31 == 0;
}

/* One body's inflation: the input left and the output so far. */
typedef struct inflater {
	z_stream zs;
	encoding enc;
	const uint8_t *p;
	size_t left;
	uint8_t *buf; /* cap + 1 bytes, room for the NUL */
	size_t cap, produced;
	size_t max_out, limit; /* limit = max_out + 1: one over says too large */
} inflater;

static int too_large(const inflater *f, ing_error *err)
{
	return ing_error_set(err, ERR_DECOMPRESSED_TOO_LARGE,
			     "body: decompresses to more than %zu bytes", f->max_out);
}

/* Doubles the output buffer, up to the limit. */
static int grow(inflater *f, ing_error *err)
{
	if (f->cap == f->limit)
		return too_large(f, err);
	size_t ncap = f->cap > f->limit / 2 ? f->limit : f->cap * 2;
	uint8_t *nb = realloc(f->buf, ncap + 1);
	if (!nb)
		return ing_error_set(err, ERR_INTERNAL, "out of memory");
	f->buf = nb;
	f->cap = ncap;
	return 0;
}

/* What zlib's answer ZR to one step means: 1 = the body is whole, 0 =
 * more to do, -1 = refused. */
static int step_result(inflater *f, int zr, ing_error *err)
{
	if (zr == Z_STREAM_END) {
		/* gzip allows concatenated members; anything else after the
		 * end is garbage. */
		if (f->left == 0)
			return 1;
		if (f->enc == ENC_GZIP && f->left >= 2 && f->p[0] == 0x1f && f->p[1] == 0x8b) {
			inflateReset(&f->zs);
			return 0;
		}
		return ing_error_set(err, ERR_BAD_ENCODING,
				     "body: %zu bytes after the end of the compressed stream",
				     f->left);
	}
	if (zr == Z_BUF_ERROR && f->zs.avail_out != 0 && f->left == 0)
		return ing_error_set(err, ERR_BAD_ENCODING, "body: compressed stream is truncated");
	if (zr != Z_OK && zr != Z_BUF_ERROR)
		return ing_error_set(err, ERR_BAD_ENCODING, "body: corrupt %s stream (%s)",
				     f->enc == ENC_GZIP ? "gzip" : "deflate",
				     f->zs.msg ? f->zs.msg : "zlib error");
	if (f->left == 0 && f->zs.avail_out != 0)
		/* All input consumed, output room left, no end. */
		return ing_error_set(err, ERR_BAD_ENCODING, "body: compressed stream is truncated");
	return 0;
}

/* Feeds and drains one bounded step (zlib counts in uInt). */
static int step(inflater *f, ing_error *err)
{
	if (f->produced == f->cap && grow(f, err) < 0)
		return -1;
	uInt in_step = f->left > 1u << 30 ? 1u << 30 : (uInt)f->left;
	size_t room = f->cap - f->produced;
	uInt out_step = room > 1u << 30 ? 1u << 30 : (uInt)room;
	f->zs.next_in = (Bytef *)(uintptr_t)f->p;
	f->zs.avail_in = in_step;
	f->zs.next_out = f->buf + f->produced;
	f->zs.avail_out = out_step;
	int zr = inflate(&f->zs, Z_NO_FLUSH);
	size_t used = in_step - f->zs.avail_in;
	f->p += used;
	f->left -= used;
	f->produced += out_step - f->zs.avail_out;
	return step_result(f, zr, err);
}

static int inflate_all(encoding enc, const uint8_t *in, size_t len,
		       size_t max_out, uint8_t **out, size_t *out_len,
		       ing_error *err)
{
	inflater f = {.enc = enc, .p = in, .left = len, .max_out = max_out};
	int wbits = enc == ENC_GZIP ? 15 + 16
		    : zlib_header(in, len) ? 15
					   : -15;
	if (inflateInit2(&f.zs, wbits) != Z_OK)
		return ing_error_set(err, ERR_INTERNAL, "zlib init failed");
	/* Room for max_out + 1 bytes plus the terminating NUL. */
	f.cap = len < SIZE_MAX / 4 ? len * 4 : SIZE_MAX;
	if (f.cap < 64 * 1024)
		f.cap = 64 * 1024;
	f.limit = max_out < SIZE_MAX - 2 ? max_out + 1 : SIZE_MAX - 1;
	if (f.cap > f.limit)
		f.cap = f.limit;
	f.buf = malloc(f.cap + 1);
	int rc = f.buf ? 0 : ing_error_set(err, ERR_INTERNAL, "out of memory");
	while (rc == 0)
		rc = step(&f, err);
	if (rc > 0 && f.produced > max_out)
		rc = too_large(&f, err);
	if (rc > 0) {
		f.buf[f.produced] = '\0';
		*out = f.buf;
		*out_len = f.produced;
		f.buf = NULL;
		rc = 0;
	}
	inflateEnd(&f.zs);
	free(f.buf);
	return rc;
}

int ing_decode_body(const char *content_encoding, const uint8_t *in,
		    size_t len, size_t max_out, uint8_t **out,
		    size_t *out_len, ing_error *err)
{
	encoding enc;
	*out = NULL;
	*out_len = 0;
	if (parse_encoding(content_encoding, &enc) < 0)
		return ing_error_set(err, ERR_UNSUPPORTED_MEDIA,
				     "Content-Encoding: only gzip, deflate "
				     "and identity are accepted");
	if (enc == ENC_IDENTITY) {
		if (len > max_out)
			return ing_error_set(err, ERR_BODY_TOO_LARGE,
					     "body: more than %zu bytes",
					     max_out);
		uint8_t *buf = malloc(len + 1);
		if (!buf)
			return ing_error_set(err, ERR_INTERNAL,
					     "out of memory");
		if (len)
			memcpy(buf, in, len);
		buf[len] = '\0';
		*out = buf;
		*out_len = len;
		return 0;
	}
	if (len == 0)
		return ing_error_set(err, ERR_BAD_ENCODING,
				     "body: empty compressed stream");
	return inflate_all(enc, in, len, max_out, out, out_len, err);
}
