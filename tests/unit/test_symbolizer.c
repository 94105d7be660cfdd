/*
 * test_symbolizer.c — the symbolizer's pure parts, and its behaviour on
 * hostile bytes: every truncation, random flips and lying fields of real
 * fixture files must give a clean error or a valid result, never a crash
 * (run under ASan/UBSan by `make asan`). Answers themselves are checked
 * against llvm-symbolizer in tests/oracle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "symbolizer/strtab.h"
#include "symbolizer/symcache_format.h"
#include "symbolizer/symbolizer.h"
#include "symbolizer/util.h"

/* ---- helpers ---------------------------------------------------------------- */

static const char *fixtures_dir(void)
{
	const char *d = getenv("STALLSCOPE_FIXTURES");
	return d ? d : "build/fixtures";
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open fixture %s (run `make fixtures`)", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static json_t *manifest(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/manifest.json", fixtures_dir());
	json_error_t jerr;
	json_t *m = json_load_file(path, 0, &jerr);
	if (!m)
		fail_msg("cannot read %s: %s (run `make fixtures`)", path, jerr.text);
	return m;
}

/* The path of the first manifest file with KIND and ROLE. */
static char *fixture_path(const char *kind, const char *role)
{
	json_t *m = manifest();
	json_t *files = json_object_get(m, "files"), *f;
	size_t i;
	char *out = NULL;
	json_array_foreach(files, i, f) {
		const char *k = json_string_value(json_object_get(f, "kind"));
		const char *r = json_string_value(json_object_get(f, "role"));
		if (k && !strcmp(k, kind) && (!role || (r && !strcmp(r, role)))) {
			size_t n = strlen(fixtures_dir()) + strlen(json_string_value(json_object_get(f, "path"))) + 2;
			out = malloc(n);
			snprintf(out, n, "%s/%s", fixtures_dir(), json_string_value(json_object_get(f, "path")));
			break;
		}
	}
	json_decref(m);
	if (!out)
		fail_msg("no %s fixture with role %s in the manifest", kind, role ? role : "*");
	return out;
}

/*
 * Parses DATA[0..len) (in a buffer of exactly that size, so ASan sees any
 * over-read), builds each slice's symcache, reopens it and looks up
 * addresses across the image. Returns the number of slices that made it
 * through; on failure the error message must be one non-empty line.
 */
static int exercise(const uint8_t *data, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, data, len);
	sym_object *obj = NULL;
	sym_error err = {""};
	int ok = 0;
	int rc = sym_object_from_memory(copy, len, &obj, &err);
	if (rc != SYM_OK) {
		assert_true(rc < 0);
		assert_true(err.msg[0] != '\0');
		assert_null(strchr(err.msg, '\n'));
		free(copy);
		return 0;
	}
	for (size_t i = 0; i < sym_object_slice_count(obj); i++) {
		uint8_t *buf = NULL;
		size_t blen = 0;
		err.msg[0] = '\0';
		rc = sym_cache_build(obj, i, &buf, &blen, NULL, &err);
		if (rc != SYM_OK) {
			assert_true(err.msg[0] != '\0');
			assert_null(strchr(err.msg, '\n'));
			continue;
		}
		sym_cache *cache = NULL;
		assert_int_equal(sym_cache_from_memory(buf, blen, &cache, &err), SYM_OK);
		sym_cache_info info;
		sym_cache_get_info(cache, &info);
		sym_frame frames[SYM_MAX_FRAMES];
		uint64_t span = info.text_size ? info.text_size : 0x10000;
		for (uint64_t a = 0; a < span; a += span / 97 + 1)
			(void)sym_cache_lookup(cache, info.base_address + a, frames, SYM_MAX_FRAMES);
		sym_cache_close(cache);
		free(buf);
		ok++;
	}
	sym_object_free(obj);
	free(copy);
	return ok;
}

/* ---- pure helpers ------------------------------------------------------------- */

