/* symbolizer/method_map: methodMapping.txt parsing, the table's layout and
 * its validation at open, descriptor rendering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "symbolizer/method_map.h"
#include "symbolizer/method_map_format.h"

/* A table built from TEXT; the test frees *BUF. */
static sym_methods *build(const char *text, uint8_t **buf, sym_methods_stats *stats)
{
	size_t len = 0;
	sym_error err = {{0}};
	int rc = sym_methods_build(text, strlen(text), buf, &len, stats, &err);
	if (rc)
		fail_msg("build: %s", err.msg);
	sym_methods *m = NULL;
	rc = sym_methods_from_memory(*buf, len, &m, &err);
	if (rc)
		fail_msg("from_memory: %s", err.msg);
	return m;
}

static void assert_stats(const sym_methods_stats *st, size_t lines, size_t methods, size_t skipped,
			 uint32_t max_id)
{
	assert_int_equal(st->lines, lines);
	assert_int_equal(st->methods, methods);
	assert_int_equal(st->skipped, skipped);
	assert_int_equal(st->max_id, max_id);
}

/* ID's readable (or, with LINKAGE, identity) name; "" when absent. */
static const char *name_of(const sym_methods *m, uint32_t id, bool linkage)
{
	static char out[512];
	sym_method meth;
	if (!sym_methods_lookup(m, id, &meth))
		return "";
	if (linkage)
		sym_method_linkage(&meth, out, sizeof out);
	else
		sym_method_readable(&meth, out, sizeof out);
	return out;
}

static void test_lines(void **state)
{
	(void)state;
	const char *text =
		"# written by hand\n"
		"1,4,sample.tencent.matrix.battery.stats.BatteryStatsSubProcActivity onCreate "
		"(Landroid.os.Bundle;)V\n"
		"2,1,com.example.sample.MainActivity$2 onClick (Landroid.view.View;)V\n"
		"\n"
		"3,17,sample.KotlinTest test with spaces ()V\n"
		"   \n"
		"4,257,sample.Native nativeInit\n"
		"5,2,sample.Outer$Inner$1 access$000 (Lsample.Outer;)I\r\n"
		"1048574,1,android.os.Handler dispatchMessage (Landroid.os.Message;)V\n";
	uint8_t *buf = NULL;
	sym_methods_stats st;
	sym_methods *m = build(text, &buf, &st);
	assert_stats(&st, 9, 6, 0, 1048574);
	assert_int_equal(sym_methods_count(m), 6);

	sym_method meth;
	assert_true(sym_methods_lookup(m, 2, &meth));
	assert_int_equal(meth.id, 2);
	assert_int_equal(meth.access, 1);
	assert_int_equal(meth.class_len, strlen("com.example.sample.MainActivity$2"));
	assert_memory_equal(meth.class_name, "com.example.sample.MainActivity$2", meth.class_len);
	assert_memory_equal(meth.name, "onClick", meth.name_len);
	assert_memory_equal(meth.descriptor, "(Landroid.view.View;)V", meth.descriptor_len);
	assert_string_equal(name_of(m, 2, false),
			    "com.example.sample.MainActivity$2.onClick(android.view.View)");
	assert_string_equal(name_of(m, 2, true),
			    "com.example.sample.MainActivity$2.onClick(Landroid.view.View;)V");
	assert_string_equal(name_of(m, 1, false),
			    "sample.tencent.matrix.battery.stats.BatteryStatsSubProcActivity"
			    ".onCreate(android.os.Bundle)");
	/* A Kotlin back-ticked name keeps its spaces. */
	assert_true(sym_methods_lookup(m, 3, &meth));
	assert_int_equal(meth.access, 17);
	assert_memory_equal(meth.name, "test with spaces", meth.name_len);
	assert_int_equal(meth.name_len, strlen("test with spaces"));
	assert_string_equal(name_of(m, 3, false), "sample.KotlinTest.test with spaces()");
	/* A native method has no descriptor. */
	assert_true(sym_methods_lookup(m, 4, &meth));
	assert_int_equal(meth.access, 257);
	assert_int_equal(meth.descriptor_len, 0);
	assert_string_equal(name_of(m, 4, false), "sample.Native.nativeInit");
	assert_string_equal(name_of(m, 4, true), "sample.Native.nativeInit");
	/* CRLF: the CR is not part of the descriptor. */
	assert_string_equal(name_of(m, 5, true),
			    "sample.Outer$Inner$1.access$000(Lsample.Outer;)I");
	assert_string_equal(name_of(m, 1048574, false),
			    "android.os.Handler.dispatchMessage(android.os.Message)");
	assert_false(sym_methods_lookup(m, 0, &meth));
	assert_false(sym_methods_lookup(m, 6, &meth));
	assert_false(sym_methods_lookup(m, 1048573, &meth));
	assert_false(sym_methods_lookup(m, UINT32_MAX, &meth));
	sym_methods_close(m);
	free(buf);
}

