/*
 * test_symbolicate.c — symbolization at ingest (ingest/symbolicate.c), the
 * symcache LRU and the native round trip used by reprocessing, on a real
 * fixture dSYM. Expected frames come from direct symcache lookups at the
 * file addresses the test computes itself; expected keys from XXH3 over
 * identities the test spells out.
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
#include <xxhash.h>

#include "ingest/parse.h"
#include "ingest/report_json.h"
#include "ingest/symbolicate.h"
#include "ingest/symcache_lru.h"

#define LOAD 0x104000000ull

typedef struct fixture {
	char *dsym_path;
	char symcache_path[64];
	uint8_t *buf;
	size_t len;
	sym_cache *cache;
	sym_cache_info info;
	char uuid[37];
	/* File addresses: one with an inline chain, two plain ones. */
	uint64_t inlined, plain1, plain2;
} fixture;

static fixture fx;

static char *tiny_dsym(void)
{
	const char *dir = getenv("STALLSCOPE_FIXTURES");
	char path[4096];
	snprintf(path, sizeof path, "%s/manifest.json", dir ? dir : "build/fixtures");
	json_error_t jerr;
	json_t *m = json_load_file(path, 0, &jerr);
	if (!m)
		fail_msg("cannot read %s (run `make fixtures`)", path);
	json_t *f;
	size_t i;
	char *out = NULL;
	json_array_foreach(json_object_get(m, "files"), i, f) {
		const char *kind = json_string_value(json_object_get(f, "kind"));
		const char *role = json_string_value(json_object_get(f, "role"));
		if (kind && role && !strcmp(kind, "dwarf") && !strcmp(role, "tiny")) {
			snprintf(path, sizeof path, "%s/%s", dir ? dir : "build/fixtures",
				 json_string_value(json_object_get(f, "path")));
			out = strdup(path);
			break;
		}
	}
	json_decref(m);
	if (!out)
		fail_msg("no tiny dwarf fixture");
	return out;
}