static void test_arch_names_round_trip(void **state)
{
	(void)state;
	static const sym_arch all[] = {
		SYM_ARCH_X86_64, SYM_ARCH_X86_64H, SYM_ARCH_I386, SYM_ARCH_ARM64,
		SYM_ARCH_ARM64E, SYM_ARCH_ARM64_32, SYM_ARCH_ARMV7, SYM_ARCH_ARMV7S,
		SYM_ARCH_ARMV7K, SYM_ARCH_ARMV6, SYM_ARCH_ARM,
	};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		assert_int_equal(sym_arch_parse(sym_arch_name(all[i])), all[i]);
	assert_int_equal(sym_arch_parse("mips"), SYM_ARCH_UNKNOWN);
	assert_int_equal(sym_arch_parse(NULL), SYM_ARCH_UNKNOWN);
	assert_string_equal(sym_arch_name(SYM_ARCH_UNKNOWN), "unknown");
}

static void test_arch_from_cpu(void **state)
{
	(void)state;
	assert_int_equal(sym_arch_from_cpu(0x0100000c, 0), SYM_ARCH_ARM64);
	/* arm64e carries ABI capability bits in the subtype's top byte. */
	assert_int_equal(sym_arch_from_cpu(0x0100000c, 0x80000002), SYM_ARCH_ARM64E);
	assert_int_equal(sym_arch_from_cpu(12, 9), SYM_ARCH_ARMV7);
	assert_int_equal(sym_arch_from_cpu(12, 11), SYM_ARCH_ARMV7S);
	assert_int_equal(sym_arch_from_cpu(7, 3), SYM_ARCH_I386);
	assert_int_equal(sym_arch_from_cpu(0x01000007, 3), SYM_ARCH_X86_64);
	assert_int_equal(sym_arch_from_cpu(0x01000007, 8), SYM_ARCH_X86_64H);
	assert_int_equal(sym_arch_from_cpu(18, 0), SYM_ARCH_UNKNOWN);
	assert_true(sym_arch_is_64(SYM_ARCH_ARM64E));
	assert_false(sym_arch_is_64(SYM_ARCH_ARMV7));
}

static void test_uuid_text(void **state)
{
	(void)state;
	uint8_t u[16], v[16];
	for (int i = 0; i < 16; i++)
		u[i] = (uint8_t)(i * 17 + 3);
	char text[37];
	sym_uuid_format(u, text);
	assert_string_equal(text, "03142536-4758-697A-8B9C-ADBECFE0F102");
	assert_true(sym_uuid_parse(text, v));
	assert_memory_equal(u, v, 16);
	assert_true(sym_uuid_parse("031425364758697a8b9cadbecfe0f102", v));
	assert_memory_equal(u, v, 16);
	assert_false(sym_uuid_parse("03142536-4758-697A-8B9C-ADBECFE0F1", v));
	assert_false(sym_uuid_parse("03142536-4758-697A-8B9C-ADBECFE0F1021", v));
	assert_false(sym_uuid_parse("0314253G-4758-697A-8B9C-ADBECFE0F102", v));
	assert_false(sym_uuid_parse("", v));
	assert_false(sym_uuid_parse(NULL, v));
}

static void test_address_arithmetic(void **state)
{
	(void)state;
	/* arm64e: the PAC signature above bit 36 goes, the address stays. */
	assert_int_equal(sym_addr_strip_pac(0x4ad5800100004a2cULL, SYM_ARCH_ARM64E), 0x100004a2cULL);
	assert_int_equal(sym_addr_strip_pac(0x4ad5800100004a2cULL, SYM_ARCH_ARM64), 0x4ad5800100004a2cULL);
	assert_int_equal(sym_addr_caller_adjust(0x1000, 0), 0x1000);
	assert_int_equal(sym_addr_caller_adjust(0x1000, 1), 0xfff);
	assert_int_equal(sym_addr_caller_adjust(0x1000, 7), 0xfff);
	assert_int_equal(sym_addr_caller_adjust(0, 3), 0);
	uint64_t f = 0;
	assert_true(sym_addr_runtime_to_file(0x104000010, 0x104000000, 0x100, 0x100000000, &f));
	assert_int_equal(f, 0x100000010);
	assert_false(sym_addr_runtime_to_file(0x103ffffff, 0x104000000, 0x100, 0x100000000, &f));
	assert_false(sym_addr_runtime_to_file(0x104000100, 0x104000000, 0x100, 0x100000000, &f));
	assert_true(sym_addr_runtime_to_file(0x104000100, 0x104000000, 0, 0x100000000, &f));
	assert_false(sym_addr_runtime_to_file(UINT64_MAX, 0, 0, 2, &f));
}