static void test_dispatch_builtin(void **state)
{
	(void)state;
	uint8_t *buf = NULL;
	sym_methods_stats st;
	sym_methods *m = build("7,1,a.B c ()V\n", &buf, &st);
	assert_int_equal(st.max_id, 7);
	assert_int_equal(sym_methods_count(m), 1);
	sym_method meth;
	assert_true(sym_methods_lookup(m, SYM_METHODS_DISPATCH_ID, &meth));
	assert_int_equal(meth.id, 1048574);
	assert_int_equal(meth.access, 1);
	assert_string_equal(name_of(m, 1048574, false),
			    "android.os.Handler.dispatchMessage(android.os.Message)");
	assert_string_equal(name_of(m, 1048574, true),
			    "android.os.Handler.dispatchMessage(Landroid.os.Message;)V");
	assert_false(sym_methods_lookup(m, 1048575, &meth));
	sym_methods_close(m);
	free(buf);

	/* The file's own line for the id wins over the built-in one. */
	m = build("1048574,9,x.Y z (I)V\n", &buf, &st);
	assert_string_equal(name_of(m, 1048574, true), "x.Y.z(I)V");
	sym_methods_close(m);
	free(buf);
}

static void test_skipped_lines(void **state)
{
	(void)state;
	const char *text = "5,1,a.First m ()V\n"
			   "3,1,a.Second m ()V\n"
			   "5,1,a.Third m ()V\n"	/* duplicate: the first wins */
			   "1048575,1,a.TooBig m ()V\n" /* past Matrix's ids */
			   "4294967296,1,a.Overflow m ()V\n"
			   "x,1,a.NotANumber m ()V\n"
			   "6,,a.NoAccess m ()V\n"
			   "-6,1,a.Negative m ()V\n"
			   "7,1,a.NoSpace\n"
			   "8,1,a.EmptyName \n"
			   "9,1, m ()V\n" /* empty class */
			   "10\n"
			   "11,1,a.Bad\xff m ()V\n" /* not UTF-8 */
			   "12,1,a.Ctl\x01 m ()V\n" /* a control byte */
			   "13,1,a.Utf\xc3\xa9 m\xe2\x82\xac ()V\n"
			   "2,1,a.Last m ()V\n";
	uint8_t *buf = NULL;
	sym_methods_stats st;
	sym_methods *m = build(text, &buf, &st);
	assert_stats(&st, 16, 4, 12, 13);
	assert_string_equal(name_of(m, 5, false), "a.First.m()");
	assert_string_equal(name_of(m, 3, false), "a.Second.m()");
	assert_string_equal(name_of(m, 2, false), "a.Last.m()");
	assert_string_equal(name_of(m, 13, false), "a.Utf\xc3\xa9.m\xe2\x82\xac()");
	for (uint32_t id = 6; id <= 12; id++)
		assert_string_equal(name_of(m, id, false), "");
	sym_methods_close(m);
	free(buf);
}

