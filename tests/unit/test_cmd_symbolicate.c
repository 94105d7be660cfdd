/*
 * test_cmd_symbolicate.c — `stallscope symbolicate`'s own writer and reader
 * (server/cli/cmd_symbolicate.c, included to reach its statics) against
 * what they replaced: every line must be byte for byte what cm_jw and
 * sym_frame_json write (the frames' form everywhere else, SPEC §3.5), every
 * token what getline and strtok_r on " \t\r\n" cut, every address what
 * srv_cli_parse_u64 reads. Frames come from crafted values at the limits
 * and from real lookups across every thin DWARF fixture.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "server/cli/cmd_symbolicate.c"
#include "symbolizer/frame_json.h"

/* The line as the command wrote it before: through cm_jw. */
static void reference_line(cm_jw *w, uint64_t shown, const sym_frame *frames, size_t n)
{
	cm_jw_object(w);
	cm_jw_key(w, "address");
	cm_jw_hex(w, shown);
	cm_jw_key(w, "frames");
	cm_jw_array(w);
	for (size_t i = 0; i < n; i++)
		sym_frame_json(w, &frames[i], true, frames[i].symbol_address);
	cm_jw_array_end(w);
	cm_jw_object_end(w);
	cm_jw_line_end(w);
}

static void reference_not_an_address(cm_jw *w, const char *token, size_t len)
{
	cm_jw_object(w);
	cm_jw_key(w, "address");
	cm_jw_stringn(w, token, len);
	cm_jw_key(w, "frames");
	cm_jw_array(w);
	cm_jw_array_end(w);
	cm_jw_key(w, "error");
	cm_jw_string(w, "not an address");
	cm_jw_object_end(w);
	cm_jw_line_end(w);
}

static void assert_same_text(const out *o, const cm_jw *w)
{
	assert_false(w->buf.failed);
	if (o->len != w->buf.len || memcmp(o->data, w->buf.data, o->len) != 0)
		fail_msg("writer differs:\nours: %.*s\nref:  %.*s", (int)o->len, o->data,
			 (int)w->buf.len, w->buf.data);
}

static void assert_same_line(uint64_t shown, const sym_frame *frames, size_t n)
{
	out o = {0};
	cm_jw w = {0};
	put_line(&o, shown, frames, n);
	reference_line(&w, shown, frames, n);
	assert_same_text(&o, &w);
	free(o.data);
	free(w.buf.data);
}

/* Strings that put every byte value, and escapes at every offset of an
 * eight-byte word, through the writer. */
static void test_frames_at_the_limits(void **state)
{
	(void)state;
	char every[256];
	for (int c = 1; c < 256; c++)
		every[c - 1] = (char)c;
	every[255] = '\0';
	static const char *const texts[] = {
		"",
		"a",
		"main",
		"\"",
		"\\",
		"ab\"cdefgh\\ijklmnop\x1fq",
		"0123456\n89abcdef\t",
		"/Users/dev/Library/Developer/Xcode/DerivedData/App-abc/Build/File.swift",
		"caf\xc3\xa9 \xf0\x9f\x98\x80 \x7f",
		"ends with a quote\"",
		"\x01"};
	static const uint64_t addrs[] = {0, 1, 0xf, 0x10, 0x104000000ull, UINT64_MAX};
	static const uint32_t nums[] = {0, 1, 9, 10, 99, 100, 12345, 999999999, UINT32_MAX};
	size_t nt = sizeof texts / sizeof *texts;
	for (size_t i = 0; i < 64; i++) {
		sym_frame f[3];
		for (size_t k = 0; k < 3; k++) {
			size_t j = i + k;
			f[k] = (sym_frame){
				.function = j % 7 == 6	 ? NULL
					    : j % 5 == 4 ? every
							 : texts[j % nt],
				.symbol = j % 9 == 8 ? NULL : texts[(j * 3 + 1) % nt],
				.symbol_address = addrs[j % 6],
				.file = j % 4 == 3 ? NULL : texts[(j * 5 + 2) % nt],
				.line = nums[j % 9],
				.column = nums[(j * 2 + 1) % 9],
				.inlined = j % 2 == 0,
			};
		}
		assert_same_line(addrs[(i + 1) % 6], f, i % 4);
	}
	for (size_t k = 0; k < 24; k++) {
		char s[40];
		memset(s, 'x', sizeof s);
		s[k] = k % 3 == 0 ? '"' : k % 3 == 1 ? '\\' : (char)(k % 32);
		sym_frame f = {.function = s, .symbol = "s", .file = "f"};
		s[k + 9] = '\0';
		assert_same_line(k, &f, 1);
	}
}