static int setup(void **state)
{
	(void)state;
	fx.dsym_path = tiny_dsym();
	sym_object *obj = NULL;
	sym_error err;
	if (sym_object_open(fx.dsym_path, &obj, &err) != SYM_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(sym_cache_build(obj, 0, &fx.buf, &fx.len, NULL, &err), SYM_OK);
	strcpy(fx.symcache_path, "/tmp/stallscope-lru-XXXXXX");
	int fd = mkstemp(fx.symcache_path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sym_cache_write(obj, 0, fx.symcache_path, 0600, NULL, &err), SYM_OK);
	sym_object_free(obj);
	assert_int_equal(sym_cache_from_memory(fx.buf, fx.len, &fx.cache, &err), SYM_OK);
	sym_cache_get_info(fx.cache, &fx.info);
	sym_uuid_format(fx.info.uuid, fx.uuid);
	sym_frame fr[SYM_MAX_FRAMES];
	for (uint64_t a = fx.info.base_address; a < fx.info.base_address + fx.info.text_size; a += 4) {
		size_t n = sym_cache_lookup(fx.cache, a, fr, SYM_MAX_FRAMES);
		if (n >= 2 && !fx.inlined)
			fx.inlined = a;
		if (n == 1 && !fx.plain1)
			fx.plain1 = a;
		else if (n == 1 && fx.plain1 && !fx.plain2 &&
			 strcmp(fr[0].function, "") != 0) {
			sym_frame f1[SYM_MAX_FRAMES];
			sym_cache_lookup(fx.cache, fx.plain1, f1, SYM_MAX_FRAMES);
			if (strcmp(f1[0].function, fr[0].function))
				fx.plain2 = a;
		}
	}
	assert_true(fx.inlined && fx.plain1 && fx.plain2);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sym_cache_close(fx.cache);
	free(fx.buf);
	unlink(fx.symcache_path);
	free(fx.dsym_path);
	return 0;
}

static uint64_t runtime(uint64_t file)
{
	return file - fx.info.base_address + LOAD;
}

/* Parses a native report built from FMT. */
static ing_batch *parse(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static ing_batch *parse(const char *fmt, ...)
{
	char body[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(body, sizeof body, fmt, ap);
	va_end(ap);
	ing_batch *b = NULL;
	ing_error err;
	if (ing_parse_native(body, strlen(body), NULL, "user-1", &b, &err) != 0)
		fail_msg("parse: %s", err.message);
	if (!b->entries[0].report)
		fail_msg("rejected: %s", b->entries[0].error.message);
	return b;
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The texts of ing_symbolized, parsed. */
typedef struct parsed {
	json_t *images, *threads, *stack;
} parsed;

static json_t *load(const char *text, size_t len)
{
	json_error_t err;
	json_t *j = json_loadb(text, len, 0, &err);
	if (!j)
		fail_msg("not JSON: %s: %.*s", err.text, (int)len, text);
	return j;
}

static parsed parse_symbolized(const ing_symbolized *s)
{
	parsed p = {load(s->images, s->images_len), load(s->threads, s->threads_len),
		    load(s->stack, s->stack_len)};
	assert_int_equal(strlen(s->images), s->images_len);
	return p;
}

static void parsed_free(parsed *p)
{
	json_decref(p->images);
	json_decref(p->threads);
	json_decref(p->stack);
}

/* The chain JSON of a symbolized frame equals a direct lookup at FILE. */
static void expect_chain(const json_t *frame, uint64_t file)
{
	sym_frame want[SYM_MAX_FRAMES];
	size_t n = sym_cache_lookup(fx.cache, file, want, SYM_MAX_FRAMES);
	json_t *chain = json_object_get(frame, "frames");
	assert_int_equal(json_array_size(chain), n);
	for (size_t i = 0; i < n; i++) {
		json_t *f = json_array_get(chain, i);
		assert_string_equal(jstr(f, "function"), want[i].function);
		assert_string_equal(jstr(f, "symbol"), want[i].symbol);
		assert_int_equal(json_integer_value(json_object_get(f, "line")), want[i].line);
		assert_int_equal(json_is_true(json_object_get(f, "inlined")), want[i].inlined);
		char sa[24];
		snprintf(sa, sizeof sa, "0x%" PRIx64, runtime(want[i].symbol_address));
		assert_string_equal(jstr(f, "symbol_address"), sa);
	}
}

static char *key_of(const char *const *ids, size_t n)
{
	char joined[4096] = "";
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(joined, "\n");
		strcat(joined, ids[i]);
	}
	char *out = malloc(17);
	snprintf(out, 17, "%016" PRIx64, (uint64_t)XXH3_64bits(joined, strlen(joined)));
	return out;
}

static void test_thread_frames_and_keys(void **state)
{
	(void)state;
	/* A stack: the PC in an inlined call, then two return addresses. */
	uint64_t pc = runtime(fx.inlined), r1 = runtime(fx.plain1) + 1, r2 = runtime(fx.plain2) + 1;
	ing_batch *b = parse("{\"report_id\":\"r1\",\"images\":[{\"name\":\"/x/libDemo.dylib\","
			     "\"uuid\":\"%s\",\"arch\":\"arm64\",\"load_address\":\"0x%llx\",\"size\":%llu}],"
			     "\"threads\":[{\"name\":\"main\",\"main\":true,\"frames\":"
			     "[\"0x%" PRIx64 "\",\"0x%" PRIx64 "\",\"0x%" PRIx64 "\"]}]}",
			     fx.uuid, LOAD, (unsigned long long)fx.info.text_size, pc, r1, r2);
	const ing_report *r = b->entries[0].report;
	ing_image_symbols imgs[1] = {{.status = ING_IMAGE_FOUND, .cache = fx.cache}};
	ing_symbolized s;
	assert_int_equal(ing_symbolicate(r, imgs, NULL, NULL, b->arena, &s), 0);
	parsed ps = parse_symbolized(&s);
	json_t *frames = json_object_get(json_array_get(ps.threads, 0), "frames");
	assert_int_equal(json_array_size(frames), 3);
	expect_chain(json_array_get(frames, 0), fx.inlined);
	/* Return addresses are looked up one byte back, echoed as sent. */
	expect_chain(json_array_get(frames, 1), fx.plain1);
	expect_chain(json_array_get(frames, 2), fx.plain2);
	char echoed[24];
	snprintf(echoed, sizeof echoed, "0x%" PRIx64, r1);
	assert_string_equal(jstr(json_array_get(frames, 1), "address"), echoed);
	assert_string_equal(jstr(json_array_get(frames, 0), "status"), "symbolicated");
	assert_string_equal(jstr(json_array_get(ps.images, 0), "status"), "found");
	/* A thread's stack is stored as a reference to the thread. */
	assert_string_equal(jstr(ps.stack, "source"), "main_thread");
	assert_int_equal(json_integer_value(json_object_get(ps.stack, "thread")), 0);
	assert_null(json_object_get(ps.stack, "frames"));

	/* Identities: the inline chain expanded innermost first. */
	sym_frame f0[SYM_MAX_FRAMES], f1[SYM_MAX_FRAMES], f2[SYM_MAX_FRAMES];
	size_t n0 = sym_cache_lookup(fx.cache, fx.inlined, f0, SYM_MAX_FRAMES);
	sym_cache_lookup(fx.cache, fx.plain1, f1, SYM_MAX_FRAMES);
	sym_cache_lookup(fx.cache, fx.plain2, f2, SYM_MAX_FRAMES);
	char ids[6][512];
	size_t nids = 0;
	for (size_t i = 0; i < n0; i++)
		snprintf(ids[nids++], sizeof ids[0], "libDemo.dylib!%s", f0[i].function);
	snprintf(ids[nids++], sizeof ids[0], "libDemo.dylib!%s", f1[0].function);
	snprintf(ids[nids++], sizeof ids[0], "libDemo.dylib!%s", f2[0].function);
	const char *p[6] = {ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]};
	char *k1 = key_of(p, 2), *k2 = key_of(p, nids < 4 ? nids : 4);
	assert_string_equal(s.grouping.key1, k1);
	assert_string_equal(s.grouping.key2, k2);
	assert_string_equal(s.grouping.identities[0], ids[0]);
	free(k1);
	free(k2);
	assert_int_equal(s.unsymbolized_frames, 0);
	parsed_free(&ps);
	ing_symbolized_clear(&s);
	ing_batch_free(b);
}

static void test_missing_and_unknown_images(void **state)
{
	(void)state;
	uint64_t pc = runtime(fx.plain1);
	uint64_t stray = 0x200000000ull;
	ing_batch *b = parse("{\"report_id\":\"r2\",\"images\":[{\"name\":\"libDemo.dylib\","
			     "\"uuid\":\"%s\",\"arch\":\"arm64\",\"load_address\":\"0x%llx\",\"size\":%llu}],"
			     "\"threads\":[{\"main\":true,\"frames\":[{\"address\":\"0x%" PRIx64
			     "\",\"symbol\":\"on_device_name\"},\"0x%" PRIx64 "\"]}]}",
			     fx.uuid, LOAD, (unsigned long long)fx.info.text_size, pc, stray);
	const ing_report *r = b->entries[0].report;
	ing_image_symbols imgs[1] = {{.status = ING_IMAGE_MISSING}};
	ing_symbolized s;
	assert_int_equal(ing_symbolicate(r, imgs, NULL, NULL, b->arena, &s), 0);
	parsed ps = parse_symbolized(&s);
	json_t *frames = json_object_get(json_array_get(ps.threads, 0), "frames");
	assert_string_equal(jstr(json_array_get(frames, 0), "status"), "missing_symbols");
	assert_string_equal(jstr(json_array_get(frames, 1), "status"), "unknown_image");
	assert_true(s.image_needed[0]);
	assert_int_equal(s.unsymbolized_frames, 1);
	assert_string_equal(jstr(json_array_get(ps.images, 0), "status"), "missing");
	/* Unsymbolized frames group by the device's hint, then by address. */
	char a[64], bb[64];
	snprintf(a, sizeof a, "libDemo.dylib!on_device_name");
	snprintf(bb, sizeof bb, "?+0x%" PRIx64, stray);
	const char *ids[2] = {a, bb};
	char *k1 = key_of(ids, 2);
	assert_string_equal(s.grouping.key1, k1);
	assert_string_equal(s.grouping.key2, k1); /* only two frames */
	free(k1);
	parsed_free(&ps);
	ing_symbolized_clear(&s);
	ing_batch_free(b);
}

static void test_arm64e_pointer_signatures(void **state)
{
	(void)state;
	uint64_t pc = runtime(fx.plain1);
	uint64_t signed_pc = pc | 0x5a2b000000000000ull;
	ing_batch *b = parse("{\"report_id\":\"r3\",\"images\":[{\"name\":\"libDemo.dylib\","
			     "\"uuid\":\"%s\",\"arch\":\"arm64e\",\"load_address\":\"0x%llx\",\"size\":%llu}],"
			     "\"threads\":[{\"main\":true,\"frames\":[\"0x%" PRIx64 "\"]}]}",
			     fx.uuid, LOAD, (unsigned long long)fx.info.text_size, signed_pc);
	ing_image_symbols imgs[1] = {{.status = ING_IMAGE_FOUND, .cache = fx.cache}};
	ing_symbolized s;
	assert_int_equal(ing_symbolicate(b->entries[0].report, imgs, NULL, NULL, b->arena, &s), 0);
	parsed ps = parse_symbolized(&s);
	json_t *f = json_array_get(json_object_get(json_array_get(ps.threads, 0), "frames"), 0);
	assert_string_equal(jstr(f, "status"), "symbolicated");
	expect_chain(f, fx.plain1);
	parsed_free(&ps);
	ing_symbolized_clear(&s);
	ing_batch_free(b);
}

/* The reports of one batch share a memo: frames already looked up for an
 * earlier report are not looked up again, unless the image sits at another
 * load address (symbol addresses are runtime ones). */
static void test_batch_shares_lookups(void **state)
{
	(void)state;
	uint64_t pc = runtime(fx.inlined), r1 = runtime(fx.plain1) + 1;
	const char *report = "{\"report_id\":\"m%d\",\"images\":[{\"name\":\"libDemo.dylib\","
			     "\"uuid\":\"%s\",\"load_address\":\"0x%llx\",\"size\":%llu}],"
			     "\"threads\":[{\"main\":true,\"frames\":[\"0x%" PRIx64 "\",\"0x%" PRIx64
			     "\"]}]}";
	char one[3][1024];
	const uint64_t shift = 0x10000000;
	for (int i = 0; i < 3; i++)
		snprintf(one[i], sizeof one[i], report, i, fx.uuid,
			 LOAD + (i == 2 ? shift : 0), (unsigned long long)fx.info.text_size,
			 pc + (i == 2 ? shift : 0), r1 + (i == 2 ? shift : 0));
	ing_batch *b = parse("{\"reports\":[%s,%s,%s]}", one[0], one[1], one[2]);
	ing_image_symbols imgs[1] = {{.status = ING_IMAGE_FOUND, .cache = fx.cache}};
	ing_memo *memo = ing_memo_new();
	assert_non_null(memo);
	size_t after[3];
	for (int i = 0; i < 3; i++) {
		ing_symbolized s;
		assert_int_equal(ing_symbolicate(b->entries[i].report, imgs, NULL, memo, b->arena, &s),
				 0);
		parsed ps = parse_symbolized(&s);
		after[i] = ing_memo_size(memo);
		json_t *frames = json_object_get(json_array_get(ps.threads, 0), "frames");
		if (i < 2) {
			expect_chain(json_array_get(frames, 0), fx.inlined);
			expect_chain(json_array_get(frames, 1), fx.plain1);
		} else {
			/* Same functions, symbol addresses at the other load address. */
			json_t *f = json_array_get(json_object_get(json_array_get(frames, 1), "frames"), 0);
			sym_frame want[SYM_MAX_FRAMES];
			sym_cache_lookup(fx.cache, fx.plain1, want, SYM_MAX_FRAMES);
			char sa[24];
			snprintf(sa, sizeof sa, "0x%" PRIx64, runtime(want[0].symbol_address) + shift);
			assert_string_equal(jstr(f, "symbol_address"), sa);
			assert_string_equal(jstr(f, "function"), want[0].function);
		}
		parsed_free(&ps);
		ing_symbolized_clear(&s);
	}
	assert_int_equal(after[0], 2);
	assert_int_equal(after[1], 2);
	assert_int_equal(after[2], 4);
	ing_memo_free(memo);
	ing_batch_free(b);
}

static void test_samples_choose_the_stack(void **state)
{
	(void)state;
	uint64_t a = runtime(fx.plain1), c = runtime(fx.plain2);
	/* The main thread is in plain1, but most samples are in plain2. */
	ing_batch *b = parse("{\"report_id\":\"r4\",\"images\":[{\"name\":\"libDemo.dylib\","
			     "\"uuid\":\"%s\",\"load_address\":\"0x%llx\",\"size\":%llu}],"
			     "\"threads\":[{\"main\":true,\"frames\":[\"0x%" PRIx64 "\"]}],"
			     "\"samples\":[{\"t_ms\":0,\"frames\":[\"0x%" PRIx64 "\"]},"
			     "{\"t_ms\":50,\"frames\":[\"0x%" PRIx64 "\"]},"
			     "{\"t_ms\":100,\"frames\":[\"0x%" PRIx64 "\"]}]}",
			     fx.uuid, LOAD, (unsigned long long)fx.info.text_size, a, c, a, c);
	ing_image_symbols imgs[1] = {{.status = ING_IMAGE_FOUND, .cache = fx.cache}};
	ing_symbolized s;
	assert_int_equal(ing_symbolicate(b->entries[0].report, imgs, NULL, NULL, b->arena, &s), 0);
	parsed ps = parse_symbolized(&s);
	/* Samples are c, a, c: c is the heaviest stack. */
	assert_string_equal(jstr(ps.stack, "source"), "samples");
	json_t *top = json_array_get(json_object_get(ps.stack, "frames"), 0);
	expect_chain(top, fx.plain2);
	parsed_free(&ps);
	ing_symbolized_clear(&s);
	ing_batch_free(b);
}

/* An Android stack of three method ids, the outer two lines lasting MS0
 * and MS2 ms (the middle one without a duration), symbolized without a
 * mapping. */
static ing_symbolized java_symbolized(ing_arena *arena, int64_t ms0, int64_t ms2)
{
	static ing_frame frames[3] = {{.address = 7}, {.address = 8}, {.address = 9}};
	ing_java_frame java[3] = {{.ms = ms0, .count = 2}, {.ms = -1}, {.ms = ms2, .count = 1}};
	ing_thread th = {.main = true, .stack = {frames, 3, java}};
	ing_report r = {.report_id = "j",
			.threads = &th,
			.nthreads = 1,
			.source = "matrix",
			.platform = ING_PLATFORM_ANDROID};
	ing_symbolized s;
	assert_int_equal(ing_symbolicate(&r, NULL, NULL, NULL, arena, &s), 0);
	return s;
}

static void test_java_durations_beside_the_frames(void **state)
{
	(void)state;
	ing_arena *arena = ing_arena_new(0);
	ing_symbolized a = java_symbolized(arena, 900, 1000);
	ing_symbolized b = java_symbolized(arena, 950, 1200);
	/* The thread (the stack's identity) is the same text whatever the
	 * durations; they are the representative stack's, beside it. */
	assert_int_equal(a.threads_len, b.threads_len);
	assert_memory_equal(a.threads, b.threads, a.threads_len);
	assert_null(strstr(a.threads, "\"ms\""));
	assert_null(strstr(a.threads, "\"count\""));
	parsed pa = parse_symbolized(&a), pb = parse_symbolized(&b);
	assert_int_equal(json_integer_value(json_object_get(pa.stack, "thread")), 0);
	json_t *want = json_pack("[I,n,I]", (json_int_t)900, (json_int_t)1000);
	assert_true(json_equal(json_object_get(pa.stack, "java_ms"), want));
	json_decref(want);
	want = json_pack("[i,n,i]", 2, 1);
	assert_true(json_equal(json_object_get(pa.stack, "java_count"), want));
	json_decref(want);
	want = json_pack("[I,n,I]", (json_int_t)950, (json_int_t)1200);
	assert_true(json_equal(json_object_get(pb.stack, "java_ms"), want));
	json_decref(want);
	parsed_free(&pa);
	parsed_free(&pb);
	ing_symbolized_clear(&a);
	ing_symbolized_clear(&b);
	ing_arena_free(arena);
}

static void test_native_round_trip(void **state)
{
	(void)state;
	ing_batch *b = parse("{\"report_id\":\"rt-1\",\"app_version\":\"8.0.1\",\"build\":\"1234\","
			     "\"os\":\"iOS\",\"os_version\":\"17.2\",\"device\":\"iPhone14,2\","
			     "\"user_id\":\"u-9\",\"kind\":\"hang\",\"duration_ms\":2400,"
			     "\"images\":[{\"name\":\"MyApp\",\"uuid\":\"%s\",\"arch\":\"arm64\","
			     "\"load_address\":\"0x100000000\",\"size\":4096}],"
			     "\"threads\":[{\"name\":\"main\",\"main\":true,\"frames\":"
			     "[{\"address\":\"0x100000010\",\"symbol\":\"hint\"},\"0x100000020\"]},"
			     "{\"frames\":[\"0x1\"]}],"
			     "\"samples\":[{\"t_ms\":50,\"frames\":[\"0x100000030\"]}]}",
			     fx.uuid);
	const ing_report *r = b->entries[0].report;
	size_t len = 0;
	cm_span stacks[3];
	char *text = ing_report_to_native(r, ING_NATIVE_WHOLE, &len, stacks);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	/* What storage keeps apart, exactly: the images array, each thread. */
	assert_memory_equal(text + stacks[0].at - 9, "\"images\":[{", 11);
	assert_int_equal(text[stacks[0].at + stacks[0].len - 1], ']');
	assert_memory_equal(text + stacks[1].at - 13, "],\"threads\":[{\"main\":true", 25);
	assert_int_equal(stacks[1].at + stacks[1].len + 1, stacks[2].at);
	assert_memory_equal(text + stacks[2].at, "{\"main\":false", 13);
	assert_memory_equal(text + stacks[2].at + stacks[2].len, "],\"samples\":", 12);
	ing_batch *b2 = NULL;
	ing_error err;
	assert_int_equal(ing_parse_native(text, len, NULL, NULL, &b2, &err), 0);
	const ing_report *r2 = b2->entries[0].report;
	assert_non_null(r2);
	assert_string_equal(r2->report_id, "rt-1");
	assert_string_equal(r2->app_version, "8.0.1");
	assert_string_equal(r2->user_id, "u-9");
	assert_int_equal(r2->kind, ING_KIND_HANG);
	assert_int_equal(r2->duration_ms, 2400);
	assert_int_equal(r2->nimages, 1);
	assert_memory_equal(r2->images[0].uuid, r->images[0].uuid, 16);
	assert_int_equal(r2->images[0].load_address, 0x100000000ull);
	assert_int_equal(r2->nthreads, 2);
	assert_int_equal(r2->threads[0].stack.nframes, 2);
	assert_string_equal(r2->threads[0].stack.frames[0].symbol_hint, "hint");
	assert_int_equal(r2->threads[0].stack.frames[1].address, 0x100000020ull);
	assert_true(r2->threads[0].main);
	assert_int_equal(r2->nsamples, 1);
	assert_int_equal(r2->samples[0].t_ms, 50);
	free(text);
	ing_batch_free(b2);
	ing_batch_free(b);
}

static void test_lru_shares_and_evicts(void **state)
{
	(void)state;
	ing_lru *lru = ing_lru_new(1);
	const sym_cache *c1, *c2, *c3;
	ing_lru_entry *e1, *e2, *e3;
	sym_error err;
	assert_int_equal(ing_lru_get(lru, fx.symcache_path, &c1, &e1, &err), SYM_OK);
	assert_int_equal(ing_lru_get(lru, fx.symcache_path, &c2, &e2, &err), SYM_OK);
	assert_ptr_equal(c1, c2);
	ing_lru_stats st;
	ing_lru_get_stats(lru, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	/* A second file over capacity evicts the first while it is in use:
	 * it must stay readable until released. */
	char other[] = "/tmp/stallscope-lru2-XXXXXX";
	int fd = mkstemp(other);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, fx.buf, fx.len), (ssize_t)fx.len);
	close(fd);
	assert_int_equal(ing_lru_get(lru, other, &c3, &e3, &err), SYM_OK);
	ing_lru_get_stats(lru, &st);
	assert_int_equal(st.evictions, 1);
	assert_int_equal(st.open, 1);
	sym_frame fr[SYM_MAX_FRAMES];
	assert_true(sym_cache_lookup(c1, fx.plain1, fr, SYM_MAX_FRAMES) > 0);
	ing_lru_release(lru, e1);
	ing_lru_release(lru, e2);
	ing_lru_release(lru, e3);
	/* A file that fails to open is not cached: fixing it is enough. */
	assert_int_not_equal(ing_lru_get(lru, "/nonexistent.symcache", &c1, &e1, &err), SYM_OK);
	ing_lru_get_stats(lru, &st);
	assert_int_equal(st.open, 1);
	unlink(other);
	ing_lru_free(lru);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_frames_and_keys),
		cmocka_unit_test(test_missing_and_unknown_images),
		cmocka_unit_test(test_arm64e_pointer_signatures),
		cmocka_unit_test(test_samples_choose_the_stack),
		cmocka_unit_test(test_batch_shares_lookups),
		cmocka_unit_test(test_java_durations_beside_the_frames),
		cmocka_unit_test(test_native_round_trip),
		cmocka_unit_test(test_lru_shares_and_evicts),
	};
	return cmocka_run_group_tests_name("symbolicate", tests, setup, teardown);
}