static void test_last_line(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *name; /* of id 9; "" = skipped */
	} cases[] = {
		{"1,1,a.B c ()V\n9,1,a.B last (I)V", "a.B.last(int)"},
		{"1,1,a.B c ()V\r\n9,1,a.B last (I)V\r", "a.B.last(int)"},
		{"1,1,a.B c ()V\n9,1,a.B last (Landroid.os.Mess", ""},
		{"1,1,a.B c ()V\n9,1,a.B last (Landroid.os.Message;)", ""},
		{"1,1,a.B c ()V\n9,1,a.B dispatchMes", ""}, /* no descriptor: cannot tell */
		{"1,1,a.B c ()V\n9,1,a.B nat\n", "a.B.nat"},
		{"1,1,a.B c ()V\n9,", ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t *buf = NULL;
		sym_methods_stats st;
		sym_methods *m = build(cases[i].text, &buf, &st);
		assert_int_equal(st.lines, 2);
		assert_int_equal(st.skipped, cases[i].name[0] ? 0 : 1);
		assert_string_equal(name_of(m, 9, false), cases[i].name);
		assert_string_equal(name_of(m, 1, false), "a.B.c()");
		sym_methods_close(m);
		free(buf);
	}
}

static void test_no_valid_line(void **state)
{
	(void)state;
	static uint8_t untouched[1];
	uint8_t *buf = untouched;
	size_t len = 1;
	sym_methods_stats st;
	sym_error err = {{0}};
	const char *text = "# nothing\n\n1048575,1,a.B c ()V\nbroken";
	assert_int_equal(sym_methods_build(text, strlen(text), &buf, &len, &st, &err),
			 SYM_ERR_FORMAT);
	assert_null(buf);
	assert_int_equal(len, 0);
	assert_int_equal(st.lines, 4);
	assert_int_equal(st.skipped, 2);
	assert_non_null(strstr(err.msg, "no valid line"));
	assert_int_equal(sym_methods_build("", 0, &buf, &len, &st, &err), SYM_ERR_FORMAT);
	assert_int_equal(st.lines, 0);
}

/* A line longer than the limit is skipped whole, whether it arrives in one
 * piece or across the converter's chunks. */
static void test_long_line(void **state)
{
	(void)state;
	size_t n = SYM_METHODS_MAX_LINE + 10;
	char *text = malloc(n + 64);
	assert_non_null(text);
	size_t at = (size_t)sprintf(text, "1,1,a.B ");
	memset(text + at, 'x', n - at);
	at = n;
	at += (size_t)sprintf(text + at, " ()V\n2,1,a.C d ()V\n");
	uint8_t *buf = NULL;
	sym_methods_stats st;
	sym_methods *m = build(text, &buf, &st);
	assert_int_equal(st.lines, 2);
	assert_int_equal(st.skipped, 1);
	assert_string_equal(name_of(m, 2, false), "a.C.d()");
	assert_string_equal(name_of(m, 1, false), "");
	sym_methods_close(m);
	free(buf);
	free(text);
}

static char tmp_dir[] = "/tmp/test_method_map-XXXXXX";
static const char *tmp_path(const char *name);
static void write_file(const char *path, const char *text, size_t len, bool gzip);

/* The same through a file: the long line spans several 256 KiB chunks of
 * the converter, and so does the good one after it. */
static void test_long_line_file(void **state)
{
	(void)state;
	size_t n = 600 << 10;
	char *text = malloc(n + 256);
	assert_non_null(text);
	memset(text, 'x', n);
	memcpy(text, "1,1,a.B ", 8);
	size_t at = n + (size_t)sprintf(text + n, " ()V\n");
	for (size_t i = 0; i < 5; i++)
		at += (size_t)sprintf(text + at, "%zu,1,a.C d ()V\n", i + 2);
	write_file(tmp_path("long.txt"), text, at, false);
	sym_methods_stats st;
	sym_error err = {{0}};
	assert_int_equal(sym_methods_convert(tmp_path("long.txt"), tmp_path("long.tbl"), &st, &err),
			 SYM_OK);
	assert_int_equal(st.lines, 6);
	assert_int_equal(st.skipped, 1);
	assert_int_equal(st.methods, 5);
	sym_methods *m = NULL;
	assert_int_equal(sym_methods_open(tmp_path("long.tbl"), &m, &err), SYM_OK);
	assert_string_equal(name_of(m, 2, false), "a.C.d()");
	assert_string_equal(name_of(m, 1, false), "");
	sym_methods_close(m);
	unlink(tmp_path("long.txt"));
	unlink(tmp_path("long.tbl"));
	free(text);
}