static void test_not_an_address(void **state)
{
	(void)state;
	static const char *const tokens[] = {"zz",   "0x",	    "0xg1", "\"quoted\"",
					     "a\\b", "ctl\x01\x1f", "-1",   "caf\xc3\xa9"};
	for (size_t i = 0; i < sizeof tokens / sizeof *tokens; i++) {
		out o = {0};
		cm_jw w = {0};
		put_not_an_address(&o, tokens[i], strlen(tokens[i]));
		reference_not_an_address(&w, tokens[i], strlen(tokens[i]));
		assert_same_text(&o, &w);
		free(o.data);
		free(w.buf.data);
	}
}

static const char *fixtures_dir(void)
{
	const char *dir = getenv("STALLSCOPE_FIXTURES");
	return dir ? dir : "build/fixtures";
}

/* Looks up addresses across PATH's text (every byte of small images, a
 * stride through large ones) and writes each answer both ways. */
static size_t compare_lookups(const char *path)
{
	sym_cache *cache = NULL;
	uint8_t *owned = NULL;
	sym_error err;
	if (srv_cli_open_cache(path, SYM_ARCH_UNKNOWN, &cache, &owned, &err) != SYM_OK)
		fail_msg("%s: %s", path, err.msg);
	sym_cache_info info;
	sym_cache_get_info(cache, &info);
	uint64_t step = info.text_size / 50000 + 1;
	out o = {0};
	cm_jw w = {0};
	size_t framed = 0;
	for (uint64_t a = info.base_address; a < info.base_address + info.text_size; a += step) {
		sym_frame frames[SYM_MAX_FRAMES];
		size_t n = sym_cache_lookup(cache, a, frames, SYM_MAX_FRAMES);
		framed += n > 0;
		put_line(&o, a, frames, n);
		reference_line(&w, a, frames, n);
	}
	assert_same_text(&o, &w);
	free(o.data);
	free(w.buf.data);
	sym_cache_close(cache);
	free(owned);
	return framed;
}

static void test_real_lookups(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof path, "%s/manifest.json", fixtures_dir());
	json_error_t jerr;
	json_t *m = json_load_file(path, 0, &jerr);
	if (!m)
		fail_msg("cannot read %s (run `make fixtures`)", path);
	json_t *f;
	size_t i, files = 0, framed = 0;
	json_array_foreach(json_object_get(m, "files"), i, f)
	{
		const char *kind = json_string_value(json_object_get(f, "kind"));
		if (!kind || strcmp(kind, "dwarf") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", fixtures_dir(),
			 json_string_value(json_object_get(f, "path")));
		framed += compare_lookups(path);
		files++;
	}
	json_decref(m);
	assert_true(files >= 5);
	assert_true(framed > 1000);
}

static void test_numbers(void **state)
{
	(void)state;
	uint64_t v = 1;
	for (int i = 0; i < 2000; i++, v = v * 6364136223846793005u + 1442695040888963407u) {
		uint64_t x = i < 64    ? (uint64_t)1 << i
			     : i < 128 ? ((uint64_t)1 << (i - 64)) - 1
				       : v;
		char ours[32], ref[32];
		*put_hex(ours, x) = '\0';
		snprintf(ref, sizeof ref, "%" PRIx64, x);
		assert_string_equal(ours, ref);
		uint32_t y = (uint32_t)(i < 64 ? x : x >> (i % 32));
		*put_dec(ours, y) = '\0';
		snprintf(ref, sizeof ref, "%" PRIu32, y);
		assert_string_equal(ours, ref);
	}
}