static void test_demangle_like_llvm(void **state)
{
	(void)state;
	char *d = sym_demangle("_ZN3geo6detail10accumulateEPdi", SYM_DEMANGLE_SHORT);
	assert_non_null(d);
	assert_string_equal(d, "geo::detail::accumulate(double*, int)");
	free(d);
	/* C++ has one form: the full one is the same. */
	d = sym_demangle("_ZN3geo6detail10accumulateEPdi", SYM_DEMANGLE_FULL);
	assert_non_null(d);
	assert_string_equal(d, "geo::detail::accumulate(double*, int)");
	free(d);
	/* LLVM's spelling of lambdas, which libiberty writes {lambda()#1}. */
	d = sym_demangle("_ZZ3foovENKUlvE_clEv", SYM_DEMANGLE_SHORT);
	assert_non_null(d);
	assert_string_equal(d, "foo()::'lambda'()::operator()() const");
	free(d);
	/* Not mangled, or in a mangling we show as it is: kept as is. */
	const char *kept[] = {
		"f",	   "main", "-[SSWidget draw]", "_Zgarbage(", "_TFC4main3Foo3barfT_T_",
		"$s99main"};
	for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
		assert_null(sym_demangle(kept[i], SYM_DEMANGLE_SHORT));
		assert_null(sym_demangle(kept[i], SYM_DEMANGLE_FULL));
	}
}

/* Swift through the same door, in both forms (the demangler's own tests
 * are in test_swift_demangle.c). */
static void test_demangle_swift_both_forms(void **state)
{
	(void)state;
	char *d = sym_demangle("$s4main3FooV3baryyF", SYM_DEMANGLE_SHORT);
	assert_non_null(d);
	assert_string_equal(d, "Foo.bar()");
	free(d);
	d = sym_demangle("$s4main3FooV3baryyF", SYM_DEMANGLE_FULL);
	assert_non_null(d);
	assert_string_equal(d, "main.Foo.bar() -> ()");
	free(d);
}

static void test_strtab_interns_once(void **state)
{
	(void)state;
	sym_strtab t;
	assert_int_equal(sym_strtab_init(&t), 0);
	assert_int_equal(sym_strtab_intern(&t, "", 0), 0);
	uint32_t a = sym_strtab_intern(&t, "alpha", 5);
	uint32_t b = sym_strtab_intern(&t, "alphabet", 5); /* the first 5 bytes */
	assert_int_equal(a, b);
	char name[32];
	uint32_t ids[5000];
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(name, sizeof name, "sym_%d", i);
		ids[i] = sym_strtab_intern(&t, name, (size_t)n);
	}
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(name, sizeof name, "sym_%d", i);
		assert_int_equal(sym_strtab_intern(&t, name, (size_t)n), ids[i]);
		assert_string_equal(sym_strtab_get(&t, ids[i]), name);
	}
	sym_strtab_free(&t);
}

/* ---- real files ----------------------------------------------------------------- */

/* The path of manifest entry F. */
static void entry_path(json_t *f, char *path, size_t size)
{
	snprintf(path, size, "%s/%s", fixtures_dir(),
		 json_string_value(json_object_get(f, "path")));
}