static int setup_dir(void **state)
{
	(void)state;
	return mkdtemp(tmp_dir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	(void)state;
	DIR *d = opendir(tmp_dir);
	struct dirent *e;
	char path[512];
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof path, "%s/%s", tmp_dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	return rmdir(tmp_dir);
}

static const char *tmp_path(const char *name)
{
	static char paths[4][512];
	static int next;
	char *p = paths[next++ % 4];
	snprintf(p, 512, "%s/%s", tmp_dir, name);
	return p;
}

static size_t files_in_dir(void)
{
	DIR *d = opendir(tmp_dir);
	size_t n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* LINES methods, ids LINES down to 1: "i,1,pkg.Class<i/7> method<i%1000>
 * (ILjava.lang.String;)V", so classes and names repeat. */
static char *mapping_text(size_t lines, size_t *len)
{
	char *text = malloc(lines * 64 + 1);
	assert_non_null(text);
	size_t at = 0;
	for (size_t i = lines; i >= 1; i--) /* backwards: order does not matter */
		at += (size_t)sprintf(text + at,
				      "%zu,1,pkg.Class%zu method%zu (ILjava.lang.String;)V\n", i,
				      i / 7, i % 1000);
	*len = at;
	return text;
}

static void write_file(const char *path, const char *text, size_t len, bool gzip)
{
	if (gzip) {
		gzFile gz = gzopen(path, "wb");
		assert_non_null(gz);
		assert_int_equal(gzwrite(gz, text, (unsigned)len), (int)len);
		assert_int_equal(gzclose(gz), Z_OK);
	} else {
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(text, 1, len, f), len);
		assert_int_equal(fclose(f), 0);
	}
}

static void check_big_table(const char *path, size_t lines)
{
	sym_methods *m = NULL;
	sym_error err = {{0}};
	assert_int_equal(sym_methods_open(path, &m, &err), SYM_OK);
	assert_int_equal(sym_methods_count(m), lines);
	char want[128];
	for (size_t i = 1; i <= lines; i++) {
		snprintf(want, sizeof want, "pkg.Class%zu.method%zu(int, java.lang.String)", i / 7,
			 i % 1000);
		assert_string_equal(name_of(m, (uint32_t)i, false), want);
	}
	sym_methods_close(m);
}

/* Plain and gzip input through files, lines crossing the 256 KiB chunks;
 * the content hash is the decompressed text's. */
static void test_convert_files(void **state)
{
	(void)state;
	size_t lines = 40000, len = 0;
	char *text = mapping_text(lines, &len);
	assert_true(len > 3 * (256 << 10));
	write_file(tmp_path("plain.txt"), text, len, false);
	write_file(tmp_path("mapping.txt.gz"), text, len, true);
	sym_methods_stats plain, gz;
	sym_error err = {{0}};
	assert_int_equal(
		sym_methods_convert(tmp_path("plain.txt"), tmp_path("plain.tbl"), &plain, &err),
		SYM_OK);
	assert_int_equal(
		sym_methods_convert(tmp_path("mapping.txt.gz"), tmp_path("gz.tbl"), &gz, &err),
		SYM_OK);
	assert_int_equal(plain.lines, lines);
	assert_int_equal(plain.methods, lines);
	assert_int_equal(plain.max_id, lines);
	assert_int_equal(gz.methods, lines);
	XXH128_canonical_t want;
	XXH128_canonicalFromHash(&want, XXH3_128bits(text, len));
	assert_memory_equal(plain.content_hash, want.digest, 16);
	assert_memory_equal(gz.content_hash, want.digest, 16);
	check_big_table(tmp_path("plain.tbl"), lines);
	check_big_table(tmp_path("gz.tbl"), lines);
	/* The same text built in memory is the same table, byte for byte. */
	uint8_t *buf = NULL;
	size_t blen = 0;
	assert_int_equal(sym_methods_build(text, len, &buf, &blen, NULL, &err), SYM_OK);
	FILE *f = fopen(tmp_path("gz.tbl"), "rb");
	assert_non_null(f);
	uint8_t *disk = malloc(blen + 1);
	assert_int_equal(fread(disk, 1, blen + 1, f), blen);
	fclose(f);
	assert_memory_equal(disk, buf, blen);
	free(disk);
	free(buf);
	/* No temporary left behind: 2 inputs, 2 tables. */
	assert_int_equal(files_in_dir(), 4);
	free(text);
}

static void test_convert_errors(void **state)
{
	(void)state;
	size_t len = 0;
	char *text = mapping_text(20000, &len);
	/* A gzip stream cut short is an incomplete mapping: refused. */
	write_file(tmp_path("cut.gz"), text, len, true);
	FILE *f = fopen(tmp_path("cut.gz"), "r+b");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fclose(f);
	assert_int_equal(truncate(tmp_path("cut.gz"), size / 2), 0);
	sym_methods_stats st;
	sym_error err = {{0}};
	assert_int_equal(sym_methods_convert(tmp_path("cut.gz"), tmp_path("cut.tbl"), &st, &err),
			 SYM_ERR_FORMAT);
	assert_true(err.msg[0]);
	assert_int_equal(access(tmp_path("cut.tbl"), F_OK), -1);
	assert_int_equal(sym_methods_convert(tmp_path("absent.txt"), tmp_path("x.tbl"), &st, &err),
			 SYM_ERR_IO);
	write_file(tmp_path("empty.txt"), "# nothing\n", 10, false);
	assert_int_equal(sym_methods_convert(tmp_path("empty.txt"), tmp_path("x.tbl"), &st, &err),
			 SYM_ERR_FORMAT);
	assert_int_equal(
		sym_methods_convert(tmp_path("empty.txt"), "/nonexistent-dir/x.tbl", &st, &err),
		SYM_ERR_FORMAT);
	write_file(tmp_path("one.txt"), "1,1,a.B c ()V\n", 14, false);
	assert_int_equal(
		sym_methods_convert(tmp_path("one.txt"), "/nonexistent-dir/x.tbl", &st, &err),
		SYM_ERR_IO);
	assert_int_equal(st.methods, 1);
	assert_int_equal(access(tmp_path("x.tbl"), F_OK), -1);
	free(text);
}

static void test_descriptors(void **state)
{
	(void)state;
	static const struct {
		const char *desc, *readable;
	} cases[] = {
		{"(Landroid.os.Bundle;I[J)V", "(android.os.Bundle, int, long[])"},
		{"(BCDFIJSZ)V", "(byte, char, double, float, int, long, short, boolean)"},
		{"([[Ljava.lang.String;)[[I", "(java.lang.String[][])"},
		{"([[[Z[B)Ljava.lang.Object;", "(boolean[][][], byte[])"},
		{"()V", "()"},
		{"(Ljava/lang/Object;)V", "(java.lang.Object)"}, /* slashes as in a dex */
		{"(Lsample.Outer$Inner;)V", "(sample.Outer$Inner)"},
		/* Malformed: shown as given. */
		{"(Landroid.os.Bundle", "(Landroid.os.Bundle"},
		{"(V)V", "(V)V"},
		{"(I)", "(I)"},
		{"(I)VV", "(I)VV"},
		{"(I)[V", "(I)[V"},
		{"(I", "(I"},
		{"(L;)V", "(L;)V"},
		{"([)V", "([)V"},
		{"(Q)V", "(Q)V"},
		{"(", "("},
	};
	char out[256];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		sym_method m = {.class_name = "a.B",
				.class_len = 3,
				.name = "m",
				.name_len = 1,
				.descriptor = cases[i].desc,
				.descriptor_len = strlen(cases[i].desc)};
		char want[256];
		snprintf(want, sizeof want, "a.B.m%s", cases[i].readable);
		assert_int_equal(sym_method_readable(&m, out, sizeof out), strlen(want));
		assert_string_equal(out, want);
		assert_int_equal(symm_descriptor_valid(m.descriptor, m.descriptor_len),
				 strcmp(cases[i].desc, cases[i].readable) != 0);
	}
	/* 255 array dimensions are the JVM's limit; 256 are malformed. */
	char deep[300] = "(";
	memset(deep + 1, '[', 256);
	strcpy(deep + 257, "I)V");
	assert_false(symm_descriptor_valid(deep, strlen(deep)));
	assert_false(symm_descriptor_valid("", 0));
	deep[1] = '(';
	assert_true(symm_descriptor_valid(deep + 1, strlen(deep + 1)));
}