static void test_addresses_read_as_before(void **state)
{
	(void)state;
	static const char *const tokens[] = {"0",
					     "7",
					     "0x0",
					     "0X1F",
					     "0xabcDEF",
					     "0x0x10",
					     "0x0X1f",
					     "0x0x",
					     "0x",
					     "0X",
					     "x1",
					     "0xffffffffffffffff",
					     "0x10000000000000000",
					     "0x00000000000000001234",
					     "18446744073709551615",
					     "18446744073709551616",
					     "9999999999999999999",
					     "00000000000000000000042",
					     "12a",
					     "0x12g",
					     "-1",
					     "+1",
					     "1 ",
					     "0x-1",
					     "0x+1",
					     "abc",
					     "0xFFFFFFFFFFFFFFFF0",
					     "4294967296",
					     "0x104000000"};
	for (size_t i = 0; i < sizeof tokens / sizeof *tokens; i++) {
		uint64_t ours = 0xdead, ref = 0xdead;
		bool ok = parse_address(tokens[i], strlen(tokens[i]), &ours);
		bool ref_ok = srv_cli_parse_u64(tokens[i], &ref);
		if (ok != ref_ok || (ok && ours != ref))
			fail_msg("'%s': ours %d 0x%" PRIx64 ", before %d 0x%" PRIx64, tokens[i], ok,
				 ours, ref_ok, ref);
	}
}

/* The tokens of DATA (N bytes) as the line reader cut them, each followed
 * by '|', into REF (malloc'ed). */
static char *reference_tokens(const char *data, size_t n)
{
	FILE *f = fmemopen((void *)data, n, "r");
	cm_buf ref = {0};
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL;
		for (char *t = strtok_r(line, " \t\r\n", &save); t;
		     t = strtok_r(NULL, " \t\r\n", &save)) {
			cm_buf_put(&ref, t, strlen(t));
			cm_buf_put(&ref, "|", 1);
		}
	}
	free(line);
	fclose(f);
	cm_buf_put(&ref, "", 1);
	return ref.data;
}

/* DATA (N bytes) fed to in_token through a real file on stdin. */
static char *our_tokens(const char *data, size_t n)
{
	char path[] = "/tmp/stallscope-symbolicate-in-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	int saved = dup(STDIN_FILENO);
	assert_true(dup2(fd, STDIN_FILENO) == STDIN_FILENO);
	in r = {0};
	cm_buf got = {0};
	size_t len;
	for (char *t; (t = in_token(&r, &len));) {
		assert_int_equal(strlen(t), len);
		cm_buf_put(&got, t, len);
		cm_buf_put(&got, "|", 1);
	}
	cm_buf_put(&got, "", 1);
	free(r.data);
	dup2(saved, STDIN_FILENO);
	close(saved);
	close(fd);
	unlink(path);
	return got.data;
}

static void assert_same_tokens(const char *data, size_t n)
{
	char *ours = our_tokens(data, n), *ref = reference_tokens(data, n);
	if (strcmp(ours, ref) != 0)
		fail_msg("tokens differ (%zu bytes of input): ours %zu bytes, before %zu", n,
			 strlen(ours), strlen(ref));
	free(ours);
	free(ref);
}

static void test_tokens_cut_as_before(void **state)
{
	(void)state;
	static const char small[] = "0x1 0x2\t0x3\r\n\n  \t\r\n0x4\n0x5\0hidden 0x6\n0x7\n"
				    "\0at start\n0x8  trailing";
	assert_same_tokens(small, sizeof small - 1);
	assert_same_tokens("", 0);
	assert_same_tokens(" \n\t\r\n", 5);
	assert_same_tokens("\0", 1);
	/* Tokens across block boundaries, NULs near them and one token four
	 * blocks long: the reader's buffer moves and grows. */
	size_t n = 6 * IN_BLOCK;
	char *big = malloc(n);
	uint64_t v = 7;
	for (size_t i = 0; i < n; i++) {
		v = v * 6364136223846793005u + 1442695040888963407u;
		unsigned r = (unsigned)(v >> 58);
		big[i] = r < 3 ? " \t\r"[r] : r < 6 ? '\n' : r == 6 ? '\0' : (char)('a' + r % 26);
	}
	memset(big + IN_BLOCK + 100, 'z', 4 * IN_BLOCK);
	big[IN_BLOCK - 1] = 'q';
	assert_same_tokens(big, n);
	assert_same_tokens(big + 5, n - 5);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_at_the_limits),
		cmocka_unit_test(test_not_an_address),
		cmocka_unit_test(test_real_lookups),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_addresses_read_as_before),
		cmocka_unit_test(test_tokens_cut_as_before),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