static void test_manifest_slices_match(void **state)
{
	(void)state;
	json_t *m = manifest();
	json_t *files = json_object_get(m, "files"), *f;
	size_t i;
	int checked = 0;
	json_array_foreach(files, i, f) {
		const char *kind = json_string_value(json_object_get(f, "kind"));
		if (!strcmp(kind, "zip"))
			continue;
		char path[4096];
		entry_path(f, path, sizeof path);
		sym_object *obj = NULL;
		sym_error err;
		if (sym_object_open(path, &obj, &err) != SYM_OK)
			fail_msg("%s: %s", path, err.msg);
		json_t *slices = json_object_get(f, "slices");
		assert_int_equal(sym_object_slice_count(obj), json_array_size(slices));
		for (size_t k = 0; k < json_array_size(slices); k++) {
			json_t *want = json_array_get(slices, k);
			sym_slice_info info;
			sym_object_slice_info(obj, k, &info);
			char uuid[37];
			assert_true(info.has_uuid);
			sym_uuid_format(info.uuid, uuid);
			assert_string_equal(uuid, json_string_value(json_object_get(want, "uuid")));
			assert_string_equal(sym_arch_name(info.arch),
					    json_string_value(json_object_get(want, "arch")));
			assert_int_equal(info.has_dwarf, strstr(kind, "dwarf") != NULL);
			assert_true(info.text_vmsize > 0);
		}
		sym_object_free(obj);
		checked++;
	}
	json_decref(m);
	assert_true(checked >= 4);
}

static void test_fat_selection(void **state)
{
	(void)state;
	char *path = fixture_path("fat-dwarf", NULL);
	sym_object *obj = NULL;
	sym_error err;
	assert_int_equal(sym_object_open(path, &obj, &err), SYM_OK);
	size_t idx = 99;
	assert_int_equal(sym_object_select(obj, SYM_ARCH_UNKNOWN, &idx, &err), SYM_ERR_AMBIGUOUS);
	assert_non_null(strstr(err.msg, "--arch"));
	assert_int_equal(sym_object_select(obj, SYM_ARCH_ARM64, &idx, &err), SYM_OK);
	sym_slice_info info;
	sym_object_slice_info(obj, idx, &info);
	assert_int_equal(info.arch, SYM_ARCH_ARM64);
	assert_int_equal(sym_object_select(obj, SYM_ARCH_ARMV7, &idx, &err), SYM_ERR_NOT_FOUND);
	sym_object_free(obj);
	free(path);
}

static void test_not_macho(void **state)
{
	(void)state;
	static const uint8_t text[] = "#!/bin/sh\necho this is not a Mach-O\n";
	sym_object *obj = NULL;
	sym_error err;
	assert_int_equal(sym_object_from_memory(text, sizeof text, &obj, &err), SYM_ERR_FORMAT);
	assert_non_null(strstr(err.msg, "not a Mach-O"));
	static const uint8_t big_endian[] = {0xfe, 0xed, 0xfa, 0xcf, 0, 0, 0, 0};
	assert_int_equal(sym_object_from_memory(big_endian, sizeof big_endian, &obj, &err),
			 SYM_ERR_UNSUPPORTED);
	assert_int_equal(sym_object_open("/nonexistent/file", &obj, &err), SYM_ERR_IO);
}