/* snprintf's convention: the whole length back, a cut output terminated. */
static void test_render_truncation(void **state)
{
	(void)state;
	sym_method m = {.class_name = "pkg.Cls",
			.class_len = 7,
			.name = "run",
			.name_len = 3,
			.descriptor = "(Landroid.os.Bundle;I)V",
			.descriptor_len = 23};
	const char *full = "pkg.Cls.run(android.os.Bundle, int)";
	const char *ident = "pkg.Cls.run(Landroid.os.Bundle;I)V";
	char out[64];
	for (size_t cap = 0; cap <= strlen(full) + 1; cap++) {
		memset(out, '#', sizeof out);
		assert_int_equal(sym_method_readable(&m, cap ? out : NULL, cap), strlen(full));
		if (cap) {
			assert_int_equal(strlen(out), cap - 1);
			assert_memory_equal(out, full, cap - 1);
		}
		assert_int_equal(out[cap], '#');
		memset(out, '#', sizeof out);
		assert_int_equal(sym_method_linkage(&m, cap ? out : NULL, cap), strlen(ident));
		if (cap)
			assert_memory_equal(out, ident, cap - 1);
	}
}

/* Rewrites the checksum so a forged table reaches the bounds checks. */
static void reseal(uint8_t *buf, size_t len)
{
	symm_header h;
	memcpy(&h, buf, sizeof h);
	h.checksum = 0;
	memcpy(buf, &h, sizeof h);
	h.checksum = XXH3_64bits(buf, len);
	memcpy(buf, &h, sizeof h);
}

