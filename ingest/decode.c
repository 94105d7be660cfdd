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

static int inflate_all(encoding enc, const uint8_t *in, size_t len,
		       size_t max_out, uint8_t **out, size_t *out_len,
		       ing_error *err)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	int wbits = enc == ENC_GZIP ? 15 + 16
		    : zlib_header(in, len) ? 15
					   : -15;
	if (inflateInit2(&zs, wbits) != Z_OK)
		return ing_error_set(err, ERR_INTERNAL, "zlib init failed");
	/* Room for max_out + 1 bytes plus the terminating NUL. */
	size_t cap = len < SIZE_MAX / 4 ? len * 4 : SIZE_MAX;
	if (cap < 64 * 1024)
		cap = 64 * 1024;
	size_t limit = max_out < SIZE_MAX - 2 ? max_out + 1 : SIZE_MAX - 1;
	if (cap > limit)
		cap = limit;
	uint8_t *buf = malloc(cap + 1);
	size_t produced = 0;
	int rc = 0;
	if (!buf) {
		rc = ing_error_set(err, ERR_INTERNAL, "out of memory");
		goto done;
	}
	const uint8_t *p = in;
	size_t left = len;
	for (;;) {
		if (produced == cap) {
			if (cap == limit) {
				rc = ing_error_set(
					err, ERR_DECOMPRESSED_TOO_LARGE,
					"body: decompresses to more than %zu "
					"bytes",
					max_out);
				goto done;
			}
			size_t ncap = cap > limit / 2 ? limit : cap * 2;
			uint8_t *nb = realloc(buf, ncap + 1);
			if (!nb) {
				rc = ing_error_set(err, ERR_INTERNAL,
						   "out of memory");
				goto done;
			}
			buf = nb;
			cap = ncap;
		}
		/* zlib counts in uInt: feed and drain in bounded steps. */
		uInt in_step = left > 1u << 30 ? 1u << 30 : (uInt)left;
		size_t room = cap - produced;
		uInt out_step = room > 1u << 30 ? 1u << 30 : (uInt)room;
		zs.next_in = (Bytef *)(uintptr_t)p;
		zs.avail_in = in_step;
		zs.next_out = buf + produced;
		zs.avail_out = out_step;
		int zr = inflate(&zs, Z_NO_FLUSH);
		size_t used = in_step - zs.avail_in;
		p += used;
		left -= used;
		produced += out_step - zs.avail_out;
		if (zr == Z_STREAM_END) {
			/* gzip allows concatenated members; anything else
			 * after the end is garbage. */
			if (left == 0)
				break;
			if (enc == ENC_GZIP && left >= 2 && p[0] == 0x1f &&
			    p[1] == 0x8b) {
				inflateReset(&zs);
				continue;
			}
			rc = ing_error_set(err, ERR_BAD_ENCODING,
					   "body: %zu bytes after the end of "
					   "the compressed stream",
					   left);
			goto done;
		}
		if (zr == Z_BUF_ERROR && zs.avail_out != 0 && left == 0) {
			rc = ing_error_set(err, ERR_BAD_ENCODING,
					   "body: compressed stream is "
					   "truncated");
			goto done;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			rc = ing_error_set(err, ERR_BAD_ENCODING,
					   "body: corrupt %s stream (%s)",
					   enc == ENC_GZIP ? "gzip" : "deflate",
					   zs.msg ? zs.msg : "zlib error");
			goto done;
		}
		if (left == 0 && zs.avail_out != 0) {
			/* All input consumed, output room left, no end. */
			rc = ing_error_set(err, ERR_BAD_ENCODING,
					   "body: compressed stream is "
					   "truncated");
			goto done;
		}
	}
	if (produced > max_out) {
		rc = ing_error_set(err, ERR_DECOMPRESSED_TOO_LARGE,
				   "body: decompresses to more than %zu bytes",
				   max_out);
		goto done;
	}
	buf[produced] = '\0';
	*out = buf;
	*out_len = produced;
	buf = NULL;
done:
	inflateEnd(&zs);
	free(buf);
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