/* Every prefix of a real dSYM and of a real dylib. */
static void test_truncated_at_every_length(void **state)
{
	(void)state;
	const char *kinds[] = {"dwarf", "symtab"};
	for (int k = 0; k < 2; k++) {
		char *path = fixture_path(kinds[k], "tiny");
		size_t len;
		uint8_t *data = read_file(path, &len);
		int complete = 0;
		for (size_t n = 0; n <= len; n++)
			complete += exercise(data, n) > 0 && n == len;
		assert_int_equal(complete, 1); /* the whole file works */
		free(data);
		free(path);
	}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* ROUNDS copies of the file at PATH, each with 1 to 8 random bytes changed. */
static void flip_rounds(const char *path, int rounds)
{
	size_t len;
	uint8_t *data = read_file(path, &len);
	uint8_t *mut = malloc(len);
	for (int round = 0; round < rounds; round++) {
		memcpy(mut, data, len);
		int flips = 1 + (int)(rng() % 8);
		for (int f = 0; f < flips; f++) {
			/* Headers and load commands are where lies hurt most. */
			size_t at = round % 2 ? rng() % (len < 4096 ? len : 4096) : rng() % len;
			mut[at] = (uint8_t)rng();
		}
		exercise(mut, len);
	}
	free(mut);
	free(data);
}

static void test_random_byte_flips(void **state)
{
	(void)state;
	const char *kinds[] = {"dwarf", "symtab", "fat-dwarf"};
	for (int k = 0; k < 3; k++) {
		char *path = fixture_path(kinds[k], k == 2 ? NULL : "tiny");
		flip_rounds(path, 400);
		free(path);
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put32be(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Finds the first load command of type CMD in a thin 64-bit image. */
static size_t find_cmd(const uint8_t *d, uint32_t cmd)
{
	uint32_t ncmds = sym_rd32(d + 16);
	size_t off = 32;
	for (uint32_t i = 0; i < ncmds; i++) {
		if (sym_rd32(d + off) == cmd)
			return off;
		off += sym_rd32(d + off + 4);
	}
	fail_msg("load command 0x%x not found", cmd);
	return 0;
}

static void expect_format_error(const uint8_t *d, size_t len, const char *what)
{
	uint8_t *copy = malloc(len);
	memcpy(copy, d, len);
	sym_object *obj = NULL;
	sym_error err;
	int rc = sym_object_from_memory(copy, len, &obj, &err);
	if (rc == SYM_OK) {
		sym_object_free(obj);
		free(copy);
		fail_msg("%s: accepted", what);
	}
	assert_int_equal(rc, SYM_ERR_FORMAT);
	free(copy);
}

static void test_lying_fields(void **state)
{
	(void)state;
	char *path = fixture_path("dwarf", "tiny");
	size_t len;
	uint8_t *data = read_file(path, &len);
	uint8_t *m = malloc(len);

	memcpy(m, data, len);
	put32(m + 20, 0xfffffff0); /* sizeofcmds */
	expect_format_error(m, len, "sizeofcmds past the end");

	memcpy(m, data, len);
	put32(m + 16, 100000); /* ncmds beyond sizeofcmds */
	expect_format_error(m, len, "ncmds beyond sizeofcmds");

	memcpy(m, data, len);
	put32(m + 32 + 4, 0); /* first command's cmdsize */
	expect_format_error(m, len, "cmdsize 0");

	size_t seg = find_cmd(data, 0x19);
	memcpy(m, data, len);
	put32(m + seg + 64, 0x7fffffff); /* nsects */
	expect_format_error(m, len, "nsects beyond the command");

	size_t symtab = find_cmd(data, 0x2);
	memcpy(m, data, len);
	put32(m + symtab + 12, 0x10000000); /* nsyms */
	expect_format_error(m, len, "nsyms past the end");
	memcpy(m, data, len);
	put32(m + symtab + 16, 0xffffff00); /* stroff */
	expect_format_error(m, len, "stroff past the end");

	/* A __DWARF section whose bytes lie past the end. */
	size_t off = 32;
	bool lied = false;
	memcpy(m, data, len);
	for (uint32_t i = 0; i < sym_rd32(data + 16) && !lied; i++) {
		if (sym_rd32(data + off) == 0x19 && !memcmp(data + off + 8, "__DWARF", 8)) {
			put32(m + off + 72 + 48, (uint32_t)len - 4); /* first section's offset */
			lied = true;
		}
		off += sym_rd32(data + off + 4);
	}
	assert_true(lied);
	expect_format_error(m, len, "debug section past the end");

	/* Fat headers that lie. */
	uint8_t fat[64];
	memset(fat, 0, sizeof fat);
	put32be(fat, 0xcafebabe);
	put32be(fat + 4, 100000);
	expect_format_error(fat, sizeof fat, "nfat_arch huge");
	put32be(fat + 4, 1);
	put32be(fat + 8 + 8, 0x7ffffff0); /* offset */
	put32be(fat + 8 + 12, 16);
	expect_format_error(fat, sizeof fat, "fat slice past the end");

	free(m);
	free(data);
	free(path);
}

static uint8_t *tiny_symcache(size_t *len)
{
	char *path = fixture_path("dwarf", "tiny");
	sym_object *obj = NULL;
	sym_error err;
	assert_int_equal(sym_object_open(path, &obj, &err), SYM_OK);
	uint8_t *buf = NULL;
	sym_cache_stats stats;
	assert_int_equal(sym_cache_build(obj, 0, &buf, len, &stats, &err), SYM_OK);
	assert_int_equal(stats.bytes, *len);
	assert_true(stats.functions > 0 && stats.ranges > 0);
	sym_object_free(obj);
	free(path);
	return buf;
}

static void test_symcache_rejects_damage(void **state)
{
	(void)state;
	size_t len;
	uint8_t *good = tiny_symcache(&len);
	sym_cache *c = NULL;
	sym_error err;
	sym_frame frames[SYM_MAX_FRAMES];
	/* Every truncation is refused: the header records the size. */
	for (size_t n = 0; n < len; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, good, n);
		assert_int_not_equal(sym_cache_from_memory(copy, n, &c, &err), SYM_OK);
		free(copy);
	}
	/* Random flips: refused, or consistent enough to look up safely. */
	uint8_t *mut = malloc(len);
	int accepted = 0;
	for (int round = 0; round < 3000; round++) {
		memcpy(mut, good, len);
		int flips = 1 + (int)(rng() % 4);
		for (int f = 0; f < flips; f++)
			mut[rng() % len] = (uint8_t)rng();
		if (sym_cache_from_memory(mut, len, &c, &err) == SYM_OK) {
			sym_cache_info info;
			sym_cache_get_info(c, &info);
			for (uint64_t a = 0; a < 0x20000; a += 3)
				(void)sym_cache_lookup(c, info.base_address + a, frames, SYM_MAX_FRAMES);
			sym_cache_close(c);
			accepted++;
		} else {
			assert_true(err.msg[0] != '\0');
		}
	}
	/* Flips in names and padding are harmless, so some survive. */
	assert_true(accepted > 0);
	free(mut);
	/* The version is checked: the previous one and the next one are
	 * refused alike (the server rebuilds an older file, never reads it). */
	uint32_t versions[] = {SYM_CACHE_VERSION - 1, SYM_CACHE_VERSION + 1};
	for (size_t i = 0; i < 2; i++) {
		memcpy(good + 8, &versions[i], 4);
		assert_int_equal(sym_cache_from_memory(good, len, &c, &err), SYM_ERR_UNSUPPORTED);
	}
	free(good);
}

/* GOOD with one field of its header or page directory changed by EDIT is
 * refused at open as malformed, with a message. */
typedef void (*symc_edit)(symc_header *h, symc_page *pages);

static void assert_refused(const uint8_t *good, size_t len, symc_edit edit)
{
	uint8_t *copy = malloc(len);
	memcpy(copy, good, len);
	symc_header *h = (symc_header *)copy;
	edit(h, (symc_page *)(copy + h->pages_off));
	sym_cache *c = NULL;
	sym_error err;
	err.msg[0] = '\0';
	assert_int_equal(sym_cache_from_memory(copy, len, &c, &err), SYM_ERR_FORMAT);
	assert_null(c);
	assert_true(err.msg[0] != '\0');
	free(copy);
}

static void shift_too_small(symc_header *h, symc_page *pg)
{
	(void)pg;
	h->page_shift = SYMC_MIN_PAGE_SHIFT - 1;
}

static void shift_too_large(symc_header *h, symc_page *pg)
{
	(void)pg;
	h->page_shift = SYMC_MAX_PAGE_SHIFT + 1;
}

static void pages_past_file(symc_header *h, symc_page *pg)
{
	(void)pg;
	h->npages = UINT32_MAX;
}

static void no_pages(symc_header *h, symc_page *pg)
{
	(void)pg;
	h->npages = 0;
}

static void range_past_table(symc_header *h, symc_page *pg)
{
	pg[1].range = h->nranges + 1;
}

static void ranges_backwards(symc_header *h, symc_page *pg)
{
	(void)h;
	pg[1].range = pg[2].range + 1;
}

static void last_page_short(symc_header *h, symc_page *pg)
{
	pg[h->npages].range = h->nranges - 1;
}

static void block_in_wrong_page(symc_header *h, symc_page *pg)
{
	/* The first page holding a block claims one block too few: that
	 * block's start says which page it is in. */
	uint32_t p = 1;
	while (p < h->npages && pg[p].block == 0)
		p++;
	pg[p].block--;
}

static void block_past_table(symc_header *h, symc_page *pg)
{
	pg[1].block = h->nblocks + 1;
}

/* Page 0's range starts: the first chunk of the ranges. */
static uint16_t *page0_starts(symc_header *h)
{
	return (uint16_t *)((uint8_t *)h + h->ranges_off);
}

static void first_range_not_at_zero(symc_header *h, symc_page *pg)
{
	(void)pg;
	page0_starts(h)[0] = 1;
}

static void range_start_outside_page(symc_header *h, symc_page *pg)
{
	page0_starts(h)[pg[1].range - 1] = (uint16_t)(1u << h->page_shift);
}

static void line_shift_too_large(symc_header *h, symc_page *pg)
{
	(void)pg;
	h->line_shift = SYMC_MAX_LINE_SHIFT + 1;
}

/* Lookups trust the page directory instead of searching the tables, so a
 * directory that does not describe them is refused at open: each case
 * would otherwise send a lookup out of a table or to the wrong entry. */
static void test_symcache_refuses_bad_directory(void **state)
{
	(void)state;
	size_t len;
	uint8_t *good = tiny_symcache(&len);
	const symc_header *h = (const symc_header *)good;
	/* The cases need pages with ranges and blocks on both sides. */
	assert_true(h->npages >= 2 && h->nblocks > 0);
	assert_true(h->page_shift >= SYMC_MIN_PAGE_SHIFT && h->page_shift <= SYMC_MAX_PAGE_SHIFT);
	const symc_page *pg = (const symc_page *)(good + h->pages_off);
	assert_int_equal(pg[h->npages].range, h->nranges);
	assert_int_equal(pg[h->npages].block, h->nblocks);
	symc_edit edits[] = {shift_too_small,	       shift_too_large,
			     pages_past_file,	       no_pages,
			     range_past_table,	       ranges_backwards,
			     last_page_short,	       block_in_wrong_page,
			     block_past_table,	       first_range_not_at_zero,
			     range_start_outside_page, line_shift_too_large};
	for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++)
		assert_refused(good, len, edits[i]);
	free(good);
}

static void test_symcache_file_round_trip(void **state)
{
	(void)state;
	char *path = fixture_path("dwarf", "tiny");
	sym_object *obj = NULL;
	sym_error err;
	assert_int_equal(sym_object_open(path, &obj, &err), SYM_OK);
	char out[] = "/tmp/stallscope-test-XXXXXX";
	int fd = mkstemp(out);
	assert_true(fd >= 0);
	close(fd);
	/* The asked mode, not the umask's: 0640 is neither 0600 nor 0644. */
	mode_t old_umask = umask(022);
	assert_int_equal(sym_cache_write(obj, 0, out, 0640, NULL, &err), SYM_OK);
	umask(old_umask);
	struct stat st;
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	uint8_t *mem = NULL;
	size_t len = 0;
	assert_int_equal(sym_cache_build(obj, 0, &mem, &len, NULL, &err), SYM_OK);
	sym_cache *a = NULL, *b = NULL;
	assert_int_equal(sym_cache_open(out, &a, &err), SYM_OK);
	assert_int_equal(sym_cache_from_memory(mem, len, &b, &err), SYM_OK);
	sym_cache_info ia, ib;
	sym_cache_get_info(a, &ia);
	sym_cache_get_info(b, &ib);
	assert_int_equal(ia.bytes, len);
	assert_memory_equal(ia.uuid, ib.uuid, 16);
	sym_slice_info si;
	sym_object_slice_info(obj, 0, &si);
	assert_memory_equal(ia.uuid, si.uuid, 16);
	assert_int_equal(ia.base_address, si.text_vmaddr);
	assert_true(ia.has_dwarf);
	int symbolized = 0, inlined = 0;
	for (uint64_t off = 0; off < si.text_vmsize; off++) {
		sym_frame fa[SYM_MAX_FRAMES], fb[SYM_MAX_FRAMES];
		size_t na = sym_cache_lookup(a, si.text_vmaddr + off, fa, SYM_MAX_FRAMES);
		size_t nb = sym_cache_lookup(b, si.text_vmaddr + off, fb, SYM_MAX_FRAMES);
		assert_int_equal(na, nb);
		for (size_t i = 0; i < na; i++) {
			assert_string_equal(fa[i].function, fb[i].function);
			assert_int_equal(fa[i].line, fb[i].line);
			assert_int_equal(fa[i].inlined, i + 1 < na);
		}
		symbolized += na > 0;
		if (na >= 2) {
			/* Room for one frame: the innermost only. */
			assert_int_equal(sym_cache_lookup(a, si.text_vmaddr + off, fb, 1), 1);
			assert_string_equal(fb[0].function, fa[0].function);
			inlined++;
		}
	}
	assert_true(symbolized > 0);
	assert_true(inlined > 0);
	sym_cache_close(a);
	sym_cache_close(b);
	free(mem);
	unlink(out);
	sym_object_free(obj);
	free(path);
}

/* The symcache of slice 0 of the file at PATH, built on NTHREADS threads. */
static uint8_t *build_with_threads(const char *path, unsigned nthreads, size_t *len)
{
	sym_object *obj = NULL;
	sym_error err = {""};
	assert_int_equal(sym_object_open(path, &obj, &err), SYM_OK);
	sym_cache_set_threads(nthreads);
	uint8_t *buf = NULL;
	int rc = sym_cache_build(obj, 0, &buf, len, NULL, &err);
	sym_cache_set_threads(0);
	if (rc != SYM_OK)
		fail_msg("building %s on %u threads: %s", path, nthreads, err.msg);
	sym_object_free(obj);
	return buf;
}

/* Damaged DWARF converted on four threads: a clean error or a valid
 * symcache, as on one (ASan and LeakSanitizer watch the workers). */
static void test_threads_on_byte_flips(void **state)
{
	(void)state;
	char *path = fixture_path("dwarf", "app");
	sym_cache_set_threads(4);
	flip_rounds(path, 100);
	sym_cache_set_threads(0);
	free(path);
}

/* The symcache of PATH on 2, 3 and 4 threads has the bytes of one's. */
static void assert_same_bytes_any_threads(const char *path)
{
	size_t len1 = 0;
	uint8_t *one = build_with_threads(path, 1, &len1);
	for (unsigned t = 2; t <= 4; t++) {
		size_t lent = 0;
		uint8_t *many = build_with_threads(path, t, &lent);
		assert_int_equal(lent, len1);
		if (memcmp(one, many, len1))
			fail_msg("%s: %u threads wrote other bytes than one", path, t);
		free(many);
	}
	free(one);
}

/* Every fixture dSYM (C, C++ and Objective-C units: four or five each)
 * gives the same bytes whatever the number of threads its units are
 * converted on: one (the serial walk), two, three or four. */
static void test_symcache_same_bytes_any_threads(void **state)
{
	(void)state;
	json_t *m = manifest();
	json_t *f;
	size_t i;
	int compared = 0;
	json_array_foreach(json_object_get(m, "files"), i, f)
	{
		char path[4096];
		entry_path(f, path, sizeof path);
		if (!strcmp(json_string_value(json_object_get(f, "kind")), "dwarf")) {
			assert_same_bytes_any_threads(path);
			compared++;
		}
	}
	json_decref(m);
	assert_true(compared >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arch_names_round_trip),
		cmocka_unit_test(test_arch_from_cpu),
		cmocka_unit_test(test_uuid_text),
		cmocka_unit_test(test_address_arithmetic),
		cmocka_unit_test(test_demangle_like_llvm),
		cmocka_unit_test(test_demangle_swift_both_forms),
		cmocka_unit_test(test_strtab_interns_once),
		cmocka_unit_test(test_manifest_slices_match),
		cmocka_unit_test(test_fat_selection),
		cmocka_unit_test(test_not_macho),
		cmocka_unit_test(test_truncated_at_every_length),
		cmocka_unit_test(test_random_byte_flips),
		cmocka_unit_test(test_lying_fields),
		cmocka_unit_test(test_symcache_rejects_damage),
		cmocka_unit_test(test_symcache_refuses_bad_directory),
		cmocka_unit_test(test_symcache_file_round_trip),
		cmocka_unit_test(test_symcache_same_bytes_any_threads),
		cmocka_unit_test(test_threads_on_byte_flips),
	};
	return cmocka_run_group_tests_name("symbolizer", tests, NULL, NULL);
}