/* Every string a table hands out lies inside its bytes. */
static void lookups_in_bounds(const sym_methods *m, const uint8_t *buf, size_t len)
{
	for (uint32_t id = 0; id < 64; id++) {
		sym_method meth;
		if (!sym_methods_lookup(m, id, &meth))
			continue;
		const char *lo = (const char *)buf, *hi = lo + len;
		assert_true(meth.class_name >= lo && meth.class_name + meth.class_len <= hi);
		assert_true(meth.name >= lo && meth.name + meth.name_len <= hi);
		assert_true(meth.descriptor >= lo && meth.descriptor + meth.descriptor_len <= hi);
	}
}

static void test_corrupt_tables(void **state)
{
	(void)state;
	const char *text = "1,1,a.B c ()V\n2,1,a.B d (I)V\n3,1,a.C e\n40,1,a.D f ()V\n"
			   "1048574,1,android.os.Handler dispatchMessage (Landroid.os.Message;)V\n";
	uint8_t *good = NULL, *buf;
	size_t len = 0;
	sym_error err = {{0}};
	assert_int_equal(sym_methods_build(text, strlen(text), &good, &len, NULL, &err), SYM_OK);
	buf = malloc(len + 8);
	assert_non_null(buf);
	sym_methods *m = NULL;
	const symm_header *h = (const symm_header *)good;
	/* Ids 1-3 fill the direct array; 40 (4 ids of 41) and the dispatch
	 * id are sparse. */
	assert_int_equal(h->ndirect, 4);
	assert_int_equal(h->nsparse, 2);
	/* Cut anywhere: refused. */
	for (size_t cut = 0; cut < len; cut++) {
		memcpy(buf, good, cut);
		err.msg[0] = '\0';
		assert_int_not_equal(sym_methods_from_memory(buf, cut, &m, &err), SYM_OK);
		assert_null(m);
		assert_true(err.msg[0]);
	}
	/* Any byte changed: refused (the checksum). */
	for (size_t i = 0; i < len; i++) {
		memcpy(buf, good, len);
		buf[i] ^= 0x20;
		assert_int_not_equal(sym_methods_from_memory(buf, len, &m, &err), SYM_OK);
	}
	/* Forged with a right checksum: refused, or every string in bounds. */
	size_t refused = 0;
	for (size_t i = 0; i < h->strings_off; i++)
		for (int bit = 0; bit < 8; bit++) {
			memcpy(buf, good, len);
			buf[i] ^= (uint8_t)(1u << bit);
			reseal(buf, len);
			if (sym_methods_from_memory(buf, len, &m, &err) != SYM_OK) {
				refused++;
				continue;
			}
			lookups_in_bounds(m, buf, len);
			sym_methods_close(m);
		}
	assert_true(refused > 0);
	/* Offsets flipped past the strings: refused by the bounds checks. */
	memcpy(buf, good, len);
	symm_record *r = (symm_record *)(buf + h->direct_off);
	r[1].name_off = h->strings_len;
	reseal(buf, len);
	assert_int_equal(sym_methods_from_memory(buf, len, &m, &err), SYM_ERR_FORMAT);
	assert_non_null(strstr(err.msg, "record of id 1"));
	memcpy(buf, good, len);
	r = (symm_record *)(buf + h->records_off);
	r[1].desc_off = UINT32_MAX - 2;
	reseal(buf, len);
	assert_int_equal(sym_methods_from_memory(buf, len, &m, &err), SYM_ERR_FORMAT);
	assert_non_null(strstr(err.msg, "sparse record 1"));
	/* Id 0 has no method: its record must be all zero. */
	memcpy(buf, good, len);
	((symm_record *)(buf + h->direct_off))[0].name_off = 1;
	reseal(buf, len);
	assert_int_equal(sym_methods_from_memory(buf, len, &m, &err), SYM_ERR_FORMAT);
	/* Sparse ids out of order. */
	memcpy(buf, good, len);
	uint32_t *sparse = (uint32_t *)(buf + h->sparse_off);
	uint32_t swap = sparse[0];
	sparse[0] = sparse[1];
	sparse[1] = swap;
	reseal(buf, len);
	assert_int_equal(sym_methods_from_memory(buf, len, &m, &err), SYM_ERR_FORMAT);
	/* A method counted that is not there. */
	memcpy(buf, good, len);
	((symm_header *)buf)->nrecords++;
	reseal(buf, len);
	assert_int_equal(sym_methods_from_memory(buf, len, &m, &err), SYM_ERR_FORMAT);
	memcpy(buf, good, len);
	((symm_header *)buf)->version = 2;
	reseal(buf, len);
	assert_int_equal(sym_methods_from_memory(buf, len, &m, &err), SYM_ERR_UNSUPPORTED);
	/* Misaligned memory is refused, not read. */
	memcpy(buf + 4, good, len);
	assert_int_equal(sym_methods_from_memory(buf + 4, len, &m, &err), SYM_ERR_FORMAT);
	/* The untouched table still opens. */
	memcpy(buf, good, len);
	assert_int_equal(sym_methods_from_memory(buf, len, &m, &err), SYM_OK);
	assert_int_equal(sym_methods_count(m), 5);
	lookups_in_bounds(m, buf, len);
	sym_methods_close(m);
	free(buf);
	free(good);
}

/* A file on disk that is not a table, or is cut: refused at open. */
static void test_open_refuses(void **state)
{
	(void)state;
	sym_methods *m = NULL;
	sym_error err = {{0}};
	write_file(tmp_path("text.tbl"), "1,1,a.B c ()V\n", 14, false);
	assert_int_equal(sym_methods_open(tmp_path("text.tbl"), &m, &err), SYM_ERR_FORMAT);
	assert_null(m);
	uint8_t *buf = NULL;
	size_t len = 0;
	assert_int_equal(sym_methods_build("1,1,a.B c ()V\n", 14, &buf, &len, NULL, &err), SYM_OK);
	write_file(tmp_path("cut.tbl"), (const char *)buf, len - 1, false);
	assert_int_equal(sym_methods_open(tmp_path("cut.tbl"), &m, &err), SYM_ERR_FORMAT);
	write_file(tmp_path("ok.tbl"), (const char *)buf, len, false);
	assert_int_equal(sym_methods_open(tmp_path("ok.tbl"), &m, &err), SYM_OK);
	assert_string_equal(name_of(m, 1, false), "a.B.c()");
	sym_methods_close(m);
	assert_int_equal(sym_methods_open(tmp_path("absent.tbl"), &m, &err), SYM_ERR_IO);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_dispatch_builtin),
		cmocka_unit_test(test_skipped_lines),
		cmocka_unit_test(test_last_line),
		cmocka_unit_test(test_no_valid_line),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_long_line_file),
		cmocka_unit_test(test_convert_files),
		cmocka_unit_test(test_convert_errors),
		cmocka_unit_test(test_descriptors),
		cmocka_unit_test(test_render_truncation),
		cmocka_unit_test(test_corrupt_tables),
		cmocka_unit_test(test_open_refuses),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
